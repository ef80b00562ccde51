"""Hugging Face transformers reads trail's export: run with the peers' Python (BUILD/peers).

Usage: transformers_check.py HF_DIR PROBE GREEDY_JSON LINES IDS_JSONL

  HF_DIR       `trail export --format hf` of a trained run
  PROBE        probe_for_test's output prefix over trail's greedy sequence (PROBE.json: ids;
               PROBE.logits: trail's float32 logits [n, V])
  GREEDY_JSON  `trail generate --temperature 0 --json` (prompt_ids, ids)
  LINES        text, one line per request, and IDS_JSONL trail's ids of each line
               (`trail tokenizer encode --lines`)

Checks, each printed with its numbers; exit 1 on the first that fails:
  - the load report: no missing, unexpected or mismatched weights, no error messages;
  - the tokenizer: AutoTokenizer(text) gives trail's ids on every line, and decodes them back;
  - the logits over trail's greedy sequence, against trail's: see LOGIT_BOUND;
  - model.generate(do_sample=False) from trail's prompt gives trail's greedy tokens, or departs
    from them only where trail's own two best logits are a near-tie (NEAR_TIE).
Everything offline: HF_HUB_OFFLINE=1, the folder read from disk.
"""
import json
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from transformers.utils import logging  # noqa: E402

logging.disable_progress_bar()

# Both sides compute the same function in float32: each logit is a sum of d_model products
# after a few norms and attentions, so each side's rounding error is a few float32 ulps of the
# largest magnitudes it sums (trail measured ~1e-6 of max |logit| against a float64 reference
# in src/infer/export_test.cc). Against HF's own float64 run trail must stay within 1e-5 of max
# |logit| (the export test's bound); against HF's float32 run, which adds its own error of the
# same size, within 2e-5. A wrong convention (a norm misplaced, a rotary layout) costs 1e-1.
LOGIT_BOUND_F64 = 1e-5
LOGIT_BOUND_F32 = 2e-5
# A greedy departure is a near-tie when trail's two best logits at that position differ by
# less than the float32 disagreement allowed above (the two sides may order them either way).
NEAR_TIE = LOGIT_BOUND_F32


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load(hf_dir, dtype):
    model, info = AutoModelForCausalLM.from_pretrained(
        hf_dir, dtype=dtype, attn_implementation="eager", output_loading_info=True,
        local_files_only=True)
    return model.eval(), info


def check_load_report(info):
    bad = {k: v for k, v in info.items() if v}
    if bad:
        fail(f"the load report is not clean: {bad}")
    print("load report: no missing, unexpected or mismatched weights")


def check_tokenizer(hf_dir, lines_path, ids_path):
    tok = AutoTokenizer.from_pretrained(hf_dir, local_files_only=True)
    with open(lines_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    with open(ids_path) as f:
        want = [json.loads(l) for l in f if l.strip()]
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(want):
        fail(f"{len(lines)} lines but {len(want)} id lists")
    n_tokens = 0
    for i, (line, ids) in enumerate(zip(lines, want)):
        got = tok(line)["input_ids"]
        if got != ids:
            fail(f"line {i + 1} {line[:60]!r}: transformers gives {got[:12]}..., trail {ids[:12]}...")
        if tok.decode(got) != line:
            fail(f"line {i + 1}: decode does not give the text back")
        n_tokens += len(ids)
    print(f"tokenizer: {type(tok).__name__} gives trail's ids on {len(lines)} lines "
          f"({n_tokens} tokens) and decodes them back")


def check_logits(model64, model32, probe):
    with open(probe + ".json") as f:
        meta = json.load(f)
    ids, V = meta["ids"], meta["vocab"]
    trail = np.fromfile(probe + ".logits", dtype="<f4").reshape(len(ids), V).astype(np.float64)
    x = torch.tensor([ids])
    with torch.no_grad():
        hf64 = model64(x).logits[0].numpy()
        hf32 = model32(x).logits[0].double().numpy()
    scale = np.abs(hf64).max()
    d64, d32 = np.abs(trail - hf64).max(), np.abs(trail - hf32).max()
    hf_own = np.abs(hf32 - hf64).max()
    print(f"logits over {len(ids)} positions x {V}: max |logit| {scale:.4g}; max |trail - HF f64| "
          f"{d64:.3g} ({d64 / scale:.2g} of max), max |trail - HF f32| {d32:.3g} "
          f"({d32 / scale:.2g}); HF f32 vs its f64 {hf_own:.3g} ({hf_own / scale:.2g})")
    if d64 > LOGIT_BOUND_F64 * scale:
        fail(f"trail's logits are {d64 / scale:.3g} of max |logit| from HF's float64 run "
             f"(bound {LOGIT_BOUND_F64})")
    if d32 > LOGIT_BOUND_F32 * scale:
        fail(f"trail's logits are {d32 / scale:.3g} of max |logit| from HF's float32 run "
             f"(bound {LOGIT_BOUND_F32})")
    return trail, scale


def check_greedy(model32, greedy_path, trail_logits, scale):
    with open(greedy_path) as f:
        g = json.load(f)
    prompt, want = g["prompt_ids"], g["ids"]
    with torch.no_grad():
        out = model32.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt),
                               dtype=torch.long), do_sample=False, max_new_tokens=len(want),
                               pad_token_id=model32.generation_config.eos_token_id)
    got = out[0, len(prompt):].tolist()
    same = 0
    while same < min(len(got), len(want)) and got[same] == want[same]:
        same += 1
    if same == len(want) and len(got) == len(want):
        print(f"generate(do_sample=False): trail's {len(want)} greedy tokens exactly")
        return
    if same >= len(got) or same >= len(want):
        fail(f"generate gave {len(got)} tokens, trail {len(want)}; equal for {same}")
    # Row of trail's logits that chose want[same]: the probe's sequence is prompt + want[:-1].
    row = trail_logits[len(prompt) - 1 + same]
    top2 = np.sort(row)[-2:]
    gap = top2[1] - top2[0]
    if gap > NEAR_TIE * scale:
        fail(f"generate departs from trail's greedy tokens at new token {same} "
             f"({got[same]} vs {want[same]}), where trail's two best logits differ by {gap:.3g}")
    print(f"generate(do_sample=False): trail's greedy tokens for {same} of {len(want)}, then a "
          f"near-tie (trail's two best logits {gap:.3g} apart)")


def main():
    hf_dir, probe, greedy, lines, ids = sys.argv[1:6]
    torch.set_num_threads(2)
    model32, info = load(hf_dir, torch.float32)
    check_load_report(info)
    model64, _ = load(hf_dir, torch.float64)
    check_tokenizer(hf_dir, lines, ids)
    trail_logits, scale = check_logits(model64, model32, probe)
    check_greedy(model32, greedy, trail_logits, scale)


if __name__ == "__main__":
    main()
