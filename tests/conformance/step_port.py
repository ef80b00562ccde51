#!/usr/bin/env python3
"""The golden training runs recomputed, step by step, from the specification alone.

A second implementation of docs/step.md with docs/repops.md's ops (§1 binary32 with FMA where
written, §2 canonical reductions, §3 GEMM chains, §4 trail's Exp/Log/Tanh/Sin/Cos, §5 the layer
ops and int8 linear layers, §6 Philox, §7 state hashes) in numpy, written from those pages and
using no trail code or library (a maintainer wrote it; an outside port from the docs is the real
test). Its inputs are each case's recipe (tests/conformance/vectors/training/<case>.toml,
defaults from step.md §1) and the micro-batches rebuilt from the stream spec (check_vectors.py,
stream_port.py). For all eleven golden runs — mesh_1x1x2 (SwiGLU, QK-norm, embedding norm,
windows, tied head, z-loss), mesh_3x2x2 (GELU, untied head, 3 replicas x 2 shards x 2
micro-batches, weight decay, WSD, the spike protocol armed), both in int8 QAT (int8 and fp32
backward GEMMs), int8 with learned LSQ step sizes, and lifecycle_2x1x1 (a mixture phase, a
length switch to L = 24, a batch-size change and padding rows), gqa_1x1x2 and mqa_3x2x2
(grouped-query and multi-query attention), qk_gain_1x1x2 (QK-norm with learned gains) and
olmo2_1x1x2 (OLMo 2's post-norm and QK-norm over whole projections) and qwen3_1x1x2 (heads
wider than d_model / n_heads) — it initializes the
parameters, runs every step's micro-batches forward and backward, folds the logical ranks
(shard sums, TreeFold), skips, clips and applies AdamW, and checks: the initial tensors and
state hash; for mesh_1x1x2's step 0 every operation's output digest in the trace (the first
that differs is named); every record's bits and gradient hash; the parameter and optimizer state
hashes after every step; and each record rebuilt from the port's own values and chained from
the genesis, ending on goldens/training.txt.

    step_port.py VECTORS_DIR GOLDENS_DIR     exit 1 on the first disagreement

numpy's float32 add, multiply, divide and sqrt are single correctly rounded operations; the
fused multiply-add is formed exactly in float64 and rounded once to binary32 (round to odd).
"""
import hashlib
import json
import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_vectors as cv  # noqa: E402
import trajectory_port as tp  # noqa: E402
import stream_port as sp  # noqa: E402
import state_hash_port as sh  # noqa: E402

F = np.float32
FLT_MIN = F(1.17549435e-38)
np.seterr(all="ignore")


def f32(x):
    return np.asarray(x, dtype=np.float32)


# ---- repops.md §1: fma(a, b, c) with one rounding ---------------------------------------------
def fma(a, b, c):
    """a*b is exact in float64; the sum's rounding error (TwoSum) decides a round-to-odd result,
    which rounds to the correctly rounded binary32 value (53 >= 2*24 + 2)."""
    a, b, c = np.broadcast_arrays(f32(a), f32(b), f32(c))
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    bits = np.array(s, dtype=np.float64).view(np.int64)
    inexact = (err != 0) & np.isfinite(s)
    toward_zero = inexact & ((err < 0) != (s < 0))  # |exact| < |s|: step s toward zero
    bits = np.where(toward_zero, bits - 1, bits)
    bits = np.where(inexact, bits | 1, bits)
    return bits.view(np.float64).astype(np.float32)


# ---- repops.md §2: Sum, SumSq, Dot, Max over the last axis, 16 partials ----------------------
def _reduce(x, step, combine, init):
    x = f32(x)
    n = x.shape[-1]
    pad = (-n) % 16
    if pad:
        x = np.concatenate([x, np.full(x.shape[:-1] + (pad,), init, np.float32)], axis=-1)
    x = x.reshape(x.shape[:-1] + (-1, 16))
    p = np.full(x.shape[:-2] + (16,), init, np.float32)
    for i in range(x.shape[-2]):
        p = step(p, x[..., i, :])
    for w in (8, 4, 2, 1):
        p = np.concatenate([combine(p[..., :w], p[..., w:2 * w]), p[..., w:]], axis=-1)
    return p[..., 0]


def max2(a, b):
    return np.where((b > a) | np.isnan(b), b, a)


def rsum(x):
    return _reduce(x, lambda p, v: p + v, lambda l, r: l + r, F(0))


def rsumsq(x):
    return _reduce(x, lambda p, v: fma(v, v, p), lambda l, r: l + r, F(0))


def _dot(x, y):
    n = x.shape[-1]
    pad = (-n) % 16
    if pad:
        z = np.zeros(x.shape[:-1] + (pad,), np.float32)
        x, y = np.concatenate([x, z], -1), np.concatenate([y, z], -1)
    x = x.reshape(x.shape[:-1] + (-1, 16))
    y = y.reshape(y.shape[:-1] + (-1, 16))
    p = np.zeros(x.shape[:-2] + (16,), np.float32)
    for i in range(x.shape[-2]):
        p = fma(x[..., i, :], y[..., i, :], p)
    for w in (8, 4, 2, 1):
        p = np.concatenate([p[..., :w] + p[..., w:2 * w], p[..., w:]], axis=-1)
    return p[..., 0]


def rmax(x):
    return _reduce(x, max2, max2, F(-np.inf))


