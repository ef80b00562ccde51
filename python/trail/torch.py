"""trail's canonical stream as a PyTorch dataset (docs/python.md, "PyTorch").

``CanonicalDataset`` yields, for each training step, the windows that one logical
data-parallel rank owns in it (w mod world_size == rank, as trail's trainer shards), packed as
trail packs them. Its ``state_dict()`` is one integer, the window cursor at the next step's
start: the same number for every rank and every world size, so a trainer that saves it resumes,
reshards (more or fewer ranks) and is audited against a trail trajectory the way trail's own
trainer is.
"""

from __future__ import annotations

from typing import Iterator, Optional

import torch
from torch.utils.data import IterableDataset, get_worker_info

from .data import Stream


class CanonicalDataset(IterableDataset):
    """Steps of the canonical stream for one logical rank.

    Each item is a dict: ``inputs``, ``labels`` (-100 where ignored), ``positions``,
    ``doc_ids``, ``key_valid`` and ``loss_mask`` as tensors [n, L] (n: the rank's windows in the
    step, L its sequence length); ``windows`` (their global indices), ``step`` and
    ``step_targets`` (the targets of the whole step over every rank: divide the summed loss by
    it to get trail's loss). Use it with ``DataLoader(dataset, batch_size=None)``; a DataLoader
    with several workers is refused, since the cursor must follow the order of consumption.
    """

    def __init__(self, manifest, rank: int = 0, world_size: int = 1, *,
                 seed: Optional[int] = None, max_steps: Optional[int] = None,
                 verify: bool = True):
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in [0, world_size = {world_size})")
        self.manifest, self.rank, self.world_size = str(manifest), rank, world_size
        self.seed, self.max_steps, self.verify = seed, max_steps, verify
        self._cursor = 0
        self._stream: Optional[Stream] = None

    def stream(self) -> Stream:
        if self._stream is None:
            self._stream = Stream(self.manifest, seed=self.seed, verify=self.verify)
        return self._stream

    def state_dict(self) -> dict:
        """{"cursor": the first window of the next step}: where a resumed run continues."""
        return {"cursor": self._cursor}

    def load_state_dict(self, state: dict) -> None:
        cursor = state.get("cursor")
        if not isinstance(cursor, int) or cursor < 0:
            raise ValueError(f"a CanonicalDataset state is {{'cursor': int >= 0}}, not {state!r}")
        s = self.stream()
        step = s.step_of_window(cursor)
        if s.step_windows(step).start != cursor:
            raise ValueError(f"cursor {cursor} is inside step {step} (windows "
                             f"{s.step_windows(step)}), not at the start of a step")
        self._cursor = cursor

    def _done(self, step: int, first_window: int) -> bool:
        if self.max_steps is not None and step >= self.max_steps:
            return True
        n = self.stream().num_windows
        return n is not None and first_window >= n

    def __iter__(self) -> Iterator[dict]:
        info = get_worker_info()
        if info is not None and info.num_workers > 1:
            raise ValueError("CanonicalDataset needs DataLoader(num_workers=0 or 1): the cursor "
                             "follows the order in which steps are consumed")
        s = self.stream()
        step = s.step_of_window(self._cursor)
        while not self._done(step, s.step_windows(step).start):
            b = s.rank_batch(step, self.rank, self.world_size)
            item = {k: torch.from_numpy(b[k]) for k in
                    ("inputs", "labels", "positions", "doc_ids", "key_valid", "loss_mask")}
            item.update(windows=list(b["windows"]), step=step, step_targets=s.step_targets(step))
            self._cursor = s.step_windows(step).stop
            step += 1
            yield item

    def __repr__(self) -> str:
        return (f"<CanonicalDataset {self.manifest!r}: rank {self.rank} of {self.world_size}, "
                f"cursor {self._cursor}>")
