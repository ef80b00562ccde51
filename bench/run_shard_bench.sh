#!/usr/bin/env bash
# Parameter sharding and activation recomputation on 2 processes (bench/dist_bench.cc: a 2 x 1
# mesh, one core and one thread a process). Five arms, run alternately three times: whole or
# sharded parameters ([mesh] shard_params), each with and without recomputation, and sharded
# with each layer gathered when it is needed instead of ahead (TRAIL_GATHER_AHEAD=0). Prints median
# step times, the cost of sharding and of recomputation against the whole-parameter run, each
# arm's peak memory per process, and checks that the trajectory chain is equal in all arms.
#   bench/run_shard_bench.sh [BUILD] [B|gpt2-small] [STEPS]
set -euo pipefail
build=${1:-build}
model=${2:-B}
steps=${3:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-shardbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
arms=("whole none 1" "sharded none 1" "sharded none 0" "whole layers 1" "sharded layers 1")
for round in 1 2 3; do
  for arm in "${arms[@]}"; do
    set -- $arm
    name=$1-$2; [ "$3" = 1 ] || name=$1-inline-$2
    TRAIL_GATHER_AHEAD=$3 mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 \
      -x TRAIL_GATHER_AHEAD "$build/bench/dist_bench" "$steps" 1 "$model" "$1" "$2" >> "$out/$name.jsonl"
    echo "round $round: $name: $(tail -1 "$out/$name.jsonl" | cut -c1-80)"
  done
done
node -e '
const fs = require("fs");
const [dir, model, steps] = process.argv.slice(1);
const read = f => fs.readFileSync(`${dir}/${f}.jsonl`, "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const arms = ["whole-none", "sharded-none", "sharded-inline-none", "whole-layers", "sharded-layers"]
  .map(a => [a, read(a)]);
const base = med(arms[0][1].map(r => r.step_s));
const n = arms[0][1][0].parameters;
console.log(`${model}, 2 processes x 1 thread, 2x1 mesh, ${n} parameters (${(4 * n / 2 ** 20).toFixed(0)} MiB), median of 3 rounds x ${steps} steps:`);
for (const [name, rs] of arms) {
  const s = med(rs.map(r => r.step_s));
  const rss = med(rs.map(r => Math.max(...r.per_process.map(p => p.peak_rss_mb))));
  console.log(`  ${name.padEnd(19)} ${s.toFixed(3)} s/step (${(100 * (s / base - 1)).toFixed(1).padStart(5)}%)` +
              `  collectives ${med(rs.map(r => r.comm_s)).toFixed(3)} s  sent ${(med(rs.map(r => r.sent_bytes)) / 2 ** 20).toFixed(0)} MiB/step` +
              `  peak memory per process ${rss.toFixed(0)} MiB (${(rss / (4 * n / 2 ** 20)).toFixed(1)}x the parameters)`);
}
const chains = new Set(arms.flatMap(([, rs]) => rs.map(r => r.chain)));
console.log(`  trajectory chains equal in all arms: ${chains.size === 1}`);
if (chains.size !== 1) process.exit(1);
' "$out" "$model" "$steps"
