#!/usr/bin/python3
"""Parameter counts of trail's presets built as PyTorch modules, independently of trail's code:
pre-norm blocks with RMSNorm gains, bias-free q/k/v/o and MLP matrices (SwiGLU: gate, up, down;
GELU: up, down), RoPE (no position parameters), gain-free QK-norm, an optional embedding norm,
a final norm and an LM head tied to the embedding. Also GPT-2 small as published (learned
position embeddings, biases, LayerNorm with bias), whose count is the well-known 124,439,808.

Usage: torch_param_count.py VOCAB  -> JSON {preset: count, ..., "gpt2-published": count}
"""
import json
import sys

import torch

PRESETS = {  # d_model, layers, d_ff, mlp, embedding norm
    "tiny": (128, 4, 352, "swiglu", False),
    "open1b-style": (256, 10, 688, "swiglu", True),
    "gpt2-small": (768, 12, 3072, "gelu", False),
}


class Block(torch.nn.Module):
    def __init__(self, d, ff, mlp, bias=False, layer_norm=False):
        super().__init__()
        norm = (lambda: torch.nn.LayerNorm(d)) if layer_norm else (lambda: torch.nn.Parameter(torch.ones(d)))
        self.norm1, self.norm2 = norm(), norm()
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d, bias=bias) for _ in range(4))
        self.up = torch.nn.Linear(d, ff, bias=bias)
        self.gate = torch.nn.Linear(d, ff, bias=bias) if mlp == "swiglu" else None
        self.down = torch.nn.Linear(ff, d, bias=bias)


class Model(torch.nn.Module):
    def __init__(self, vocab, d, layers, ff, mlp, embed_norm, published_gpt2=False):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(
            Block(d, ff, mlp, bias=published_gpt2, layer_norm=published_gpt2) for _ in range(layers))
        if published_gpt2:
            self.positions = torch.nn.Embedding(1024, d)
            self.final = torch.nn.LayerNorm(d)
        else:
            self.final = torch.nn.Parameter(torch.ones(d))
        if embed_norm:
            self.embed_norm = torch.nn.Parameter(torch.ones(d))
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied


def count(model):
    return sum(p.numel() for p in model.parameters())  # shared tensors once


vocab = int(sys.argv[1])
out = {name: count(Model(vocab, *shape)) for name, shape in PRESETS.items()}
out["gpt2-published"] = count(Model(50257, 768, 12, 3072, "gelu", False, published_gpt2=True))
print(json.dumps(out))
