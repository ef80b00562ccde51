"""Checkpoints and safetensors files as numpy arrays that map the file: nothing is copied, and
only the pages an array's reader touches become resident."""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from . import _trail

_DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I8": "i1", "U16": "<u2", "U32": "<u4"}


class SafetensorsFile(Mapping):
    """A safetensors file: a read-only mapping of tensor name to a numpy view of the file.

    The header is checked by trail's parser (offsets inside the file, no overlap, sizes that
    match dtype and shape), so a damaged file raises TrailError before any array exists.
    """

    def __init__(self, path):
        self.path = str(path)
        layout = _trail.safetensors_layout(self.path)
        self.metadata: dict = dict(layout["metadata"])
        self._entries = {name: (dtype, tuple(shape), offset, nbytes)
                         for name, dtype, shape, offset, nbytes in layout["tensors"]}
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size != layout["file_size"]:
                raise _trail.TrailError(f"{self.path}: the file changed while it was opened")
            self._map: Optional[mmap.mmap] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._arrays: dict = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._entries:
            raise KeyError(f"{self.path} has no tensor {name!r}")
        if name not in self._arrays:
            if self._map is None:
                raise ValueError(f"{self.path} is closed")
            dtype, shape, offset, nbytes = self._entries[name]
            dt = np.dtype(_DTYPES[dtype])
            count = nbytes // dt.itemsize
            if count == 0:
                a = np.empty(shape, dt)
                a.flags.writeable = False
            else:
                a = np.frombuffer(self._map, dtype=dt, count=count, offset=offset).reshape(shape)
            self._arrays[name] = a
        return self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def nbytes(self) -> int:
        return sum(e[3] for e in self._entries.values())

    def close(self) -> None:
        """Drops this object's views; the mapping itself goes when no array uses it."""
        self._arrays.clear()
        self._map = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return (f"<SafetensorsFile {self.path!r}: {len(self)} tensors, "
                f"{self.nbytes() / 1e6:.1f} MB mapped>")


def load_safetensors(path) -> SafetensorsFile:
    """Opens a safetensors file; its tensors are numpy views of the mapped file."""
    return SafetensorsFile(path)


class Checkpoint:
    """A run's checkpoint: ``meta`` (meta.json), ``params`` (model.safetensors) and ``optim``
    (optim.safetensors, or None when absent), each array a view of the mapped file.

    With ``verify`` (the default) both files are first checked against the SHA-256 meta.json
    records, as ``trail train verify`` does; that reads the files once, outside this process's
    memory.
    """

    def __init__(self, path, verify: bool = True):
        self.path = Path(path)
        if not (self.path / "meta.json").is_file():
            raise FileNotFoundError(f"{self.path} is not a checkpoint: no meta.json")
        if verify:
            _trail.verify_checkpoint(str(self.path))
        self.meta: dict = json.loads((self.path / "meta.json").read_text())
        self.step: int = self.meta["step"]
        self.params = SafetensorsFile(self.path / "model.safetensors")
        optim = self.path / "optim.safetensors"
        self.optim = SafetensorsFile(optim) if optim.exists() else None

    def close(self) -> None:
        self.params.close()
        if self.optim is not None:
            self.optim.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"<Checkpoint step {self.step} at {str(self.path)!r}: {len(self.params)} tensors>"
