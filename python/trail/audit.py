"""Verdict objects: what ``trail audit ... --json`` prints, as Python objects.

Each object keeps the JSON the CLI prints in ``.json`` (a dict, equal to the CLI's output
parsed) and exposes its fields as attributes.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass
from typing import Iterable, Optional

from . import _trail


@dataclass(frozen=True)
class StepVerdict:
    """One replayed step: ``verdict`` is "match", "differs" or "unverified"."""

    step: int
    verdict: str
    requested: bool
    detail: str
    chain: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.verdict == "match"


class ReplayReport:
    """``trail audit replay --json``: every step replayed, findings, the run's attestation."""

    def __init__(self, report: dict):
        self.json = report
        self.steps = [StepVerdict(**s) for s in report["steps"]]
        self.findings = [(f["step"], f["what"]) for f in report["findings"]]

    @classmethod
    def _from_text(cls, text: str) -> "ReplayReport":
        return cls(_json.loads(text))

    @property
    def ok(self) -> bool:
        """Every requested step matches and nothing published disagrees."""
        return self.json["verdict"] == "match"

    @property
    def first_failure(self) -> Optional[int]:
        return self.json["first_failure"]

    def __getitem__(self, step: int) -> StepVerdict:
        for s in self.steps:
            if s.step == step:
                return s
        raise KeyError(f"step {step} was not replayed")

    def __iter__(self):
        return iter(self.steps)

    def __repr__(self) -> str:
        asked = [s.step for s in self.steps if s.requested]
        span = f"{asked[0]}..{asked[-1]}" if asked else "none"
        return (f"<ReplayReport {self.json['verdict']}: steps {span} of {self.json['run']!r}, "
                f"{len(self.findings)} findings>")


class _JsonView:
    """A CLI JSON object (``.json``) whose keys read as attributes."""

    def __init__(self, j: dict):
        self.json = j

    def __getattr__(self, name):
        if name == "json":  # not set yet (e.g. while unpickling)
            raise AttributeError(name)
        try:
            return self.json[name]
        except KeyError:
            raise AttributeError(name) from None


class Divergence(_JsonView):
    """``trail audit bisect --json``: the first operation where two traces differ; its keys
    (entry, op, layer, tensor, shape, hash_a, hash_b, element, note) are attributes."""

    def __repr__(self) -> str:
        if not self.diverges:
            return "<Divergence: the traces agree>"
        return (f"<Divergence at entry {self.json['entry']}: {self.json['op']} "
                f"{self.json['tensor']} (layer {self.json['layer']})>")


@dataclass(frozen=True)
class Attestation:
    """An auditor's signed attestation whose signature verified."""

    path: str
    signer: str  # the public key's fingerprint
    statement: dict

    def __repr__(self) -> str:
        st = self.statement
        return (f"<Attestation of auditor {st['auditor']} by {self.signer}: "
                f"{len(st['steps'])} steps>")


def read_attestation(path) -> Attestation:
    """Parses an attestation and verifies its signature (TrailError when it does not)."""
    return Attestation(**_json.loads(_trail.read_attestation(str(path))))


class CollectReport(_JsonView):
    """``trail audit collect --json``: coverage, disagreements and the run's verdict; its keys
    are attributes."""

    def __repr__(self) -> str:
        return f"<CollectReport {self.verdict}>"


def collect(run, plan, attestations: Iterable, keys) -> CollectReport:
    """Checks auditors' attestations of a run made under ``plan`` against the trusted public
    keys in the folder ``keys`` (``trail audit collect``)."""
    paths = [str(a) for a in attestations]
    return CollectReport(_json.loads(_trail.collect(str(run), str(plan), paths, str(keys))))
