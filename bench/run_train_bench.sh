#!/usr/bin/env bash
# Training-step time of trail vs current PyTorch on the CPU, same architecture and shapes (L=6,
# d=384, 6 heads, vocab 16384, T=256, B=8; bench/train_bench.cc, bench/train_bench_torch.py),
# 2 threads each, every arm run in turn in each of three rounds; prints medians, ratios and each
# arm's model-FLOPs utilization (MFU) against this machine's measured fp32 FMA peak
# (bench/fma_peak.cc), so the ratios can be read across machines.
# PyTorch is the peers' (BUILD/peers: scripts/install-peers.sh; its wheels bring MKL and
# oneDNN) at its best here: torch.set_num_threads(2), flash attention
# (scaled_dot_product_attention), the fused AdamW; eager, torch.compile (inductor), and bf16
# autocast where the CPU has bf16 instructions. trail runs fp32, and int8 quantization-aware
# training of the block matrices (int8 backward GEMMs, and fp32 backward GEMMs).
# MODEL gpt2-small runs the gpt2-small preset instead (12 × 768, vocabulary 50257, T=128, B=8).
#   bench/run_train_bench.sh [BUILD] [STEPS] [B|gpt2-small]
set -euo pipefail
build=${1:-build}
steps=${2:-5}
model=${3:-B}
here=$(cd "$(dirname "$0")" && pwd)
python=$build/peers/bin/python
"$python" -c "import torch" 2>/dev/null \
  || { echo "run_train_bench: no PyTorch in $python (make peers installs it)" >&2; exit 1; }
torch_arms=("fp32 eager" "fp32 compile")
grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo && torch_arms+=("bf16 eager")
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-trainbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
"$build/bench/fma_peak" 2 > "$out/peak.json"
echo "fp32 FMA peak, 2 threads: $(cat "$out/peak.json")"
for round in 1 2 3; do
  for arm in fp32 int8 int8-fp32bw; do
    "$build/bench/train_bench" "$steps" 2 $arm - "$model" >> "$out/trail-$arm.jsonl"
    echo "round $round: trail $arm $(tail -1 "$out/trail-$arm.jsonl")"
  done
  for arm in "${torch_arms[@]}"; do
    f=$out/torch-${arm// /-}.jsonl
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=2 "$python" "$here/train_bench_torch.py" "$steps" 2 "$model" cpu $arm >> "$f"
    echo "round $round: torch $arm $(tail -1 "$f")"
  done
done
node - "$out" "$steps" "$model" <<'JS'
const fs = require("fs"), path = require("path");
const [out, steps, model] = process.argv.slice(2);
const read = f => fs.readFileSync(path.join(out, f), "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
// Model FLOPs of one step (fwd + bwd = 3 x fwd): 2 FLOPs per multiply-add of every matrix
// product — the block matrices (4 d^2 + 2 d ff per layer) and the head (d V) on every token, and
// attention's QK^T and AV (4 T d per token per layer, the full square as MFU counts it). The
// same count for every arm: for bf16 and int8 arms the figure is throughput in fp32 terms, not
// the utilization of their own (faster) units.
const dims = {B: {L: 6, d: 384, ff: 1536, V: 16384, T: 256, B: 8},
              "gpt2-small": {L: 12, d: 768, ff: 3072, V: 50257, T: 128, B: 8}}[model];
const tokens = dims.B * dims.T;
const flops = 3 * 2 * tokens * (dims.L * (4 * dims.d * dims.d + 2 * dims.d * dims.ff +
                                          2 * dims.T * dims.d) + dims.d * dims.V);
const peak = JSON.parse(fs.readFileSync(path.join(out, "peak.json"))).gflops * 1e9;
const arms = fs.readdirSync(out).filter(f => f.endsWith(".jsonl")).map(f => {
  const r = read(f), s = med(r.map(x => x.step_s));
  return {name: f.replace(".jsonl", ""), s, rounds: r.map(x => x.step_s.toFixed(3)).join(", "),
          rss: med(r.map(x => x.peak_rss_mb)), first: r[0]};
});
const get = n => arms.find(a => a.name === n);
const base = get("torch-fp32-eager"), fp32 = get("trail-fp32");
console.log(`${model}: step time, median of 3 rounds x ${steps} steps, 2 threads; ` +
            `${(flops / 1e9).toFixed(1)} GFLOP/step; peak ${(peak / 1e9).toFixed(0)} GFLOP/s`);
for (const a of arms) {
  const mfu = flops / a.s / peak;
  console.log(`  ${a.name.padEnd(20)} ${a.s.toFixed(3)} s/step  ${(tokens / a.s).toFixed(0)} tok/s  ` +
              `MFU ${(100 * mfu).toFixed(1)}%  ${(base.s / a.s).toFixed(2)}x PyTorch eager  ` +
              `${(fp32.s / a.s).toFixed(2)}x trail fp32  peak RSS ${a.rss.toFixed(0)} MB  (${a.rounds})`);
}
// (trail's own bits across threads and SIMD targets are checked by ctest, not here.)
console.log(`  PyTorch ${base.first.torch}; its parameters bitwise equal after 2 steps on 1 and ` +
            `2 threads: ${base.first.bitwise_1_vs_2_threads}`);
console.log(`  trail state hashing: ${(100 * med(read("trail-fp32.jsonl").map(r => r.hash_share))).toFixed(1)}% of the step`);
if (model === "B")
  console.log(`  logical mesh 2 replicas x 2 shards vs 1 x 1 on the same windows: +${(100 * med(read("trail-fp32.jsonl").map(r => r.mesh_overhead))).toFixed(1)}% step time`);
JS
