"""The canonical data stream: window ``w`` as a pure function of (manifest, seed, w), packed the
way trail's trainer packs it, with its lineage back to shards and documents (docs/data.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import _trail

_UNLIMITED = 2**64 - 1


@dataclass
class Window:
    """One window as a training row: ``inputs``, ``labels`` (-100 where ignored),
    ``positions``, ``doc_ids``, ``key_valid`` and ``loss_mask``, each of L entries; ``tokens``
    and ``target_ok``, the L+1 tokens it was packed from."""

    window: int
    step: int
    real_tokens: int
    inputs: np.ndarray
    labels: np.ndarray
    positions: np.ndarray
    doc_ids: np.ndarray
    key_valid: np.ndarray
    loss_mask: np.ndarray
    tokens: np.ndarray
    target_ok: np.ndarray
    lineage: list = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"<Window {self.window} (step {self.step}): {self.real_tokens} real tokens of "
                f"{len(self.tokens)}, {len(self.lineage)} document pieces>")


class Stream:
    """The canonical stream of a data manifest.

    ``seed`` replaces the manifest's stream seed (None: the manifest's). Opening rehashes every
    shard against the manifest unless ``verify`` is False. Not safe to share between threads:
    give each its own Stream (the CLI's ``trail data inspect`` reads the same windows).
    """

    def __init__(self, manifest, seed: Optional[int] = None, verify: bool = True):
        self.manifest_path = str(manifest)
        self._s = _trail.Stream(self.manifest_path, seed, verify)

    @property
    def seed(self) -> int:
        return self._s.seed

    @property
    def num_windows(self) -> Optional[int]:
        """Windows in the stream; None for an endless one (a source sampled with replacement)."""
        n = self._s.num_windows
        return None if n == _UNLIMITED else n

    def __len__(self) -> int:
        n = self.num_windows
        if n is None:
            raise TypeError("an endless stream has no length")
        return n

    @property
    def manifest(self) -> dict:
        return json.loads(self._s.manifest_json())

    @property
    def micro_batch_windows(self) -> int:
        return self._s.micro_batch_windows

    def window(self, w: int, lineage: bool = True) -> Window:
        """Window ``w``, packed; with its lineage (shard, document, offsets) unless told not."""
        if w < 0:
            raise IndexError("window indices are non-negative")
        d = self._s.window(w)
        pieces = self.lineage(w) if lineage else []
        return Window(lineage=pieces, **d)

    __getitem__ = window

    def lineage(self, w: int) -> list:
        """The document pieces of window ``w``: source, shard, document and key, chunk, offset
        in the document, tokens, and where they lie in the window."""
        return self.inspect(w)["documents"]

    def inspect(self, w: int) -> dict:
        """``trail data inspect --window W --json``."""
        return json.loads(self._s.inspect(w))

    def inspect_step(self, step: int, ranks: int = 1, rank: int = -1) -> dict:
        """``trail data inspect --step S --ranks K [--rank k] --json``."""
        return json.loads(self._s.inspect_step(step, ranks, rank))

    def step_windows(self, step: int) -> range:
        """The windows step ``step`` consumes (the batch schedule's contiguous range)."""
        begin, end = self._s.step_windows(step)
        return range(begin, end)

    def step_of_window(self, w: int) -> int:
        return self._s.step_of_window(w)

    def rank_windows(self, step: int, rank: int, world_size: int) -> list:
        """The windows of ``step`` that logical rank ``rank`` of ``world_size`` owns: w with
        w mod world_size == rank, ascending, as trail's trainer shards."""
        return self._s.rank_windows(step, rank, world_size)

    def step_targets(self, step: int) -> int:
        """B_target of the whole step (every rank): trail's loss normalizer."""
        return self._s.step_targets(step)

    def rank_batch(self, step: int, rank: int = 0, world_size: int = 1) -> dict:
        """The rank's windows of ``step`` packed as rows: arrays [n, L] and ``windows``."""
        return self._s.rank_batch(step, rank, world_size)

    # Finding training data (docs/data.md §9).

    def _index(self, index) -> str:
        from pathlib import Path
        return str(index) if index is not None else str(Path(self.manifest_path).parent / "find.idx")

    def build_index(self, path=None, gram: int = 13, window: int = 38) -> dict:
        """``trail data index``: the find index of the training documents (default: find.idx
        beside the manifest); returns its documents, tokens, grams, bytes and seconds."""
        return json.loads(self._s.build_index(self._index(path), gram, window))

    def find(self, tokens, index=None, steps: int = 0, min_tokens: int = 50) -> dict:
        """``trail data find --tokens ... --json``: where the ids occur in the training documents
        (same documents, shared runs of at least ``min_tokens``) and the readings of each run by
        steps [0, steps)."""
        return json.loads(self._s.find([int(t) for t in tokens], self._index(index), min_tokens,
                                       steps))

    def find_key(self, key: str, steps: int = 0) -> dict:
        """``trail data find --key K --json``: a training document by lineage key, with its
        readings."""
        return json.loads(self._s.find_key(key, steps))

    def readings(self, source: int, shard: int, doc: int, begin: int = 0, end: int = 2**64 - 1,
                 steps: int = 0) -> list:
        """Every window of steps [0, steps) that read document tokens [begin, end) of a
        training document (docs/data.md §9.1)."""
        return json.loads(self._s.readings(source, shard, doc, begin, end, steps))

    def __repr__(self) -> str:
        n = self.num_windows
        return (f"<Stream {self.manifest_path!r}: seed {self.seed}, "
                f"{'endless' if n is None else f'{n} windows'}>")


def verify_proof(proof, bundle, cache=None, trust_publishers=(), trainer=None) -> dict:
    """``trail data verify-proof --json``: a membership or absence proof (a path, or its JSON
    text) checked against the publication at ``bundle`` (a folder or URL). Returns ``ok``,
    ``root``, ``signer``, ``binding``, ``problems``, ``fetched_bytes`` and ``bundle_bytes``."""
    from pathlib import Path
    text = proof if isinstance(proof, str) and proof.lstrip().startswith("{") else Path(proof).read_text()
    return json.loads(_trail.verify_data_proof(text, str(bundle), str(cache or ""),
                                               [str(k) for k in trust_publishers],
                                               str(trainer or "")))
