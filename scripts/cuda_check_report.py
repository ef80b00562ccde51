#!/usr/bin/env python3
"""Assembles scripts/check-cuda.sh's outputs (OUT_DIR) into one JSON report on stdout:
{"summary": {...}, "golden": ..., "training": ..., "replay": ..., "bench": ...}.
Usage: cuda_check_report.py OUT_DIR SECONDS"""
import datetime
import json
import os
import sys

out, seconds = sys.argv[1], int(sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))


def read(name, default=None):
    try:
        return open(os.path.join(out, name)).read().strip()
    except OSError:
        return default


def read_json(name):
    text = read(name)
    try:
        return json.loads(text) if text else None
    except ValueError:
        return {"unparsed": text[-2000:]}


def golden():
    st = read_json("selftest.json")
    names = []
    for f in ("repops.txt", "training.txt"):
        for line in open(os.path.join(here, "..", "goldens", f)):
            if line.strip() and not line.startswith("#"):
                names.append(("train." if f == "training.txt" else "") + line.split()[0])
    if not st or "runs" not in st:
        return {"ran": False, "rc": read("selftest.rc"), "error": read("selftest.err", "")[-2000:]}
    bad = set()
    for run in st["runs"]:
        bad.update(m.split(" ")[0] for m in run.get("mismatched", []))
    return {"ran": True, "reproduces": st.get("reproduces"), "device": st.get("device"),
            "cases": {n: ("mismatch" if n in bad else "pass") for n in names},
            "mismatched": sorted(bad), "rc": read("selftest.rc")}


def training():
    res = {}
    for r in ("fp32", "int8", "int8-learned"):
        res[r] = {"rc": read(f"train-{r}.rc"), "trajectory": read(f"train-{r}.verdict"),
                  "log_tail": (read(f"train-{r}.log", "") or "")[-1500:]}
        if res[r]["trajectory"] == "differ":
            res[r]["first_step"] = read(f"train-{r}.first-step")
            res[r]["bisect"] = read_json(f"bisect-{r}.json")
    return res


def bench():
    b = {"gemm": read_json("gemm-bench.json"), "gemm_err": (read("gemm-bench.err", "") or "")[-1500:]}
    for k in ("step-trail-fp32", "step-trail-int8", "step-torch-fp32", "step-torch-bf16"):
        b[k] = read_json(f"{k}.json") or {"error": (read(f"{k}.err", "") or "")[-1500:]}
    return b


def ratios(bn):
    r = {}
    g = bn.get("gemm") or {}
    for case in g.get("fp32", []) if isinstance(g, dict) else []:
        r[f"fp32 gemm {case['shape']} (trail/cuBLAS)"] = round(case["cublas_ms"] / case["matmul_ms"], 3)
    for case in g.get("int8", []) if isinstance(g, dict) else []:
        r[f"int8 gemm {case['shape']} (trail/cuBLAS)"] = round(case["cublas_ms"] / case["bt_ms"], 3)
        if "tensor_cores_ms" in case:
            r[f"int8 gemm {case['shape']} tensor cores (trail/cuBLAS)"] = round(
                case["cublas_ms"] / case["tensor_cores_ms"], 3)
    tok = lambda k: (bn.get(k) or {}).get("tok_s")
    pairs = [("trail fp32 / torch fp32", "step-trail-fp32", "step-torch-fp32"),
             ("trail int8 / torch bf16", "step-trail-int8", "step-torch-bf16"),
             ("trail fp32 / torch bf16", "step-trail-fp32", "step-torch-bf16")]
    for name, a, c in pairs:
        if tok(a) and tok(c):
            r[f"step tokens/s {name}"] = round(tok(a) / tok(c), 3)
    for k in ("step-trail-fp32", "step-trail-int8"):
        if isinstance(bn.get(k), dict) and "hash_share" in bn[k]:
            r[f"state hash share of the step ({k[11:]})"] = bn[k]["hash_share"]
    return r


g, t, bn = golden(), training(), bench()
replay = read_json("replay.json")
report = {
    "date": datetime.date.today().isoformat(),
    "gpu": read("nvidia-smi.txt"),
    "seconds": seconds,
    "golden": g, "training": t,
    "replay": {"rc": read("replay.rc"), "report": replay,
               "error": (read("replay.err", "") or "")[-1500:]},
    "bench": bn,
}
tc = read_json("selftest-int8-tc.json") or {}
report["golden_int8_tensor_cores"] = tc
report["summary"] = {
    "golden_reproduces": g.get("reproduces"),
    "golden_reproduces_int8_tensor_cores": tc.get("reproduces"),
    "golden_mismatched": g.get("mismatched"),
    "training_same_bits": {r: v["trajectory"] for r, v in t.items()},
    "cpu_run_replays_on_gpu": read("replay.rc") == "0",
    "ratios": ratios(bn),
    "seconds": seconds,
}
print(json.dumps(report, indent=1))