# ---- repops.md §3: GEMM, one FMA chain per output in ascending p -----------------------------
def matmul(a, b, c=None):
    """C = A[M,K]·B[K,N], continuing C's chains when given (accumulate)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32) if c is None else f32(c).copy()
    for p in range(a.shape[1]):
        acc = fma(a[:, p:p + 1], b[p:p + 1, :], acc)
    return acc


def matmul_bt(a, b, c=None):  # A·Bᵀ with B stored [N, K]
    return matmul(a, np.ascontiguousarray(b.T), c)


def matmul_at(a, b):  # Aᵀ·B with A stored [K, M]
    return matmul(np.ascontiguousarray(a.T), b)


# ---- repops.md §4: trail's elementary functions ---------------------------------------------
def rne(v):
    return (v + F(12582912)) - F(12582912)


def exp(x):
    x = f32(x)
    hi, lo = F(88.72283935546875), F(-87.33654022216796875)
    xc = np.where(np.isnan(x), F(0), np.clip(x, lo, hi))
    k = rne(xc * F(1.44269502162933349609375))
    r = fma(k, F(-0.693359375), xc)
    r = fma(k, F(2.12194440e-4), r)
    q = np.full_like(r, F(1.9875691500e-4))
    for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
              5.0000001201e-1):
        q = fma(q, r, F(c))
    y = fma(q, r * r, r) + F(1)
    ki = k.astype(np.int32)
    k1 = ki >> 1
    k2 = ki - k1
    out = (y * np.ldexp(F(1), k1).astype(np.float32)) * np.ldexp(F(1), k2).astype(np.float32)
    out = np.where(x > hi, F(np.inf), out)
    out = np.where(x < lo, F(0), out)
    return np.where(np.isnan(x), x, out).astype(np.float32)


def log(x):
    x = f32(x)
    small = x < FLT_MIN
    xs = np.where(small, x * F(2.0 ** 23), x).astype(np.float32)
    e0 = np.where(small, -23, 0).astype(np.int32)
    i = xs.view(np.int32) + np.int32(0x3F800000 - 0x3F3504F3)
    k = (i >> 23) - 127 + e0
    m = ((i & 0x007FFFFF) + np.int32(0x3F3504F3)).astype(np.int32).view(np.float32)
    f = m - F(1)
    s = f / (F(2) + f)
    z = s * s
    w = z * z
    t1 = w * (F(0.40000972152) + w * F(0.24279078841))
    t2 = z * (F(0.66666662693) + w * F(0.28498786688))
    R = t2 + t1
    h = (F(0.5) * f) * f
    kf = k.astype(np.float32)
    lo = s * (h + R) + kf * F(9.0580006145e-06)
    out = kf * F(6.9313812256e-01) - ((h - lo) - f)
    out = np.where(x == F(np.inf), F(np.inf), out)
    out = np.where(x == 0, F(-np.inf), out)
    return np.where((x < 0) | np.isnan(x), F(np.nan), out).astype(np.float32)


def _sincos(x):
    x = f32(x)
    q = rne(x * F(0.636619746685028076171875))
    r = x - q * F(1.5703125)
    r = r - q * F(4.837512969970703125e-4)
    r = fma(q, F(-7.549790126404332e-08), r)
    r = fma(q, F(1.7151245100058819e-15), r)
    z = r * r
    sin_r = fma(r * z, fma(fma(F(-1.9515295891e-4), z, F(8.3321608736e-3)), z,
                           F(-1.6666654611e-1)), r)
    cos_r = fma(z * z, fma(fma(F(2.443315711809948e-5), z, F(-1.388731625493765e-3)), z,
                           F(4.166664568298827e-2)), fma(F(-0.5), z, F(1)))
    n = q.astype(np.int64) & 3
    sin = np.choose(n, [sin_r, cos_r, -sin_r, -cos_r])
    cos = np.choose(n, [cos_r, -sin_r, -cos_r, sin_r])
    return sin.astype(np.float32), cos.astype(np.float32)


def sigmoid(x):
    return F(1) / (F(1) + exp(-f32(x)))


def f32_of(fraction):
    """A rational rounded once to binary32 (to nearest, ties to even)."""
    d = F(float(fraction))
    below, above = np.nextafter(d, F(-np.inf)), np.nextafter(d, F(np.inf))
    best = min((below, d, above), key=lambda v: (abs(Fraction(float(v)) - fraction),
                                                 int(np.array(v).view(np.int32)) & 1))
    return F(best)


TANH_C = [f32_of(Fraction(n, d)) for n, d in (
    (-1, 3), (2, 15), (-17, 315), (62, 2835), (-1382, 155925), (21844, 6081075),
    (-929569, 638512875), (6404582, 10854718875), (-443861162, 1856156927625),
    (18888466084, 194896477400625))]


def tanh(x):
    x = f32(x)
    z = x * x
    q = np.full_like(x, TANH_C[9])
    for c in reversed(TANH_C[:9]):
        q = fma(q, z, c)
    small = fma(x * z, q, x)
    a = np.abs(x)
    big = np.copysign(F(1) - F(2) / (exp(a + a) + F(1)), x)
    out = np.where(a < F(0.5625), small, big)
    return np.where(np.isnan(x), x, out).astype(np.float32)


def gelu(x):
    u = F(0.7978845608) * (x + F(0.044715) * ((x * x) * x))
    return (F(0.5) * x) * (F(1) + tanh(u))


def gelu_bwd(dy, x):
    t = tanh(F(0.7978845608) * (x + F(0.044715) * ((x * x) * x)))
    return dy * (F(0.5) * (F(1) + t) + (F(0.5) * x) * (
        (F(1) - t * t) * (F(0.7978845608) * (F(1) + F(0.134145) * (x * x)))))


def pow_int(b, n):
    r, b = F(1), F(b)
    while n > 0:
        if n & 1:
            r = F(r * b)
        b = F(b * b)
        n >>= 1
    return r


# ---- repops.md §6: Philox normal fill ----------------------------------------------------------
def fill_normal(count, seed, stream, mean, std):
    w0 = np.empty(count, np.int64)
    w1 = np.empty(count, np.int64)
    for i in range(count):
        block = sp.philox4x32(seed, stream, i)
        w0[i], w1[i] = block[0], block[1]
    u1 = ((w0 >> 8) + 1).astype(np.float32) * F(2.0 ** -24)
    u2 = (w1 >> 8).astype(np.float32) * F(2.0 ** -24)
    _, c = _sincos(F(6.28318548) * u2)
    z = np.sqrt(F(-2) * log(u1)) * c
    return F(mean) + F(std) * z


# ---- repops.md §5: layer ops -------------------------------------------------------------------
def rmsnorm(x, gain, eps):
    d = x.shape[-1]
    rstd = F(1) / np.sqrt(rsumsq(x) * (F(1) / F(d)) + F(eps))
    y = x * rstd[..., None]
    return (y * gain if gain is not None else y), rstd


def rmsnorm_bwd(dy, x, gain, rstd):
    """dx, and dgain accumulated over the rows ascending from +0 (None without a gain)."""
    d = x.shape[-1]
    g = dy * gain if gain is not None else dy
    xhat = x * rstd[..., None]
    c = _dot(g, xhat) * (F(1) / F(d))
    dx = (g - xhat * c[..., None]) * rstd[..., None]
    dgain = None
    if gain is not None:
        dgain = np.zeros(d, np.float32)
        for r in range(x.shape[0]):
            dgain = fma(dy[r], xhat[r], dgain)
    return dx, dgain


def rope_table(max_pos, hd, theta):
    half = hd // 2
    i = np.arange(half)
    inv = exp(-((i.astype(np.float32) * F(2)) / F(hd) * log(F(theta))))
    angle = np.arange(max_pos).astype(np.float32)[:, None] * inv[None, :]
    s, c = _sincos(angle)
    return c, s


def rope(x, pos, table, backward=False):
    """x [rows, H, T, hd]; pos [rows, T]."""
    c, s = table[0][pos][:, None, :, :], table[1][pos][:, None, :, :]
    h = x.shape[-1] // 2
    a, b = x[..., :h], x[..., h:]
    if not backward:
        return np.concatenate([a * c - b * s, a * s + b * c], -1)
    return np.concatenate([a * c + b * s, b * c - a * s], -1)


def swiglu(a, b):
    return (a * sigmoid(a)) * b


def swiglu_bwd(dh, a, b):
    s = sigmoid(a)
    return (dh * b) * (s * (F(1) + a * (F(1) - s))), dh * (a * s)


def cross_entropy(logits, labels):
    m = rmax(logits)
    lse = m + log(rsum(exp(logits - m[:, None])))
    ok = labels >= 0
    tgt = logits[np.arange(len(labels)), np.where(ok, labels, 0)]
    nll = np.where(ok, lse - tgt, F(0))
    lse2 = np.where(ok, lse * lse, F(0))
    return rsum(nll), rsum(lse2), int(ok.sum()), lse


def cross_entropy_bwd(logits, labels, lse, scale, z):
    coef = F(1) + (F(2) * F(z)) * lse
    onehot = np.zeros_like(logits)
    ok = labels >= 0
    onehot[np.arange(len(labels))[ok], labels[ok]] = 1
    d = (exp(logits - lse[:, None]) * coef[:, None] - onehot) * F(scale)
    return np.where(ok[:, None], d, F(0)).astype(np.float32)


def allowed_mask(T, window, doc, valid):
    """allowed[r, t, j] for the batch (causal, window, same document, valid key)."""
    t = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    rng = (j <= t) & ((j >= t - window + 1) if window > 0 else True)
    same = doc[:, :, None] == doc[:, None, :]
    return rng[None] & same & (valid[:, None, :] != 0)


def key_range(t, window):
    """The first key of query t's range [lo, t]."""
    return max(0, t - window + 1) if window > 0 else 0


