"""A randomly initialized Hugging Face model saved with save_pretrained, for `trail import`.

Usage: hf_random_model.py OUT ARCH DTYPE TOKENIZER_JSON EOS [options]

  ARCH   llama | qwen3 | olmo2
  DTYPE  bfloat16 | float32 (the dtype save_pretrained stores)
  options: --pad-vocab K (K embedding rows past the tokenizer's ids) --bos TEXT (a special token named as bos_token_id) --heads H --kv-heads K (default 4 and 2) --head-dim D (default 64 / H) --tied --llama3-rope --shard-kb N (sharded
           files and an index) --sliding W (qwen3: every other layer a window of W) --layers L

The weights are transformers' own initialization (seeded), with every RMSNorm gain (QK-norm's
included) drawn around 1 so a gain read into the wrong place shows. The tokenizer files are the
TOKENIZER_JSON given and a tokenizer_config.json naming EOS, so AutoTokenizer reads the folder.
Run with the peers' Python (BUILD/peers).
"""
import argparse
import json
import os
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import (LlamaConfig, LlamaForCausalLM, Olmo2Config,  # noqa: E402
                          Olmo2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("arch", choices=["llama", "qwen3", "olmo2"])
    p.add_argument("dtype", choices=["bfloat16", "float32"])
    p.add_argument("tokenizer")
    p.add_argument("eos")
    p.add_argument("--bos", default="", help="the special token config.json names as bos")
    p.add_argument("--pad-vocab", type=int, default=0)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--head-dim", type=int, default=0)
    p.add_argument("--tied", action="store_true")
    p.add_argument("--llama3-rope", action="store_true")
    p.add_argument("--shard-kb", type=int, default=0)
    p.add_argument("--sliding", type=int, default=0)
    a = p.parse_args()
    with open(a.tokenizer) as f:
        tj = json.load(f)
    vocab = max([v for v in tj["model"]["vocab"].values()] + [t["id"] for t in tj["added_tokens"]]) + 1
    eos = next(t["id"] for t in tj["added_tokens"] if t["content"] == a.eos)
    bos = next((t["id"] for t in tj["added_tokens"] if t["content"] == a.bos), None)
    d = 64
    common = dict(vocab_size=vocab + a.pad_vocab, hidden_size=d, intermediate_size=176,
                  num_hidden_layers=a.layers, num_attention_heads=a.heads,
                  num_key_value_heads=a.kv_heads, head_dim=a.head_dim or d // a.heads,
                  max_position_embeddings=256, tie_word_embeddings=a.tied, rms_norm_eps=1e-5,
                  eos_token_id=eos, bos_token_id=bos, pad_token_id=eos)
    torch.manual_seed(1)
    if a.arch == "llama":
        rope = {"rope_type": "default", "rope_theta": 10000.0}
        if a.llama3_rope:
            rope = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                    "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 64}
        model = LlamaForCausalLM(LlamaConfig(rope_parameters=rope, **common))
    elif a.arch == "olmo2":  # OLMo 2's config has no head_dim unless set (hidden / heads)
        if not a.head_dim:
            del common["head_dim"]
        model = Olmo2ForCausalLM(Olmo2Config(rope_parameters={"rope_type": "default",
                                                              "rope_theta": 500000.0},
                                             **common))
    else:
        extra = {}
        if a.sliding:
            extra = dict(use_sliding_window=True, sliding_window=a.sliding,
                         layer_types=["sliding_attention" if l % 2 == 0 else "full_attention"
                                      for l in range(a.layers)])
        model = Qwen3ForCausalLM(Qwen3Config(rope_parameters={"rope_type": "default",
                                                              "rope_theta": 1e6},
                                             **common, **extra))
    with torch.no_grad():
        for name, w in model.named_parameters():
            if name.endswith("norm.weight"):
                w.copy_(1 + 0.2 * torch.randn_like(w))
    model = model.to(getattr(torch, a.dtype))
    kw = {"max_shard_size": f"{a.shard_kb}KB"} if a.shard_kb else {}
    model.save_pretrained(a.out, safe_serialization=True, **kw)
    shutil.copy(a.tokenizer, os.path.join(a.out, "tokenizer.json"))
    with open(os.path.join(a.out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": False,
                   "add_eos_token": False, "eos_token": a.eos, "pad_token": a.eos,
                   "clean_up_tokenization_spaces": False}, f)
    print(f"{a.arch} {a.dtype}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"vocab {vocab}, files {sorted(os.listdir(a.out))}")


if __name__ == "__main__":
    main()
