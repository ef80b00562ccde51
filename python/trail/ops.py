"""RepOps on numpy arrays, with the bits of trail's C++ backends (docs/repops.md).

Every op takes C-contiguous float32 arrays (int32 token ids and targets, uint8 masks) and
raises TypeError for another dtype or layout and ValueError for a wrong shape; nothing is
converted silently, since a converted input would not be the bits an auditor means to check.
The results equal the CPU backend's on every SIMD target (and the golden digests of
goldens/repops.txt), so one operation of a trace can be recomputed here.
"""

from ._trail import ops as _ops

__all__ = [
    "adamw_step", "attention", "attention_backward", "axpy", "clip_grad_norm", "cross_entropy",
    "cross_entropy_backward", "dot", "fill_normal", "fill_uniform", "gelu", "gelu_backward",
    "global_grad_norm", "matmul", "matmul_at", "matmul_bt", "max", "pow_int", "rmsnorm",
    "rmsnorm_backward", "softmax", "softmax_backward", "sum", "sum_sq", "swiglu",
    "swiglu_backward", "tensor_digest",
]

# The C++ functions themselves, so their docstrings and errors are the ones documented.
globals().update({name: getattr(_ops, name) for name in __all__})
