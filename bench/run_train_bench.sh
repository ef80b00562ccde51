#!/usr/bin/env bash
# Training-step time of trail vs PyTorch CPU on the same architecture and shapes (L=6, d=384,
# 6 heads, vocab 16384, T=256, B=8; bench/train_bench.cc, bench/train_bench_torch.py), 2 threads
# each, run alternately three times; prints medians and the ratio. PyTorch is set up at its
# best here: the OpenMP build of OpenBLAS with its best kernels for this CPU (bench/openblas_core.sh
# chooses them from the CPU's flags and prints the choice), and torch.set_num_threads(2). trail also runs the same model with int8 quantization-aware training
# of the block matrices (int8 backward GEMMs, and fp32 backward GEMMs), compared with its fp32 step.
# MODEL gpt2-small runs the gpt2-small preset instead (12 × 768, vocabulary 50257, T=128, B=8).
#   bench/run_train_bench.sh [BUILD] [STEPS] [B|gpt2-small]
set -euo pipefail
build=${1:-build}
steps=${2:-5}
model=${3:-B}
here=$(cd "$(dirname "$0")" && pwd)
omp=/usr/lib/x86_64-linux-gnu/openblas-openmp
. "$here/openblas_core.sh"
torch_env=(OMP_NUM_THREADS=2)
[ -n "$OPENBLAS_CORE" ] && torch_env+=(OPENBLAS_CORETYPE=$OPENBLAS_CORE)
[ -e "$omp/libblas.so.3" ] && torch_env+=(LD_LIBRARY_PATH=$omp)
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-trainbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
for round in 1 2 3; do
  "$build/bench/train_bench" "$steps" 2 fp32 - "$model" >> "$out/trail.jsonl"
  env "${torch_env[@]}" /usr/bin/python3 "$here/train_bench_torch.py" "$steps" 2 "$model" >> "$out/torch.jsonl"
  "$build/bench/train_bench" "$steps" 2 int8 - "$model" >> "$out/int8.jsonl"
  "$build/bench/train_bench" "$steps" 2 int8-fp32bw - "$model" >> "$out/int8-fp32bw.jsonl"
  echo "round $round: trail $(tail -1 "$out/trail.jsonl")"
  echo "         torch $(tail -1 "$out/torch.jsonl")"
  echo "         int8  $(tail -1 "$out/int8.jsonl")"
  echo "   int8-fp32bw $(tail -1 "$out/int8-fp32bw.jsonl")"
done
node -e '
const fs = require("fs");
const read = f => fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const t = read(process.argv[1]), p = read(process.argv[2]);
const ts = med(t.map(r => r.step_s)), ps = med(p.map(r => r.step_s));
const tokens = t[0].tok_s * t[0].step_s;
console.log(`${t[0].model}: step time (median of 3 rounds x ${process.argv[3]} steps), 2 threads:`);
console.log(`  trail   ${ts.toFixed(3)} s/step  ${(tokens / ts).toFixed(0)} tok/s  (bit-reproducible)`);
console.log(`  PyTorch ${ps.toFixed(3)} s/step  ${(tokens / ps).toFixed(0)} tok/s  (bitwise 1 vs 2 threads: ${p[0].bitwise_1_vs_2_threads})`);
console.log(`  trail / PyTorch tokens/s: ${(ps / ts).toFixed(2)}x`);
console.log(`  state hashing: ${(100 * med(t.map(r => r.hash_share))).toFixed(1)}% of the step (${med(t.map(r => r.hash_s)).toFixed(3)} s)`);
console.log(`  peak memory: trail ${med(t.map(r => r.peak_rss_mb)).toFixed(0)} MB, PyTorch ${med(p.map(r => r.peak_rss_mb)).toFixed(0)} MB`);
if (t[0].model === "B")
  console.log(`  logical mesh 2 replicas x 2 shards vs 1 x 1 on the same windows: +${(100 * med(t.map(r => r.mesh_overhead))).toFixed(1)}% step time`);
for (const arm of ["int8", "int8-fp32bw"]) {
  const q = read(process.argv[4] + "/" + arm + ".jsonl"), qs = med(q.map(r => r.step_s));
  console.log(`  trail ${arm} QAT ${qs.toFixed(3)} s/step: ${(ts / qs).toFixed(2)}x trail fp32, ${(ps / qs).toFixed(2)}x PyTorch fp32`);
}
' "$out/trail.jsonl" "$out/torch.jsonl" "$steps" "$out"
