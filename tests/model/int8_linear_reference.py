#!/usr/bin/python3
"""Float64 PyTorch reference of trail's int8 linear layer (src/repops/int8_linear.h).

Usage: int8_linear_reference.py IN.safetensors OUT.safetensors

IN holds x [M,K], w [K,N], dy [M,N] (float32) and trail's per-channel step sizes `step` [N].
OUT receives, as float64:
  step64        2·mean|w[:,j]|/√127 in float64 (trail's is a float32 canonical sum: compared
                with a tolerance, then trail's value defines the grid, see below)
  qx, rx, qw    the quantized input and weight and the input's per-token scales
  acc           Σ_p qx·qw, exact
  y             (acc · rx) · step in float64
  fp32.dx, fp32.dw       dY·Q(W)ᵀ and Q(X)ᵀ·dY (+0 where |w/step| > 127), float64
  int8.qg, int8.u, int8.acc_dx, int8.dx    the int8 backward's gradient quantization per token
  int8.qh, int8.v, int8.acc_dw, int8.dw    ... and per output channel, their exact sums, results
  fp32.dstep, int8.dstep  the LSQ gradient of learned step sizes, from each mode's dŴ before
                          the clip mask: Σ_p dŴ·e / √(K·127), e = q - w/s inside, q clipped
Every quantization decision (a scale, a quotient, its rounding) is made in float32 arithmetic,
as trail makes it: a float64 operation on float32 operands rounded once to float32 gives the
correctly rounded float32 result for ×, ÷, so the integer grids must agree exactly. Everything
after the integers is float64.
"""
import math
import sys

import numpy as np
import torch

from model_reference import read_safetensors, write_safetensors

QMAX = 127.0


def f32(t):
    return t.to(torch.float32).to(torch.float64)


def quantize(x, scale):
    """round-half-even(f32(x / scale)) clamped to ±127; 0 where the quotient is NaN."""
    v = f32(x / scale)
    q = torch.clamp(torch.round(v), -QMAX, QMAX)
    return torch.where(torch.isnan(v), torch.zeros_like(q), q)


def absmax_rows(x):
    scale = f32(x.abs().max(dim=1, keepdim=True).values / QMAX)
    return quantize(x, scale), scale[:, 0]


def main():
    t, _ = read_safetensors(sys.argv[1])
    x, w, dy = (torch.tensor(t[k].astype(np.float64)) for k in ("x", "w", "dy"))
    step = torch.tensor(t["step"].astype(np.float64))
    out = {"step64": w.abs().mean(dim=0) * 2 / math.sqrt(QMAX)}

    qw = quantize(w, step[None, :])          # [K, N]
    qx, rx = absmax_rows(x)                  # [M, K], [M]
    acc = qx @ qw
    out.update(qx=qx, rx=rx, qw=qw, acc=acc, y=acc * rx[:, None] * step[None, :])
    clipped = f32(w / step[None, :]).abs() > QMAX
    Wq, Xq = qw * step[None, :], qx * rx[:, None]
    out["fp32.dx"] = dy @ Wq.t()
    dw_fp32 = Xq.t() @ dy
    out["fp32.dw"] = torch.where(clipped, torch.zeros_like(w), dw_fp32)
    v_w = f32(w / step[None, :])
    e = torch.where(clipped, qw, qw - v_w)
    lsq_scale = 1.0 / math.sqrt(w.shape[0] * QMAX)
    out["fp32.dstep"] = (dw_fp32 * e).sum(dim=0) * lsq_scale

    g = f32(dy * f32(step)[None, :])         # fold the channel scale into the gradient
    qg, u = absmax_rows(g)
    acc_dx = qg @ qw.t()
    out.update({"int8.qg": qg, "int8.u": u, "int8.acc_dx": acc_dx,
                "int8.dx": acc_dx * u[:, None]})
    h = f32(rx[:, None] * dy)                 # fold the token scale into the gradient
    qh_t, v = absmax_rows(h.t())              # per output channel: rows of hᵀ
    acc_dw = qx.t() @ qh_t.t()
    qh = qh_t.t()                             # [M, N], the layout trail keeps it in
    dw_int8 = acc_dw * v[None, :]
    out.update({"int8.qh": qh, "int8.v": v, "int8.acc_dw": acc_dw,
                "int8.dw": torch.where(clipped, torch.zeros_like(w), dw_int8),
                "int8.dstep": (dw_int8 * e).sum(dim=0) * lsq_scale})
    write_safetensors(sys.argv[2], {k: v.numpy() for k, v in out.items()})


if __name__ == "__main__":
    main()
