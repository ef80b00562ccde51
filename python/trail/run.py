"""A run directory (docs/training.md, "A run on disk") from Python: its recipe, manifest,
trajectory, metrics and checkpoints, and the audits ``trail audit`` runs on it."""

from __future__ import annotations

import json
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

import numpy as np

from . import _trail
from .audit import Attestation, CollectReport, Divergence, ReplayReport, collect
from .checkpoint import Checkpoint


def _read_jsonl(path: Path) -> Iterator[dict]:
    """The complete lines of a JSONL file, one dict each (a torn last line is not returned)."""
    with open(path, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                return  # a crash mid-write; trail's readers drop it too
            yield json.loads(line)


@dataclass(frozen=True)
class RunCheck:
    """``trail train verify``: the run's files checked without executing a step."""

    ok: bool
    steps: int  # trajectory records chained from the genesis hash
    checkpoints: list  # steps of the checkpoints whose files verified
    problems: list  # each names the file at fault


class Trace:
    """An operation trace (format trail.trace.v1): the hash of every op's output in a step."""

    def __init__(self, path):
        self.path = str(path)
        t = json.loads(_trail.read_trace(self.path))
        self.step: int = t["step"]
        self.genesis: str = t["genesis"]
        self.chain: str = t["chain"]
        self.backend: str = t["backend"]
        self.ops: list = t["ops"]

    def __len__(self) -> int:
        return len(self.ops)

    def __getitem__(self, i: int) -> dict:
        return self.ops[i]

    def values(self, i: int) -> np.ndarray:
        """The output values of entry i, when the trace captured them."""
        op = self.ops[i]
        if "values" not in op:
            raise ValueError(f"entry {i} of {self.path} holds a hash only (trace with capture=)")
        return np.frombuffer(bytes.fromhex(op["values"]), dtype="<f4").reshape(op["shape"])

    def __repr__(self) -> str:
        return f"<Trace of step {self.step}: {len(self)} entries, {self.backend}>"


def bisect(a, b, run=None, data=None, strict: bool = False) -> Divergence:
    """``trail audit bisect``: the first operation where two traces of a step diverge. With
    ``run``, the step is re-run here to name the first differing element; with ``strict``,
    ``a`` must be the trace the run's trainer signed (TrailError otherwise)."""
    a, b = (x.path if isinstance(x, Trace) else str(x) for x in (a, b))
    return Divergence(json.loads(_trail.bisect(a, b, str(run or ""), str(data or ""), strict)))


class Run:
    """A trail run directory. Opening reads run.json; everything else is read when asked for.

    Use it as a context manager to close the checkpoints it opened.
    """

    def __init__(self, path):
        self.path = Path(path)
        if not (self.path / "run.json").is_file():
            raise FileNotFoundError(f"{self.path} is not a trail run: it has no run.json")
        self.info: dict = json.loads((self.path / "run.json").read_text())
        self._open: list = []

    # ---- What the run is.
    @property
    def recipe(self) -> dict:
        return tomllib.loads((self.path / "recipe.toml").read_text())

    @property
    def manifest_path(self) -> Optional[Path]:
        m = self.info.get("data_manifest")
        return Path(m) if m else None

    @property
    def manifest(self) -> dict:
        if self.manifest_path is None:
            raise FileNotFoundError(f"{self.path}/run.json names no data manifest")
        return json.loads(self.manifest_path.read_text())

    @property
    def genesis(self) -> str:
        return self.info["genesis"]

    @property
    def attestation(self) -> Optional[dict]:
        p = self.path / "attestation.json"
        return json.loads(p.read_text()) if p.exists() else None

    # ---- What it recorded.
    def trajectory(self) -> Iterator[dict]:
        """The trajectory's records, one dict per step, read lazily. The chain is not checked
        here: ``verify()`` checks it."""
        return _read_jsonl(self.path / "trajectory.jsonl")

    def trajectory_array(self) -> np.ndarray:
        """The trajectory as a numpy structured array, one row per step (see _trajectory_dtype:
        every ``*_bits`` field as the uint32 it encodes)."""
        from ._records import records_to_array
        return records_to_array(list(self.trajectory()))

    def metrics(self) -> Iterator[dict]:
        """metrics.jsonl: one dict per executed step."""
        return _read_jsonl(self.path / "metrics.jsonl")

    @property
    def checkpoints(self) -> list:
        """Steps of the checkpoints present, ascending."""
        return _trail.list_checkpoints(str(self.path))

    def checkpoint(self, step: Optional[int] = None, verify: bool = True) -> Checkpoint:
        """The checkpoint at ``step`` (None: the newest), its arrays mapped from the files."""
        steps = self.checkpoints
        if not steps:
            raise FileNotFoundError(f"{self.path} has no checkpoints")
        if step is None:
            step = steps[-1]
        if step not in steps:
            raise KeyError(f"{self.path} has no checkpoint at step {step}; it has {steps}")
        c = Checkpoint(_trail.checkpoint_dir(str(self.path), step), verify=verify)
        self._open.append(c)
        return c

    # ---- Audits.
    def verify(self) -> RunCheck:
        """``trail train verify``: hashes, the trajectory's chain, every checkpoint's files."""
        return RunCheck(**json.loads(_trail.verify_run(str(self.path))))

    def replay(self, steps: Iterable[int], data=None) -> ReplayReport:
        """``trail audit replay --json``: replays the steps here and compares every recorded
        field. ``data``: a copy of the run's manifest published elsewhere."""
        steps = sorted(set(int(s) for s in steps))
        return ReplayReport._from_text(_trail.replay(str(self.path), steps, str(data or "")))

    def trace(self, step: int, out=None, capture: Optional[int] = None, data=None) -> Trace:
        """``trail audit trace``: replays ``step`` recording every op's output hash (and the
        values of entry ``capture``) into ``out`` (default: a temporary file)."""
        if out is None:
            out = Path(tempfile.mkdtemp(prefix="trail-trace-")) / f"step_{step}.trace"
        cap = -1 if capture is None else capture
        _trail.trace(str(self.path), step, str(out), cap, str(data or ""))
        return Trace(out)

    def recorded_trace(self, step: int) -> Trace:
        """The trace the trainer recorded for ``step`` (``--trace-every``)."""
        return Trace(_trail.trace_path(str(self.path), step))

    def bisect(self, a, b, data=None, strict: bool = False) -> Divergence:
        """``trail audit bisect --run``: as ``trail.bisect``, naming the element by re-running."""
        return bisect(a, b, run=self.path, data=data, strict=strict)

    def plan(self, auditors: int, redundancy: int = 1, sample: Optional[int] = None,
             out=None, segments: int = 0) -> dict:
        """``trail audit plan``: steps assigned to auditors, derived from the final chain
        (contiguous segments of ``segments`` steps each when given)."""
        text = _trail.plan(str(self.path), auditors, redundancy, sample or 0, segments)
        if out is not None:
            Path(out).write_text(json.dumps(json.loads(text), indent=2) + "\n")
        return json.loads(text)

    def certify(self, plan, key, auditor: int, out=None, data=None):
        """``trail audit certify``: replays the plan's steps for ``auditor`` and signs what it
        found. Returns (ReplayReport, the attestation as a dict); writes it to ``out``."""
        report, att = _trail.certify(str(self.path), str(plan), str(key), auditor,
                                     str(data or ""))
        att = json.loads(att)
        if out is not None:
            Path(out).write_text(json.dumps(att, indent=2) + "\n")
        return ReplayReport._from_text(report), att

    def collect(self, plan, attestations: Iterable, keys) -> CollectReport:
        """``trail audit collect``: the auditors' attestations added up."""
        return collect(self.path, plan, attestations, keys)

    def close(self) -> None:
        for c in self._open:
            c.close()
        self._open.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return (f"<Run {str(self.path)!r}: genesis {self.genesis[:12]}…, "
                f"{self.info.get('parameters', '?')} parameters>")


__all__ = ["Attestation", "Run", "RunCheck", "Trace", "bisect"]