def attention(q, k, v, allowed, window):
    """q [rows, H, T, hd]; k, v [rows, Hkv, T, hd] (query head h reads K/V head h // (H/Hkv));
    allowed [rows, T, T]. Returns out and the probabilities P."""
    rows, H, T, hd = q.shape
    G = H // k.shape[1]
    sigma = F(1) / np.sqrt(F(hd))
    out = np.zeros_like(q)
    P = np.zeros((rows, H, T, T), np.float32)
    for r in range(rows):
        for h in range(H):
            scores = matmul_bt(q[r, h], k[r, h // G]) * sigma
            for t in range(T):
                if not allowed[r, t].any():
                    continue  # no allowed key: P row 0, out +0
                lo = key_range(t, window)
                srow = np.where(allowed[r, t, lo:t + 1], scores[t, lo:t + 1], F(-np.inf))
                e = exp(srow - rmax(srow))
                P[r, h, t, lo:t + 1] = e * (F(1) / rsum(e))
            out[r, h] = matmul(P[r, h], v[r, h // G]) + F(0)
    return out, P


def attention_bwd(q, k, v, P, dout, allowed, window):
    """dk, dv of K/V head g: its query heads' shares summed in ascending head order."""
    rows, H, T, hd = q.shape
    G = H // k.shape[1]
    sigma = F(1) / np.sqrt(F(hd))
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for r in range(rows):
        for h in range(H):
            g = h // G
            dP = np.where(allowed[r], matmul_bt(dout[r, h], v[r, g]), F(0))
            dS = np.zeros((T, T), np.float32)
            for t in range(T):
                if not allowed[r, t].any():
                    continue
                lo = key_range(t, window)
                D = _dot(P[r, h, t, lo:t + 1], dP[t, lo:t + 1])
                dS[t] = np.where(allowed[r, t], (P[r, h, t] * (dP[t] - D)) * sigma, F(0))
            dq[r, h] = matmul(dS, k[r, g]) + F(0)
            dk_h = matmul_at(dS, q[r, h]) + F(0)
            dv_h = matmul_at(P[r, h], dout[r, h]) + F(0)
            first = h % G == 0
            dk[r, g] = dk_h if first else dk[r, g] + dk_h
            dv[r, g] = dv_h if first else dv[r, g] + dv_h
    return dq, dk, dv


def adamw(p, g, m, v, lr, b1, b2, eps, wd, t):
    bc1 = F(1) / (F(1) - pow_int(b1, t))
    bc2 = F(1) / (F(1) - pow_int(b2, t))
    decay = F(1) - F(lr) * F(wd)
    m = F(b1) * m + (F(1) - F(b1)) * g
    v = F(b2) * v + (F(1) - F(b2)) * (g * g)
    p = p * decay - F(lr) * ((m * bc1) / (np.sqrt(v * bc2) + F(eps)))
    return p, m, v


# ---- repops.md §5 "int8 linear layers": the block products, fp32 or int8 QAT -----------------
SQRT127 = F(math.sqrt(127.0))


def abs_max(x, axis):
    """The largest |x| along axis (+0 for none), the quiet NaN if any element is NaN."""
    m = np.max(np.abs(x), axis=axis, initial=F(0))
    return np.where(np.isnan(x).any(axis=axis), F(np.nan), m).astype(np.float32)


def quantize(v, s):
    """Q(v, s) = clamp(RoundHalfEven(v / s), -127, 127), 0 where the quotient is NaN."""
    q = f32(v) / f32(s)
    return np.where(np.isnan(q), 0, np.clip(np.rint(q), -127, 127)).astype(np.int64)


def weight_scales(w):
    K = w.shape[0]
    m = rsum(np.abs(w).T) / F(K)  # per output column: Sum over p ascending, one division
    return (m + m) / SQRT127


class Linear:
    """Y = X·W for the seven block matrices, by weight name: fp32 GEMMs, or int8 QAT with the
    backward GEMMs in `mode` ("int8" or "fp32") and the weights' step sizes recomputed or, with
    `learned`, the parameters "<name>.step". Quantizing is deterministic, so quantizing again
    per use gives the bits of quantizing once."""

    def __init__(self, mode, P, learned):
        self.mode, self.P, self.learned = mode, P, learned

    @staticmethod
    def inputs(x):
        r = abs_max(x, 1) / F(127)
        return quantize(x, r[:, None]), r

    def weight(self, name):
        w = self.P[name]
        s = self.P[name + ".step"] if self.learned else weight_scales(w)
        return w, s, quantize(w, s[None, :])

    def forward(self, x, name):
        if self.mode is None:
            return matmul(x, self.P[name])
        qx, r = self.inputs(x)
        _, s, qw = self.weight(name)
        c = (qx @ qw).astype(np.float32)
        return (c * r[:, None]) * s[None, :]

    def backward(self, x, dy, name, G, dx_acc=None):
        """dX (continuing dx_acc's sum when given); G[name] = dW (and G[name.step])."""
        if self.mode is None:
            G[name] = matmul_at(x, dy)
            return matmul_bt(dy, self.P[name], dx_acc)
        qx, r = self.inputs(x)
        w, s, qw = self.weight(name)
        if self.mode == "fp32":
            dx = matmul_bt(dy, qw.astype(np.float32) * s[None, :], dx_acc)
            dw = matmul_at(qx.astype(np.float32) * r[:, None], dy)
        else:
            g = dy * s[None, :]
            u = abs_max(g, 1) / F(127)
            dx = (quantize(g, u[:, None]) @ qw.T).astype(np.float32) * u[:, None]
            if dx_acc is not None:
                dx = dx_acc + dx
            h = r[:, None] * dy
            v = abs_max(h, 0) / F(127)
            dw = (qx.T @ quantize(h, v[None, :])).astype(np.float32) * v[None, :]
        q = f32(w) / s[None, :]
        clipped = np.abs(q) > F(127)
        if self.learned:
            G[name + ".step"] = lsq_gradient(dw, qw, q, clipped, w.shape[0])
        G[name] = np.where(clipped, F(0), dw).astype(np.float32)
        return dx


def lsq_gradient(dw, qw, v, clipped, K):
    """ds_j = ((dŴ[0,j]·e[0,j]) + dŴ[1,j]·e[1,j]) + ... times float32(1/√(K·127))."""
    e = np.where(clipped, qw.astype(np.float32), qw.astype(np.float32) - v)
    e = np.where(np.isnan(v), F(0), e).astype(np.float32)
    prod = dw * e
    acc = prod[0].copy()
    for p in range(1, prod.shape[0]):
        acc = acc + prod[p]
    return acc * F(1.0 / math.sqrt(K * 127.0))


# ---- docs/step.md §1–2: the recipe and the parameters ------------------------------------------
DEFAULTS = {"d_model": 128, "n_layers": 4, "n_heads": 4, "n_kv_heads": 0, "head_dim": 0,
            "d_ff": 384,
            "max_seq_len": 256, "mlp": "swiglu", "norm_gain": True, "embed_norm": False,
            "qk_norm": False, "qk_norm_gain": False, "qk_norm_projection": False,
            "post_norm": False,
            "tied_embeddings": True, "norm_eps": 1e-5, "rope_theta": 10000.0, "z_loss": 0.0,
            "attention_window": 0, "full_attention_every": 0, "full_attention_last": True,
            "init_std": 0.02, "init_seed": 0, "lr": 3e-3, "beta1": 0.9, "beta2": 0.95,
            "eps": 1e-8, "weight_decay": 0.1, "clip_norm": 1.0, "spike_skip_factor": 0.0,
            "spike_window": 128, "spike_min_history": 16, "decay": "cosine",
            "warmup_tokens": 0, "total_tokens": 0, "min_lr_ratio": 0.1, "wsd_decay_tokens": 0}


def read_recipe(path):
    import tomllib
    text = tomllib.load(open(path, "rb"))
    c = dict(DEFAULTS)
    for section in ("model", "optimizer", "schedule"):
        c.update(text.get(section, {}))
    c["mesh"], c["train"] = text.get("mesh", {}), text.get("train", {})
    q = text.get("quant", {})
    c["quant"] = None if q.get("linear", "none") == "none" else q.get("backward", "int8")
    c["step_size"] = q.get("step_size", "recompute")
    if "preset" in c:
        sys.exit("step port: presets are not ported")
    c["vocab"] = 96  # the golden corpus's (docs/goldens.md §3)
    return c


def head_dim(c):  # recipe head_dim, else d_model / n_heads
    return c["head_dim"] or c["d_model"] // c["n_heads"]


def param_shapes(c):
    d, ff, V = c["d_model"], c["d_ff"], c["vocab"]
    swiglu = c["mlp"] == "swiglu"
    out = [("embed", (V, d))]
    if c["embed_norm"] and c["norm_gain"]:
        out.append(("embed_norm.gain", (d,)))
    for l in range(c["n_layers"]):
        p = "layers.%d." % l
        if c["norm_gain"]:
            out.append((p + "attn_norm.gain", (d,)))
        hd = head_dim(c)
        qd, kvd = c["n_heads"] * hd, (c["n_kv_heads"] or c["n_heads"]) * hd  # H, Hkv heads
        out += [(p + "attn.wq", (d, qd)), (p + "attn.wk", (d, kvd)), (p + "attn.wv", (d, kvd)),
                (p + "attn.wo", (qd, d))]
        if c["qk_norm_gain"]:
            qw, kw = (qd, kvd) if c["qk_norm_projection"] else (hd, hd)
            out += [(p + "attn.q_norm.gain", (qw,)), (p + "attn.k_norm.gain", (kw,))]
        if c["norm_gain"]:
            out.append((p + "mlp_norm.gain", (d,)))
        out.append((p + ("mlp.w_gate" if swiglu else "mlp.w_in"), (d, ff)))
        if swiglu:
            out.append((p + "mlp.w_up", (d, ff)))
        out.append((p + "mlp.w_down", (ff, d)))
        if c["quant"] and c["step_size"] == "learned":  # after the layer's matrices, in order
            out += [(n + ".step", (shape[1],)) for n, shape in list(out)
                    if n.startswith(p) and len(shape) == 2]
    if c["norm_gain"]:
        out.append(("final_norm.gain", (d,)))
    if not c["tied_embeddings"]:
        out.append(("lm_head", (d, V)))
    return out


def init_params(c):
    out_std = F(c["init_std"]) / np.sqrt(F(2) * F(c["n_layers"]))
    params = {}
    for name, shape in param_shapes(c):
        n = int(np.prod(shape))
        if name.endswith(".gain"):
            params[name] = np.ones(shape, np.float32)
            continue
        if name.endswith(".step"):  # a learned step size: the formula on its (earlier) matrix
            params[name] = weight_scales(params[name[:-5]])
            continue
        std = out_std if name.endswith("attn.wo") or name.endswith("mlp.w_down") else F(c["init_std"])
        params[name] = fill_normal(n, c["init_seed"], sp.fnv1a64(name), 0.0, std).reshape(shape)
    return params


def layer_window(c, l):
    if c["attention_window"] <= 0:
        return 0
    if c["full_attention_every"] > 0 and (l + 1) % c["full_attention_every"] == 0:
        return 0
    if c["full_attention_last"] and l == c["n_layers"] - 1:
        return 0
    return c["attention_window"]


# ---- docs/step.md §3–4: one micro-batch forward and backward --------------------------------
def heads(x, rows, T, H):  # [N, H·hd] -> [rows, H, T, hd]
    return x.reshape(rows, T, H, -1).transpose(0, 2, 1, 3).copy()


def merge(x):  # [rows, H, T, hd] -> [N, H·hd]
    rows, H, T, hd = x.shape
    return x.transpose(0, 2, 1, 3).reshape(rows * T, H * hd).copy()


class MicroBatch:
    """One micro-batch's forward and backward (docs/step.md §3–4). note(op, layer, tensor,
    array) receives every output in the trace's order."""

    def __init__(self, c, P, rows_in, rope_t, note):
        self.c, self.P, self.rope_t, self.note = c, P, rope_t, note
        self.rows, self.T = len(rows_in), len(rows_in[0]["inputs"])
        self.N, self.H = self.rows * self.T, c["n_heads"]
        self.Hkv = c["n_kv_heads"] or self.H
        arr = lambda key: np.array([r[key] for r in rows_in], np.int64)  # noqa: E731
        self.inputs, self.labels = arr("inputs").reshape(-1), arr("labels").reshape(-1)
        self.doc, self.pos, self.valid = arr("doc_ids"), arr("positions"), arr("key_valid")
        self.lin = Linear(c["quant"], P, c["step_size"] == "learned")
        self.glu, self.tied, self.eps = c["mlp"] == "swiglu", c["tied_embeddings"], c["norm_eps"]
        self.acts = {}

    def gain(self, name):
        return self.P.get(name)  # None without norm gains

    def forward(self):
        """Returns (nll_sum, lse_sq_sum, valid)."""
        P, note = self.P, self.note
        self.emb = P["embed"][self.inputs].copy()
        x = self.emb
        if self.c["embed_norm"]:
            note("embedding", -1, "embed", x)
            x, self.rstd_e = rmsnorm(x, self.gain("embed_norm.gain"), self.eps)
            note("rmsnorm", -1, "x0", x)
        else:
            note("embedding", -1, "x0", x)
        for l in range(self.c["n_layers"]):
            x = self.layer_forward(l, x)
        self.x_final = x
        self.hf, self.rstd_f = rmsnorm(x, self.gain("final_norm.gain"), self.eps)
        note("rmsnorm", -1, "hf", self.hf)
        self.logits = (matmul_bt(self.hf, P["embed"]) if self.tied
                       else matmul(self.hf, P["lm_head"]))
        note("matmul", -1, "logits", self.logits)
        nll, lse2, nvalid, self.lse = cross_entropy(self.logits, self.labels)
        note("cross_entropy", -1, "lse", self.lse)
        return nll, lse2, nvalid

    def out_norm(self, l, A, y, key, gain_name, rstd_key, name):
        """post_norm: a block's output y (kept as A[key]) normalized, noted as name."""
        A[key] = y
        y, A[rstd_key] = rmsnorm(y, self.gain(gain_name), self.eps)
        self.note("rmsnorm", l, name, y)
        return y

    def layer_forward(self, l, x):
        P, note, lin, p = self.P, self.note, self.lin, "layers.%d." % l
        A = self.acts[l] = {"x_in": x}
        post = self.c["post_norm"]
        if post:
            A["h1"] = x
        else:
            A["h1"], A["rstd1"] = rmsnorm(x, self.gain(p + "attn_norm.gain"), self.eps)
            note("rmsnorm", l, "h1", A["h1"])
        proj = {}
        for m in "qkv":
            proj[m] = lin.forward(A["h1"], p + "attn.w" + m)
            note("matmul", l, m + "_proj", proj[m])
        whole = self.c["qk_norm"] and self.c["qk_norm_projection"]
        if whole:  # each token's whole projection, before the split
            for m in "qk":
                A[m + "_raw"] = proj[m]
                proj[m], A["rstd_" + m] = rmsnorm(proj[m], self.gain(p + "attn.%s_norm.gain" % m),
                                                  self.eps)
                note("rmsnorm", l, m + "_norm", proj[m])
        q = heads(proj["q"], self.rows, self.T, self.H)
        k, v = (heads(proj[m], self.rows, self.T, self.Hkv) for m in "kv")
        if self.c["qk_norm"] and not whole:
            A["q_raw"], A["k_raw"] = q, k
            q, A["rstd_q"] = rmsnorm(q, self.gain(p + "attn.q_norm.gain"), self.eps)
            note("rmsnorm", l, "q_norm", q)
            k, A["rstd_k"] = rmsnorm(k, self.gain(p + "attn.k_norm.gain"), self.eps)
            note("rmsnorm", l, "k_norm", k)
        A["q"], A["k"], A["v"] = rope(q, self.pos, self.rope_t), rope(k, self.pos, self.rope_t), v
        note("rope", l, "q_rope", A["q"])
        note("rope", l, "k_rope", A["k"])
        A["window"] = layer_window(self.c, l)
        A["allowed"] = allowed_mask(self.T, A["window"], self.doc, self.valid)
        o, A["P"] = attention(A["q"], A["k"], v, A["allowed"], A["window"])
        note("attention", l, "attn_out", o)
        A["att"] = merge(o)
        y = lin.forward(A["att"], p + "attn.wo")
        note("matmul", l, "o_proj", y)
        if post:
            y = self.out_norm(l, A, y, "y_o", p + "attn_norm.gain", "rstd1", "o_norm")
        A["x_mid"] = x_mid = y + x
        note("add", l, "x_mid", x_mid)
        if post:
            A["h2"] = x_mid
        else:
            A["h2"], A["rstd2"] = rmsnorm(x_mid, self.gain(p + "mlp_norm.gain"), self.eps)
            note("rmsnorm", l, "h2", A["h2"])
        A["a"] = lin.forward(A["h2"], p + ("mlp.w_gate" if self.glu else "mlp.w_in"))
        note("matmul", l, "gate", A["a"])
        if self.glu:
            A["b"] = lin.forward(A["h2"], p + "mlp.w_up")
            note("matmul", l, "up", A["b"])
            A["act"] = swiglu(A["a"], A["b"])
            note("swiglu", l, "act", A["act"])
        else:
            A["act"] = gelu(A["a"])
            note("gelu", l, "act", A["act"])
        x = lin.forward(A["act"], p + "mlp.w_down")
        note("matmul", l, "down", x)
        if post:
            x = self.out_norm(l, A, x, "y_d", p + "mlp_norm.gain", "rstd2", "down_norm")
        x = x + x_mid
        note("add", l, "x_out", x)
        return x

    def backward(self, scale):
        """The gradient of every parameter (run after forward)."""
        P, note, G = self.P, self.note, {}
        dlogits = cross_entropy_bwd(self.logits, self.labels, self.lse, scale, self.c["z_loss"])
        note("cross_entropy_bwd", -1, "d_logits", dlogits)
        if self.tied:
            dhf = matmul(dlogits, P["embed"])
            note("matmul", -1, "d_hf", dhf)
            G["embed"] = matmul_at(dlogits, self.hf)
            note("matmul", -1, "g.embed", G["embed"])
        else:
            dhf = matmul_bt(dlogits, P["lm_head"])
            note("matmul", -1, "d_hf", dhf)
            G["lm_head"] = matmul_at(self.hf, dlogits)
            note("matmul", -1, "g.lm_head", G["lm_head"])
        dx, G["final_norm.gain"] = rmsnorm_bwd(dhf, self.x_final, self.gain("final_norm.gain"),
                                               self.rstd_f)
        note("rmsnorm_bwd", -1, "d_x_final", dx)
        note("rmsnorm_bwd", -1, "g.final_norm", G["final_norm.gain"])
        for l in reversed(range(self.c["n_layers"])):
            dx = self.layer_backward(l, dx, G)
        if self.c["embed_norm"]:
            dx, G["embed_norm.gain"] = rmsnorm_bwd(dx, self.emb, self.gain("embed_norm.gain"),
                                                   self.rstd_e)
            note("rmsnorm_bwd", -1, "d_embed", dx)
            note("rmsnorm_bwd", -1, "g.embed_norm", G["embed_norm.gain"])
        ge = G["embed"] if self.tied else np.zeros_like(P["embed"])
        for t in range(self.N):  # scatter-add, tokens in order
            ge[self.inputs[t]] = ge[self.inputs[t]] + dx[t]
        G["embed"] = ge
        note("embedding_bwd", -1, "g.embed", ge)
        return G

    def norm_residual_bwd(self, l, dx, dy, x, gain_name, rstd, G, names):
        """dx + RMSNormBackward(dy) of a block's input norm, noting names (dx, gain, sum)."""
        t, G[gain_name] = rmsnorm_bwd(dy, x, self.gain(gain_name), rstd)
        self.note("rmsnorm_bwd", l, names[0], t)
        self.note("rmsnorm_bwd", l, names[1], G[gain_name])
        dx = dx + t
        self.note("add", l, names[2], dx)
        return dx

    def out_norm_bwd(self, l, dx, y, gain_name, rstd, G, names):
        """post_norm: RMSNormBackward(dx) of a block's output norm, noting names (dy, gain)."""
        dy, G[gain_name] = rmsnorm_bwd(dx, y, self.gain(gain_name), rstd)
        self.note("rmsnorm_bwd", l, names[0], dy)
        self.note("rmsnorm_bwd", l, names[1], G[gain_name])
        return dy

    def layer_backward(self, l, dx, G):
        P, note, lin, A, p = self.P, self.note, self.lin, self.acts[l], "layers.%d." % l
        post = self.c["post_norm"]
        dy = (self.out_norm_bwd(l, dx, A["y_d"], p + "mlp_norm.gain", A["rstd2"], G,
                                ("d_down", "g.mlp_norm")) if post else dx)
        dact = lin.backward(A["act"], dy, p + "mlp.w_down", G)
        note("matmul", l, "d_act", dact)
        note("matmul", l, "g.w_down", G[p + "mlp.w_down"])
        if self.glu:
            da, db = swiglu_bwd(dact, A["a"], A["b"])
            note("swiglu_bwd", l, "d_gate", da)
            note("swiglu_bwd", l, "d_up", db)
            dh2 = lin.backward(A["h2"], da, p + "mlp.w_gate", G)
            note("matmul", l, "g.w_gate", G[p + "mlp.w_gate"])
            dh2 = lin.backward(A["h2"], db, p + "mlp.w_up", G, dh2)
            note("matmul", l, "g.w_up", G[p + "mlp.w_up"])
        else:
            da = gelu_bwd(dact, A["a"])
            note("gelu_bwd", l, "d_gate", da)
            dh2 = lin.backward(A["h2"], da, p + "mlp.w_in", G)
            note("matmul", l, "g.w_gate", G[p + "mlp.w_in"])
        note("matmul", l, "d_h2", dh2)
        if post:
            dx = dx + dh2
            note("add", l, "d_x_mid", dx)
            dy = self.out_norm_bwd(l, dx, A["y_o"], p + "attn_norm.gain", A["rstd1"], G,
                                   ("d_o_proj", "g.attn_norm"))
        else:
            dx = self.norm_residual_bwd(l, dx, dh2, A["x_mid"], p + "mlp_norm.gain", A["rstd2"],
                                        G, ("d_x_mid_norm", "g.mlp_norm", "d_x_mid"))
            dy = dx
        datt = lin.backward(A["att"], dy, p + "attn.wo", G)
        note("matmul", l, "d_att", datt)
        note("matmul", l, "g.wo", G[p + "attn.wo"])
        dq, dk, dv = attention_bwd(A["q"], A["k"], A["v"], A["P"],
                                   heads(datt, self.rows, self.T, self.H), A["allowed"],
                                   A["window"])
        for name, g in (("dQ", dq), ("dK", dk), ("dV", dv)):
            note("attention_bwd", l, name, g)
        dq, dk = rope(dq, self.pos, self.rope_t, True), rope(dk, self.pos, self.rope_t, True)
        note("rope_bwd", l, "dQ_rope", dq)
        note("rope_bwd", l, "dK_rope", dk)
        dh1 = None
        whole = self.c["qk_norm"] and self.c["qk_norm_projection"]
        for m, dheads in (("q", dq), ("k", dk), ("v", dv)):
            if whole and m != "v":  # merge, then the norm over each token's projection
                gname = p + "attn.%s_norm.gain" % m
                dy, dgain = rmsnorm_bwd(merge(dheads), A[m + "_raw"], self.gain(gname),
                                        A["rstd_" + m])
                note("rmsnorm_bwd", l, "d%s_norm" % m.upper(), dy)
                if self.c["qk_norm_gain"]:
                    G[gname] = dgain
                    note("rmsnorm_bwd", l, "g.%s_norm" % m, dgain)
                dh1 = lin.backward(A["h1"], dy, p + "attn.w" + m, G, dh1)
                note("matmul", l, "g.w" + m, G[p + "attn.w" + m])
                continue
            if self.c["qk_norm"] and m != "v":
                hd, gname = dheads.shape[-1], p + "attn.%s_norm.gain" % m
                dheads, dgain = rmsnorm_bwd(dheads.reshape(-1, hd), A[m + "_raw"].reshape(-1, hd),
                                            self.gain(gname), A["rstd_" + m].reshape(-1))
                dheads = dheads.reshape(self.rows, -1, self.T, hd)
                note("rmsnorm_bwd", l, "d%s_norm" % m.upper(), dheads)
                if self.c["qk_norm_gain"]:
                    G[gname] = dgain
                    note("rmsnorm_bwd", l, "g.%s_norm" % m, dgain)
            dy = merge(dheads)
            dh1 = lin.backward(A["h1"], dy, p + "attn.w" + m, G, dh1)
            note("matmul", l, "g.w" + m, G[p + "attn.w" + m])
        note("matmul", l, "d_h1", dh1)
        if post:
            dx = dx + dh1
            note("add", l, "d_x_in", dx)
            return dx
        return self.norm_residual_bwd(l, dx, dh1, A["x_in"], p + "attn_norm.gain", A["rstd1"], G,
                                      ("d_x_in_norm", "g.attn_norm", "d_x_in"))


# ---- docs/step.md §5–6: the step ---------------------------------------------------------------
def lr_at(c, t):
    peak = float(F(c["lr"]))
    floor = peak * float(F(c["min_lr_ratio"]))
    W, total = c["warmup_tokens"], c["total_tokens"]
    if t < W:
        return F(peak * float(t + 1) / float(W))
    if c["decay"] == "constant":
        return F(c["lr"])
    if c["decay"] == "cosine":
        if t >= total:
            return F(floor)
        p = float(t - W) / float(total - W)
        cos = float(_sincos(F(3.141592653589793 * p))[1])
        return F(floor + (peak - floor) * 0.5 * (1.0 + cos))
    start = total - c["wsd_decay_tokens"]
    if t < start:
        return F(c["lr"])
    if t >= total:
        return F(floor)
    return F(peak + (floor - peak) * (float(t - start) / float(c["wsd_decay_tokens"])))


def elements_root(a):
    """ElementsRoot: the Merkle root of the chunk leaves, no tensor node (repops.md §7)."""
    data = sh.canonical("F32", f32(a).astype("<f4").tobytes())
    n = len(data) // 4
    leaves = [sh.leaf(data[i * sh.CHUNK * 4:(i + 1) * sh.CHUNK * 4], i,
                      min(sh.CHUNK, n - i * sh.CHUNK)) for i in range((n + sh.CHUNK - 1) // sh.CHUNK)]
    return sh.merkle(leaves).hex()


def state_hash(tensors):
    return sh.state_hash({name: ("F32", list(a.shape), f32(a).astype("<f4").tobytes())
                          for name, a in tensors.items()})


def bits(x):
    return struct.pack(">f", F(x)).hex()


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def add(a, b):
    return {n: a[n] + b[n] for n in a}


def tree_fold(xs):
    """TreeFold (docs/training.md, "The step" 4): blocks of the binary decomposition of the
    count, largest first, each summed by recursive doubling (lower on the left); then the blocks
    combined smallest first, the lower block on the left. 3: (0+1)+2; 7: ((0+1)+(2+3))+((4+5)+6)."""
    blocks, at = [], 0
    for bit in reversed(range(len(xs).bit_length())):
        if len(xs) >> bit & 1:
            level = xs[at:at + (1 << bit)]
            while len(level) > 1:
                level = [add(level[i], level[i + 1]) for i in range(0, len(level), 2)]
            blocks.append(level[0])
            at += 1 << bit
    acc = blocks[-1]
    for block in reversed(blocks[:-1]):
        acc = add(block, acc)
    return acc


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else F((v[n // 2 - 1] + v[n // 2]) * F(0.5))


class Run:
    """A golden case trained by the port: its recipe, stream and state (docs/step.md §5)."""

    def __init__(self, name, c):
        self.name, self.c = name, c
        self.P = init_params(c)
        self.names = [n for n, _ in param_shapes(c)]
        self.M = {n: np.zeros_like(self.P[n]) for n in self.names}
        self.V = {n: np.zeros_like(self.P[n]) for n in self.names}
        self.tokens, self.updates, self.history = 0, 0, []
        self.stream = cv.training_stream(name)
        self.rope_t = rope_table(c["max_seq_len"], head_dim(c), c["rope_theta"])

    def gradient(self, step, traced):
        """Every micro-batch of the step, folded: (grad, loss, z_loss, targets, batches, got)
        with got the (identity, hash) trace entries (operations only when traced)."""
        c = self.c
        batches = list(cv.micro_batches(self.name, step, self.stream))
        targets = sum(1 for _, _, rows in batches for _, r in rows for y in r["labels"]
                      if y != -100)
        scale = F(1) / F(targets) if targets else F(0)
        got, nll_acc, lse_acc, by_rank = [], F(0), F(0), {}
        for k, m, rows in batches:
            windows = [w for w, _ in rows]
            digest = cv.batch_digest(windows, [r for _, r in rows],
                                     self.stream.seq_len(step)).hex()
            got.append(((k, m, "batch", -1, "tokens"), digest))

            def note(op, layer, tensor, a, k=k, m=m):
                if traced:
                    got.append(((k, m, op, layer, tensor), elements_root(a)))
            mb = MicroBatch(c, self.P, [r for _, r in rows], self.rope_t, note)
            nll, lse2, _ = mb.forward()
            g = mb.backward(scale)
            nll_acc, lse_acc = F(nll_acc + nll), F(lse_acc + lse2)
            by_rank[k] = g if m == 0 else add(by_rank[k], g)  # G(k) = g(k,0) + g(k,1) + ...
        R, S = c["mesh"].get("replicas", 1), c["mesh"].get("shards", 1)
        replicas = []
        for r in range(R):  # the ascending shard sum inside each replica
            acc = by_rank[r * S]
            for shard in range(1, S):
                acc = add(acc, by_rank[r * S + shard])
            replicas.append(acc)
        grad = tree_fold(replicas)
        got.append(((-1, -1, "step", -1, "grads"), state_hash(grad)))
        loss = F(nll_acc * scale)
        z_loss = F(F(F(c["z_loss"]) * lse_acc) * scale)
        return grad, loss, z_loss, targets, batches, got

    def update(self, step, grad, targets):
        """Norm, LR, skip, clip and AdamW; the clock advances. Returns (norm, lr, skip, clip)."""
        c = self.c
        total = F(0)
        for n in self.names:  # one chunk per tensor here (< 65,536 elements each)
            total = F(total + rsumsq(grad[n].reshape(-1)))
        norm = np.sqrt(total)
        lr = lr_at(c, self.tokens)
        self.tokens += self.stream.windows(step) * self.stream.seq_len(step)  # B_input
        if targets == 0:
            return norm, lr, "no_targets", F(1)
        if not np.isfinite(norm):
            return norm, lr, "non_finite", F(1)
        if (c["spike_skip_factor"] > 0 and len(self.history) >= c["spike_min_history"]
                and norm > F(c["spike_skip_factor"]) * median(self.history)):
            return norm, lr, "spike", F(1)
        self.history = (self.history + [norm])[-c["spike_window"]:]
        clip = F(F(c["clip_norm"]) / (norm + F(1e-6)))
        clip = clip if clip < F(1) else F(1)
        self.updates += 1
        for n in self.names:
            g = grad[n] * clip if clip < F(1) else grad[n]
            wd = c["weight_decay"] if self.P[n].ndim == 2 else 0.0
            self.P[n], self.M[n], self.V[n] = adamw(self.P[n], g, self.M[n], self.V[n], lr,
                                                    c["beta1"], c["beta2"], c["eps"], wd,
                                                    self.updates)
        return norm, lr, None, clip

    def moments(self):
        return {**{"adam_m." + n: self.M[n] for n in self.names},
                **{"adam_v." + n: self.V[n] for n in self.names}}


def own_record(run, step, values, batches, got):
    """The trajectory record of the port's own values (docs/training.md), without its chain."""
    loss, z_loss, targets, norm, lr, skip, clip, tokens_before = values
    first = run.stream.first(step)
    batch_hash = hashlib.sha256(b"trail.batch.v2" + b"".join(
        bytes.fromhex(h) for ident, h in got if ident[2] == "batch"))
    steps, every = run.c["train"].get("steps", 100), run.c["train"].get("state_hash_every", 10)
    commits = step + 1 == steps or (every > 0 and (step + 1) % every == 0)
    rec = {"step": step, "windows": [first, first + run.stream.windows(step)], "tokens": tokens_before,
           "targets": targets, "lr_bits": bits(lr), "loss_bits": bits(loss),
           "z_loss_bits": bits(z_loss), "grad_norm_bits": bits(norm), "clip_bits": bits(clip),
           "skipped": skip, "batch": batch_hash.hexdigest(), "grads": got[-1][1],
           "params": state_hash(run.P) if commits else None,
           "optim": state_hash(run.moments()) if commits else None,
           "lr": None, "loss": None, "grad_norm": None}  # body_of writes these from their bits
    return tp.body_of(rec)


def check_initial(run, base, genesis):
    if os.path.exists(base + ".init.jsonl"):
        for line in open(base + ".init.jsonl"):
            t = json.loads(line)
            a = run.P[t["name"]]
            if hashlib.sha256(a.astype("<f4").tobytes()).hexdigest() != t["sha256"]:
                fail("%s: initial %s: first values %s, the vector's %s" % (
                    run.name, t["name"], [bits(v) for v in a.reshape(-1)[:4]], t["first_bits"]))
    initial = state_hash(run.P)
    if initial != genesis["initial_params_hash"]:
        fail("%s: the initial parameters' state hash differs" % run.name)
    return initial


def check_run(vectors, goldens, name):
    """Every step of the case: its record's bits and hashes, the state after it, the chain."""
    base = os.path.join(vectors, "training", name)
    run = Run(name, read_recipe(base + ".toml"))
    records = [json.loads(l) for l in open(base + ".trajectory.jsonl")]
    states = [json.loads(l) for l in open(base + ".states.jsonl")]
    traced = os.path.exists(base + ".step0.trace")
    trace = [json.loads(l) for l in open(base + ".step0.trace")][1:] if traced else []
    initial = check_initial(run, base, json.load(open(base + ".genesis.json")))
    recipe_sha = hashlib.sha256(open(base + ".toml", "rb").read()).hexdigest()
    chain = hashlib.sha256(("trail.trajectory.v1" + recipe_sha + "golden" +
                            initial).encode()).digest()
    micro_batches = 0
    for step, record in enumerate(records):
        grad, loss, z_loss, targets, batches, got = run.gradient(step, traced and step == 0)
        micro_batches += len(batches)
        if traced and step == 0:
            check_trace(name, trace, got)
        if got[-1][1] != record["grads"]:
            fail("%s step %d: the gradient hashes differently from the record's" % (name, step))
        tokens_before = run.tokens
        norm, lr, skip, clip = run.update(step, grad, targets)
        if skip != record["skipped"]:
            fail("%s step %d: skipped %s, the record says %s" % (name, step, skip,
                                                                 record["skipped"]))
        for key, value in (("loss_bits", loss), ("z_loss_bits", z_loss),
                           ("grad_norm_bits", norm), ("lr_bits", lr), ("clip_bits", clip)):
            if bits(value) != record[key]:
                fail("%s step %d: %s: the port's %s, the record's %s" % (
                    name, step, key, bits(value), record[key]))
        for key, state in (("params", run.P), ("optim", run.moments())):
            if state_hash(state) != states[step][key]:
                fail("%s: the %s state after step %d hashes differently" % (name, key, step))
        body = own_record(run, step, (loss, z_loss, targets, norm, lr, skip, clip, tokens_before),
                          batches, got)
        chain = hashlib.sha256(chain + body.encode()).digest()
        if chain.hex() != record["chain"]:
            fail("%s step %d: the port's record chains to %s, the trajectory's to %s" % (
                name, step, chain.hex(), record["chain"]))
    if chain.hex() != cv.table(os.path.join(goldens, "training.txt"))[name]:
        fail("%s: the port's final chain is not goldens/training.txt's" % name)
    R, S = run.c["mesh"].get("replicas", 1), run.c["mesh"].get("shards", 1)
    print("step port: %s, %d steps (%d micro-batches on %d x %d ranks%s): every record rebuilt "
          "and chained to the golden, the state hashes after every step" % (
              name, len(records), micro_batches, R, S,
              "; all %d entries of step 0's trace" % len(trace) if traced else ""))


def check_trace(name, trace, got):
    for i, (want, (ident, h)) in enumerate(zip(trace, got)):
        if ident != (want["rank"], want["micro"], want["op"], want["layer"], want["tensor"]):
            fail("%s trace entry %d: the port computes %s where the trace has %s" % (
                name, i, ident, (want["rank"], want["micro"], want["op"], want["layer"],
                                 want["tensor"])))
        if h != want["hash"]:
            fail("%s trace entry %d (%s, layer %d, %s, rank %d, micro %d) differs: the first "
                 "operation where the port and trail disagree" % (
                     name, i, ident[2], ident[3], ident[4], ident[0], ident[1]))
    if len(got) != len(trace):
        fail("%s: the port has %d trace entries, the vector %d" % (name, len(got), len(trace)))


if __name__ == "__main__":
    cases = ("mesh_1x1x2", "mesh_3x2x2", "int8_1x1x2", "int8_fp32bw_3x2x2",
             "int8_learned_1x1x2", "lifecycle_2x1x1", "gqa_1x1x2", "mqa_3x2x2", "qk_gain_1x1x2",
             "olmo2_1x1x2", "qwen3_1x1x2")
    for case in cases:
        check_run(sys.argv[1], sys.argv[2], case)
    print("step port: all %d golden training runs, step by step, from the specification alone"
          % len(cases))
