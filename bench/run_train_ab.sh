#!/usr/bin/env bash
# The training step of two builds side by side (e.g. a change against the commit before it):
# configuration B (bench/train_bench.cc), fp32 and int8 QAT, 2 threads, the builds alternating
# round by round so the machine's drift cancels in the ratios. Prints each arm's median step
# time per build and NEW's speed relative to OLD (above 1: NEW is faster).
#   bench/run_train_ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [STEPS]
# Build the old one with, e.g.:
#   git worktree add /tmp/old <commit> && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release -DTRAIL_BUILD_TESTS=OFF && cmake --build /tmp/old/build --target train_bench
set -euo pipefail
old=${1:?usage: run_train_ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [STEPS]}
new=${2:?usage: run_train_ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [STEPS]}
rounds=${3:-5}
steps=${4:-5}
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-trainab-XXXXXX")
trap 'rm -rf "$out"' EXIT
for round in $(seq "$rounds"); do
  for arm in fp32 int8; do
    "$old/bench/train_bench" "$steps" 2 "$arm" - B >> "$out/old-$arm.jsonl" 2> /dev/null
    "$new/bench/train_bench" "$steps" 2 "$arm" - B >> "$out/new-$arm.jsonl" 2> /dev/null
  done
  echo "round $round of $rounds done" >&2
done
node -e '
const fs = require("fs"), dir = process.argv[1];
const read = f => fs.readFileSync(`${dir}/${f}`, "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const arm of ["fp32", "int8"]) {
  const o = read(`old-${arm}.jsonl`).map(r => r.step_s), n = read(`new-${arm}.jsonl`).map(r => r.step_s);
  const ratios = o.map((x, i) => x / n[i]);
  console.log(`${arm.padEnd(5)} old ${med(o).toFixed(3)} s/step, new ${med(n).toFixed(3)} s/step: ` +
              `new at ${(med(o) / med(n)).toFixed(3)}x old (per round ${ratios.map(r => r.toFixed(3)).join(", ")})`);
}
' "$out"
