#!/usr/bin/python3
"""PyTorch baseline for bench/train_bench: the same architecture (pre-norm RMSNorm with
gains, RoPE, causal attention, GELU(tanh) MLP of 4d, tied head, AdamW, global-norm clipping
at 1.0) and shapes (L=6, d=384, 6 heads, vocab 16384, T=256, B=8), fp32, PyTorch's default
kernels. Prints one JSON object: median step seconds, tokens/s, peak RSS, and whether the
parameters after two steps are bit-identical with 1 and with 2 threads.

Usage: train_bench_torch.py STEPS THREADS [B|gpt2-small|gpt2-1024] [cpu|cuda] [fp32|bf16]
                           [eager|compile]
gpt2-small: L=12, d=768, 12 heads, vocab 50257, T=128, B=8 (the bitwise check is skipped);
gpt2-1024: the same at T=1024. PyTorch runs at its best for the device: attention by
scaled_dot_product_attention (flash kernels, on the CPU too), the fused AdamW, TF32 off for
fp32; bf16 runs the step under bf16 autocast (on the CPU where it has bf16 instructions);
compile runs the model through torch.compile (inductor; its compilation is in the first,
untimed steps). Times are taken after torch.cuda.synchronize() on cuda.
"""
import contextlib
import hashlib
import json
import resource
import sys
import time

import torch

L, D, H, V, T, B, FF = 6, 384, 6, 16384, 256, 8, 1536
if len(sys.argv) > 3 and sys.argv[3] == "gpt2-small":
    L, D, H, V, T, B, FF = 12, 768, 12, 50257, 128, 8, 3072
if len(sys.argv) > 3 and sys.argv[3] == "gpt2-1024":
    L, D, H, V, T, B, FF = 12, 768, 12, 50257, 1024, 8, 3072
DEVICE = sys.argv[4] if len(sys.argv) > 4 else "cpu"
PRECISION = sys.argv[5] if len(sys.argv) > 5 else "fp32"
COMPILE = len(sys.argv) > 6 and sys.argv[6] == "compile"
CUDA = DEVICE == "cuda"
# PyTorch 2's flash attention (2.0+) and its fused AdamW on the CPU (2.4+); an older PyTorch
# runs the explicit softmax and the default AdamW.
TORCH2 = hasattr(torch.nn.functional, "scaled_dot_product_attention")
_VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
FUSED_CPU_ADAMW = _VERSION >= (2, 4)
if CUDA:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def rmsnorm(x, g, eps=1e-5):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * g


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        p = lambda *s, std=0.02: torch.nn.Parameter(torch.randn(*s, generator=gen) * std)
        self.embed = p(V, D)
        self.layers = torch.nn.ParameterList()
        out_std = 0.02 / (2 * L) ** 0.5
        for _ in range(L):
            self.layers.extend([torch.nn.Parameter(torch.ones(D)), p(D, D), p(D, D), p(D, D),
                                p(D, D, std=out_std), torch.nn.Parameter(torch.ones(D)),
                                p(D, FF), p(FF, D, std=out_std)])
        self.final = torch.nn.Parameter(torch.ones(D))
        hd = D // H
        inv = 10000.0 ** (-(torch.arange(hd // 2, dtype=torch.float32) * 2) / hd)
        ang = torch.arange(T, dtype=torch.float32)[:, None] * inv
        self.register_buffer("cos", torch.cos(ang))
        self.register_buffer("sin", torch.sin(ang))
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).tril())

    def rope(self, x):
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return torch.cat([x1 * self.cos - x2 * self.sin, x1 * self.sin + x2 * self.cos], -1)

    def forward(self, tokens, labels):
        x = self.embed[tokens]
        hd = D // H
        for l in range(L):
            g1, wq, wk, wv, wo, g2, w1, w2 = self.layers[8 * l:8 * l + 8]
            h = rmsnorm(x, g1)
            heads = lambda w: (h @ w).view(B, T, H, hd).transpose(1, 2)
            q, k, v = self.rope(heads(wq)), self.rope(heads(wk)), heads(wv)
            if TORCH2:
                a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                s = (q @ k.transpose(-1, -2)) / hd ** 0.5
                a = torch.softmax(s.masked_fill(~self.mask, float("-inf")), -1) @ v
            x = x + a.transpose(1, 2).reshape(B, T, D) @ wo
            m = torch.nn.functional.gelu(rmsnorm(x, g2) @ w1, approximate="tanh")
            x = x + m @ w2
        logits = rmsnorm(x, self.final) @ self.embed.t()
        return torch.nn.functional.cross_entropy(logits.view(-1, V), labels.reshape(-1))


def autocast():
    if PRECISION == "bf16":
        return torch.autocast(DEVICE, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def params_hash(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def run(steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Model().to(DEVICE)
    fused = {"fused": True} if CUDA or FUSED_CPU_ADAMW else {}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=0.1, **fused)
    forward = torch.compile(model) if COMPILE else model
    warmup = 3 if COMPILE else 1  # compilation (forward, then backward) and first allocations
    gen = torch.Generator().manual_seed(1)
    times = []
    for step in range(steps + warmup):
        tokens = torch.randint(0, V, (B, T + 1), generator=gen).to(DEVICE)
        if CUDA:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = forward(tokens[:, :-1], tokens[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if CUDA:
            torch.cuda.synchronize()
        if step >= warmup:
            times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2], params_hash(model)


def main():
    steps, threads = int(sys.argv[1]), int(sys.argv[2])
    median, _ = run(steps, threads)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    bitwise = None
    if V == 16384 and not CUDA and not COMPILE:
        _, h1 = run(2, 1)
        _, h2 = run(2, 2)
        bitwise = h1 == h2
    print(json.dumps({"torch": torch.__version__, "device": DEVICE, "precision": PRECISION,
                      "mode": "compile" if COMPILE else "eager",
                      "threads": threads, "step_s": median,
                      "tok_s": B * T / median, "peak_rss_mb": peak,
                      "bitwise_1_vs_2_threads": bitwise}))


if __name__ == "__main__":
    main()
