"""lm-eval's scores of the HF export against `trail eval`'s, request by request; run with the
peers' Python (BUILD/peers).

Usage: lm_eval_compare.py HF_DIR LM_EVAL_OUT TRAIL_REPORT TASKS_DIR LMNAME=TRAILNAME...

  HF_DIR        the export lm-eval scored (`--model hf`)
  LM_EVAL_OUT   lm-eval's --output_path (its results_*.json and --log_samples samples_*.jsonl)
  TRAIL_REPORT  `trail eval --out` report; its requests file beside it
  TASKS_DIR     tests/peers/olmes_to_lm_eval.py's output: LMNAME.pairs.jsonl, and
                LMNAME.trail-ids.jsonl (probe_for_test's pair encoding of those pairs)

For every request of every task pair, exit 1 on the first check that fails:
  - lm-eval's arguments are the OLMES (context, continuation) pair trail scored;
  - lm-eval's token ids (HFLM._encode_pair, the encoding its loglikelihood requests use) are
    trail's context and continuation ids, and both drop the same context tokens to the window;
  - the log-likelihoods agree within LOGLIK_BOUND; is_greedy is the same;
  - per task, lm-eval's acc equals trail's acc_raw and (one context per document) its acc_norm
    trail's acc_per_char.
"""
import glob
import json
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

# A log-likelihood is a sum over the continuation's n tokens of logit - lse. The transformers
# check (tests/peers/transformers_check.py) bounds each side's logits to 2e-5 of max |logit|
# of each other, and measures ~1e-5 absolute on these models (max |logit| ~5), so each token's
# log-prob differs by ~2e-5 at most: 1e-4 per token leaves a 5x margin. lm-eval adds the n
# float32 log-probs in float32 (trail in float64), which adds up to n float32 roundings of the
# running sum: 2^-24 |LL| each.
LOGLIK_PER_TOKEN = 1e-4
SUM_ROUNDING = 2.0 ** -24


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def lm_eval_files(out_dir, task):
    samples = glob.glob(os.path.join(out_dir, "**", f"samples_{task}_*.jsonl"), recursive=True)
    results = glob.glob(os.path.join(out_dir, "**", "results_*.json"), recursive=True)
    if len(samples) != 1 or len(results) != 1:
        fail(f"lm-eval's output in {out_dir}: {len(samples)} sample files of {task}, "
             f"{len(results)} results files (expected one each)")
    with open(results[0]) as f:
        return read_jsonl(samples[0]), json.load(f)["results"][task]


def lm_eval_requests(samples):
    """(doc_id, idx) -> (context, continuation, loglik, is_greedy) from lm-eval's samples."""
    out = {}
    for s in samples:
        doc_id = s["doc"]["doc_id"]
        for i, (args, resp) in enumerate(zip(s["arguments"].values(), s["resps"])):
            ll, greedy = resp[0]
            out[(doc_id, i)] = (args["arg_0"], args["arg_1"], float(ll), greedy == "True")
    return out


class Stats:
    def __init__(self):
        self.requests = 0
        self.max_dll = 0.0
        self.max_ratio = 0.0  # of the bound


def compare_task(lm, lm_name, trail_name, tasks_dir, out_dir, trail_reqs, trail_metrics, st):
    samples, results = lm_eval_files(out_dir, lm_name)
    lm_reqs = lm_eval_requests(samples)
    pairs = read_jsonl(os.path.join(tasks_dir, lm_name + ".pairs.jsonl"))
    ids = read_jsonl(os.path.join(tasks_dir, lm_name + ".trail-ids.jsonl"))
    if len(pairs) != len(ids) or len(lm_reqs) != len(pairs):
        fail(f"{lm_name}: {len(pairs)} requests, {len(ids)} trail encodings, {len(lm_reqs)} "
             "scored by lm-eval")
    for p, t_ids in zip(pairs, ids):
        key = (p["doc_id"], p["idx"])
        where = f"{lm_name} document {key[0]} choice {key[1]}"
        ctx, cont, ll, greedy = lm_reqs[key]
        if (ctx, cont) != (p["context"], p["continuation"]):
            fail(f"{where}: lm-eval's request is not OLMES's")
        c_ids, k_ids = lm._encode_pair(ctx, cont)
        if (c_ids, k_ids) != (t_ids["context"], t_ids["continuation"]):
            fail(f"{where}: lm-eval's ids {c_ids[-8:]} | {k_ids} differ from trail's "
                 f"{t_ids['context'][-8:]} | {t_ids['continuation']}")
        t = trail_reqs.get((trail_name, *key))
        if t is None:
            fail(f"{where}: not in trail's requests file (task {trail_name})")
        dropped = max(0, len(c_ids) + len(k_ids) - (lm.max_length + 1))
        if dropped != t["truncated"] or len(k_ids) != t["continuation_tokens"]:
            fail(f"{where}: lm-eval's window drops {dropped} context tokens, trail's "
                 f"{t['truncated']}")
        dll = abs(ll - t["loglik"])
        bound = len(k_ids) * (LOGLIK_PER_TOKEN + SUM_ROUNDING * abs(t["loglik"]))
        if dll > bound:
            fail(f"{where}: log-likelihood {ll!r} (lm-eval) vs {t['loglik']!r} (trail): "
                 f"|diff| {dll:.3g} > {bound:.3g}")
        if greedy != t["greedy"]:
            fail(f"{where}: is_greedy {greedy} (lm-eval) vs {t['greedy']} (trail)")
        st.requests += 1
        st.max_dll = max(st.max_dll, dll)
        st.max_ratio = max(st.max_ratio, dll / bound)
    m = trail_metrics[trail_name]
    checks = [("acc", "acc_raw")]
    if "context" in samples[0]["doc"]:  # one context per document: acc_norm is per character
        checks.append(("acc_norm", "acc_per_char"))
    shown = []
    for lm_metric, trail_metric in checks:
        a, b = results[f"{lm_metric},none"], m[trail_metric]
        if abs(a - b) > 1e-12:
            fail(f"{lm_name}: lm-eval's {lm_metric} {a} but trail's {trail_metric} {b}")
        shown.append(f"{lm_metric} = {trail_metric} = {a:.4f}")
    print(f"{lm_name} ({trail_name}): {len(pairs)} requests, {len(samples)} documents; "
          + "; ".join(shown))


def main():
    hf_dir, out_dir, report_path, tasks_dir = sys.argv[1:5]
    with open(report_path) as f:
        report = json.load(f)
    req_path = os.path.join(os.path.dirname(report_path), report["requests_file"])
    trail_reqs = {(r["task"], r["doc_id"], r["idx"]): r for r in read_jsonl(req_path)}
    trail_metrics = {t["task"]: t["metrics"] for t in report["tasks"]}
    from lm_eval.models.huggingface import HFLM
    lm = HFLM(pretrained=hf_dir, dtype="float32", device="cpu", batch_size=1)
    st = Stats()
    for spec in sys.argv[5:]:
        lm_name, trail_name = spec.split("=", 1)
        compare_task(lm, lm_name, trail_name, tasks_dir, out_dir, trail_reqs, trail_metrics, st)
    print(f"all {st.requests} requests: the same pairs, ids, windows and is_greedy; max |Δ "
          f"log-likelihood| {st.max_dll:.3g} ({100 * st.max_ratio:.1f}% of its bound)")


if __name__ == "__main__":
    main()
