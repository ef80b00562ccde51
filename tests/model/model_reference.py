#!/usr/bin/python3
"""Float64 PyTorch reference of trail's transformer (src/model/transformer.h).

Usage: model_reference.py IN.safetensors OUT.safetensors

IN holds the model's parameters (float32, trail's names), the batch (inputs, labels, doc_ids,
positions, key_valid as int32 [rows, T]) and, in __metadata__["config"], the model config as JSON.
OUT receives float64 logits [rows*T, V], loss [1] and grad.<name> for every parameter, all
computed in float64 from the same float32 values. Written for Debian's python3-torch (1.13).
"""
import math
import json
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I8": np.int8,
          "U16": np.uint16, "U32": np.uint32}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[base + b:base + end], dtype=DTYPES[e["dtype"]])
        out[name] = arr.reshape(e["shape"]).copy()
    return out, meta


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype=np.float64)
        header[name] = {"dtype": "F64", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def rmsnorm(x, gain, eps):
    y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    return y * gain if gain is not None else y


def llama3_scaled(inv, sc):
    """transformers' _compute_llama3_parameters, in float64."""
    L, lo_f, hi_f, factor = (sc["original_max_pos"], sc["low_freq_factor"],
                             sc["high_freq_factor"], sc["factor"])
    w = 2 * math.pi / inv
    out = torch.where(w > L / lo_f, inv / factor, inv)
    s = (L / w - lo_f) / (hi_f - lo_f)
    medium = ~(w < L / hi_f) & ~(w > L / lo_f)
    return torch.where(medium, (1 - s) * out / factor + s * out, out)


def rope(x, pos, theta, scaling=None):
    # x [rows, H, T, hd], pos [rows, T]; half-split pairs (i, i + hd/2).
    hd = x.shape[-1]
    half = hd // 2
    inv = theta ** (-(torch.arange(half, dtype=torch.float64) * 2.0) / hd)
    if scaling:
        inv = llama3_scaled(inv, scaling)
    ang = pos.to(torch.float64)[:, None, :, None] * inv
    c, s = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def attention(q, k, v, window, doc, valid):
    rows, H, T, hd = q.shape
    scores = (q @ k.transpose(-1, -2)) / np.sqrt(hd)
    t = torch.arange(T)
    allowed = t[None, :] <= t[:, None]  # [t, j]
    if window > 0:
        allowed = allowed & ((t[:, None] - t[None, :]) < window)
    allowed = allowed[None] & (doc[:, :, None] == doc[:, None, :]) & (valid[:, None, :] != 0)
    allowed = allowed[:, None]  # [rows, 1, T, T]
    scores = scores.masked_fill(~allowed, float("-inf"))
    any_key = allowed.any(-1, keepdim=True)
    p = torch.softmax(torch.where(any_key, scores, torch.zeros_like(scores)), dim=-1)
    p = torch.where(allowed, p, torch.zeros_like(p))
    return p @ v


def layer_window(cfg, layer):
    w = cfg["attention_window"]
    if w <= 0:
        return 0
    every = cfg["full_attention_every"]
    if every > 0 and (layer + 1) % every == 0:
        return 0
    if cfg["full_attention_last"] and layer == cfg["n_layers"] - 1:
        return 0
    return w


def forward(cfg, P, batch):
    inputs = torch.from_numpy(batch["inputs"]).long()
    labels = torch.from_numpy(batch["labels"]).long()
    doc = torch.from_numpy(batch["doc_ids"]).long()
    pos = torch.from_numpy(batch["positions"]).long()
    valid = torch.from_numpy(batch["key_valid"]).long()
    rows, T = inputs.shape
    d, H = cfg["d_model"], cfg["n_heads"]
    hd, eps = cfg.get("head_dim", 0) or d // H, cfg["norm_eps"]  # head_dim: Qwen3's wider heads
    Hkv = cfg.get("n_kv_heads", 0) or H  # grouped-query attention: H / Hkv queries per K/V head
    g = lambda name: P.get(name)
    x = P["embed"][inputs]  # [rows, T, d]
    if cfg["embed_norm"]:
        x = rmsnorm(x, g("embed_norm.gain"), eps)
    for l in range(cfg["n_layers"]):
        p = "layers.%d." % l
        post = cfg.get("post_norm", False)  # OLMo 2: norms of the blocks' outputs instead
        h = x if post else rmsnorm(x, g(p + "attn_norm.gain"), eps)
        split = lambda y, n: y.view(rows, T, n, hd).transpose(1, 2)
        q, k, v = h @ P[p + "attn.wq"], h @ P[p + "attn.wk"], h @ P[p + "attn.wv"]
        whole = cfg["qk_norm"] and cfg.get("qk_norm_projection", False)
        if whole:  # each token's whole projection, as OLMo 2's q_norm, k_norm
            q = rmsnorm(q, g(p + "attn.q_norm.gain"), eps)
            k = rmsnorm(k, g(p + "attn.k_norm.gain"), eps)
        q, k, v = split(q, H), split(k, Hkv), split(v, Hkv)
        if cfg["qk_norm"] and not whole:
            q = rmsnorm(q, g(p + "attn.q_norm.gain"), eps)  # gains with qk_norm_gain, else none
            k = rmsnorm(k, g(p + "attn.k_norm.gain"), eps)
        sc = cfg.get("rope_scaling")
        q, k = rope(q, pos, cfg["rope_theta"], sc), rope(k, pos, cfg["rope_theta"], sc)
        # Query head i reads K/V head i // (H / Hkv), as transformers' repeat_kv does.
        k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
        a = attention(q, k, v, layer_window(cfg, l), doc, valid)
        o = a.transpose(1, 2).reshape(rows, T, H * hd) @ P[p + "attn.wo"]
        x = x + (rmsnorm(o, g(p + "attn_norm.gain"), eps) if post else o)
        h = x if post else rmsnorm(x, g(p + "mlp_norm.gain"), eps)
        if cfg["mlp"] == "swiglu":
            a, b = h @ P[p + "mlp.w_gate"], h @ P[p + "mlp.w_up"]
            m = torch.nn.functional.silu(a) * b
        else:
            a = h @ P[p + "mlp.w_in"]
            m = 0.5 * a * (1.0 + torch.tanh(0.7978845608 * (a + 0.044715 * a ** 3)))
        y = m @ P[p + "mlp.w_down"]
        x = x + (rmsnorm(y, g(p + "mlp_norm.gain"), eps) if post else y)
    x = rmsnorm(x, g("final_norm.gain"), eps)
    head = P["embed"].t() if cfg["tied_embeddings"] else P["lm_head"]
    logits = (x @ head).reshape(rows * T, -1)
    lab = labels.reshape(-1)
    keep = lab != -100
    lse = torch.logsumexp(logits, dim=-1)
    nll = (lse - logits.gather(1, lab.clamp(min=0)[:, None])[:, 0])[keep].sum()
    zsum = (lse[keep] ** 2).sum()
    n = keep.sum().item()
    loss = (nll + cfg["z_loss"] * zsum) / n
    return logits, loss


def main():
    tensors, meta = read_safetensors(sys.argv[1])
    cfg = json.loads(meta["config"])
    batch_names = ["inputs", "labels", "doc_ids", "positions", "key_valid"]
    batch = {k: tensors.pop(k) for k in batch_names}
    P = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in tensors.items()}
    logits, loss = forward(cfg, P, batch)
    loss.backward()
    out = {"logits": logits.detach().numpy(), "loss": np.array([loss.item()])}
    for k, v in P.items():
        out["grad." + k] = v.grad.numpy() if v.grad is not None else np.zeros(v.shape)
    write_safetensors(sys.argv[2], out)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
