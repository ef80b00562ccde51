"""JSON records (one dict per step) as a numpy structured array.

A field's dtype follows its values: ``*_bits`` hex strings become the uint32 they encode (the
float's bits, exactly), integers int64, other numbers float64, booleans bool, lists of n
integers an (n,) int64 subarray, strings (hashes, reasons) unicode with "" for null.
"""

from __future__ import annotations

import numpy as np


def _field_dtype(key: str, values: list):
    present = [v for v in values if v is not None]
    if key.endswith("_bits"):
        return np.uint32
    if present and all(isinstance(v, bool) for v in present):
        return np.bool_
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return np.int64
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.float64
    if present and all(isinstance(v, list) for v in present):
        n = len(present[0])
        if all(len(v) == n and all(isinstance(x, int) for x in v) for v in present):
            return (np.int64, (n,))
    if all(isinstance(v, str) for v in present):
        return f"U{max([len(v) for v in present] + [1])}"
    return object


def _convert(key: str, v):
    if key.endswith("_bits"):
        return 0 if v is None else int(v, 16)
    return "" if v is None else v


def records_to_array(records: list) -> np.ndarray:
    keys: list = []
    for r in records:
        keys.extend(k for k in r if k not in keys)
    dtype = [(k, _field_dtype(k, [r.get(k) for r in records])) for k in keys]
    out = np.zeros(len(records), dtype=dtype)
    for i, r in enumerate(records):
        for k in keys:
            if k in r:
                out[k][i] = _convert(k, r[k])
    return out
