#!/usr/bin/env bash
# Scaling of the training step from 1 to 2 processes on this machine (bench/dist_bench.cc:
# config B on a 2 replicas x 1 shard mesh). Three arms, run alternately three times:
#   P=1 x 1 thread, P=2 x 1 thread (one core each), P=1 x 2 threads (the same cores as threads).
# Prints medians, the scaling efficiency T(P=1) / (2 T(P=2)), bytes each process sends per step,
# time in collectives and in state hashing, and checks the trajectory chain is equal in all arms.
#   bench/run_dist_bench.sh [BUILD] [STEPS]
set -euo pipefail
build=${1:-build}
steps=${2:-4}
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-distbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# One core per process when each runs one thread; unbound for one process with two threads.
mpi() {
  local bind=core; [ "$2" -gt 1 ] && bind=none
  mpirun --allow-run-as-root --oversubscribe --bind-to $bind -np "$1" "$build/bench/dist_bench" "$steps" "$2"
}
for round in 1 2 3; do
  mpi 1 1 >> "$out/p1t1.jsonl"
  mpi 2 1 >> "$out/p2t1.jsonl"
  mpi 1 2 >> "$out/p1t2.jsonl"
  echo "round $round: P=1x1 $(tail -1 "$out/p1t1.jsonl" | cut -c1-90)"
  echo "         P=2x1 $(tail -1 "$out/p2t1.jsonl" | cut -c1-90)"
  echo "         P=1x2 $(tail -1 "$out/p1t2.jsonl" | cut -c1-90)"
done
node -e '
const fs = require("fs");
const read = f => fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const [a, b, c] = process.argv.slice(1, 4).map(read);
const chains = new Set([...a, ...b, ...c].map(r => r.chain));
const s1 = med(a.map(r => r.step_s)), s2 = med(b.map(r => r.step_s)), s12 = med(c.map(r => r.step_s));
const n = a[0].parameters;
console.log(`config B, 2x1 mesh, ${n} parameters, median of 3 rounds x ${process.argv[4]} steps:`);
const rss = r => Math.max(...r.per_process.map(p => p.peak_rss_mb));
console.log(`  P=1, 1 thread : ${s1.toFixed(3)} s/step  hashing ${(100 * med(a.map(r => r.hash_s)) / s1).toFixed(2)}%  peak memory ${med(a.map(rss)).toFixed(0)} MB`);
console.log(`  P=2, 1 thread : ${s2.toFixed(3)} s/step  hashing ${(100 * med(b.map(r => r.hash_s)) / s2).toFixed(2)}%  collectives ${med(b.map(r => r.comm_s)).toFixed(3)} s (${(100 * med(b.map(r => r.comm_s)) / s2).toFixed(1)}%)  peak memory per process ${med(b.map(rss)).toFixed(0)} MB`);
console.log(`  P=1, 2 threads: ${s12.toFixed(3)} s/step  hashing ${(100 * med(c.map(r => r.hash_s)) / s12).toFixed(2)}%`);
console.log(`  scaling efficiency P=1 -> 2: ${(s1 / (2 * s2)).toFixed(2)}  (2 processes vs 2 threads: ${(s12 / s2).toFixed(2)}x)`);
const sent = med(b.map(r => r.sent_bytes));
console.log(`  bytes sent per process per step at P=2: ${sent.toFixed(0)} (${(sent / (4 * n)).toFixed(3)} x 4N; N = parameters)`);
console.log(`  trajectory chains equal in all arms: ${chains.size === 1}`);
if (chains.size !== 1) process.exit(1);
' "$out/p1t1.jsonl" "$out/p2t1.jsonl" "$out/p1t2.jsonl" "$steps"
