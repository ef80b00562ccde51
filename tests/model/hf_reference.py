#!/usr/bin/python3
"""Float64 reference of Hugging Face's LlamaForCausalLM, Qwen3ForCausalLM and Olmo2ForCausalLM,
written from their
documented modelling conventions (transformers cannot be installed here), run on an exported
folder.

Usage: hf_reference.py HF_DIR IDS.json OUT.safetensors [--interleave-qk]

Reads HF_DIR/config.json and HF_DIR/model.safetensors (HF names, [out, in] projections), runs the
ids (a JSON array) and writes float64 logits [T, V] to OUT. --interleave-qk applies the rotary
permutation llama.cpp's llama needs (halves to interleaved pairs) to q_proj and k_proj first:
a deliberately wrong layout that a test must catch.

The conventions (transformers' modeling_llama.py / modeling_qwen3.py):
  RMSNorm(x) = weight * x / sqrt(mean(x^2) + rms_norm_eps)
  q, k, v = Linear (no bias); heads split [T, H, head_dim]; Qwen3: q_norm / k_norm (RMSNorm over
  head_dim) on q and k before the rotary embedding; OLMo 2: q_norm / k_norm over each token's
  whole q and k projections (before the head split), no input norms, and each block's output
  normalized before its residual add (post_attention_layernorm, post_feedforward_layernorm)
  rotary: inv_freq_i = rope_theta^(-2i/head_dim), emb = cat(freqs, freqs),
          x * cos + rotate_half(x) * sin with rotate_half(x) = cat(-x2, x1)
  attention: softmax(q k^T / sqrt(head_dim)) over keys j <= t; a "sliding_attention" layer
  (layer_types) also needs t - j < sliding_window
  MLP: down(silu(gate(x)) * up(x)); residual around both blocks; final norm; lm_head (or the
  embedding when tie_word_embeddings)
"""
import json
import math
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from model_reference import read_safetensors, write_safetensors  # noqa: E402


def rms_norm(x, w, eps):
    return w * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def interleave(w, heads):
    out_dim, cols = w.shape
    hd = out_dim // heads
    return w.reshape(heads, 2, hd // 2, cols).transpose(1, 2).reshape(out_dim, cols)


def main():
    hf_dir, ids_path, out_path = sys.argv[1:4]
    cfg = json.load(open(hf_dir + "/config.json"))
    raw, _ = read_safetensors(hf_dir + "/model.safetensors")
    w = {k: torch.tensor(v, dtype=torch.float64) for k, v in raw.items()}
    ids = torch.tensor(json.load(open(ids_path)), dtype=torch.long)
    H, eps = cfg["num_attention_heads"], cfg["rms_norm_eps"]
    hd = cfg.get("head_dim") or cfg["hidden_size"] // H  # OLMo 2's config has none
    Hkv = cfg.get("num_key_value_heads", H)  # query head i reads K/V head i // (H / Hkv)
    qwen3, olmo2 = cfg["model_type"] == "qwen3", cfg["model_type"] == "olmo2"
    T = ids.shape[0]
    inv = cfg["rope_theta"] ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    rs = cfg.get("rope_scaling")
    if rs and rs.get("rope_type") == "llama3":  # transformers' _compute_llama3_parameters
        L, lo_f, hi_f = rs["original_max_position_embeddings"], rs["low_freq_factor"], \
            rs["high_freq_factor"]
        wl = 2 * math.pi / inv
        scaled = torch.where(wl > L / lo_f, inv / rs["factor"], inv)
        s = (L / wl - lo_f) / (hi_f - lo_f)
        medium = ~(wl < L / hi_f) & ~(wl > L / lo_f)
        inv = torch.where(medium, (1 - s) * scaled / rs["factor"] + s * scaled, scaled)
    freqs = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat([freqs, freqs], -1).cos(), torch.cat([freqs, freqs], -1).sin()
    x = w["model.embed_tokens.weight"][ids]
    t_idx = torch.arange(T)
    for layer in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        if "--interleave-qk" in sys.argv:
            for m, heads in (("q_proj", H), ("k_proj", Hkv)):
                name = p + "self_attn.%s.weight" % m
                w[name] = interleave(w[name], heads)
        h = x if olmo2 else rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q, k = h @ w[p + "self_attn.q_proj.weight"].T, h @ w[p + "self_attn.k_proj.weight"].T
        if olmo2:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = q.view(T, H, hd), k.view(T, Hkv, hd)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(T, Hkv, hd)
        if qwen3:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
        k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
        k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
        allowed = t_idx[None, :] <= t_idx[:, None]
        if qwen3 and cfg.get("layer_types", [None] * 1000)[layer] == "sliding_attention":
            allowed &= (t_idx[:, None] - t_idx[None, :]) < cfg["sliding_window"]
        s = torch.einsum("thd,jhd->htj", q, k) / math.sqrt(hd)
        s = s.masked_fill(~allowed[None], float("-inf"))
        a = torch.einsum("htj,jhd->thd", torch.softmax(s, -1), v).reshape(T, H * hd)
        o = a @ w[p + "self_attn.o_proj.weight"].T
        if olmo2:
            x = x + rms_norm(o, w[p + "post_attention_layernorm.weight"], eps)
            h = x
        else:
            x = x + o
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        g = h @ w[p + "mlp.gate_proj.weight"].T
        y = (g * torch.sigmoid(g) * (h @ w[p + "mlp.up_proj.weight"].T)) @ \
            w[p + "mlp.down_proj.weight"].T
        x = x + (rms_norm(y, w[p + "post_feedforward_layernorm.weight"], eps) if olmo2 else y)
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    write_safetensors(out_path, {"logits": (x @ head.T).numpy()})


if __name__ == "__main__":
    main()
