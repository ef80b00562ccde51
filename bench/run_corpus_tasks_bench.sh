#!/usr/bin/env bash
# The corpus build in tasks on this machine: the bench corpus of run_corpus_bench.sh (fortunes in
# 12 languages, the UDHR in HTML, the KJV) built in one process on one thread, and as 2 read
# tasks run at once (one thread each) plus the final phase (one thread), alternating, ROUNDS
# times (default 3). Prints each round's wall times, the medians, the scaling efficiency
# (one-process time / (2 × two-task time)), and per phase the bytes it reads and writes: the
# figures docs/performance.md scales to 1 TB.
#   bench/run_corpus_tasks_bench.sh [BUILD] [ROUNDS]
set -euo pipefail
build=${1:-build}; rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
trail=$(cd "$build/src/cli" && pwd)/trail
assets=$(cd "$build/assets" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpustasksbench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
. "$here/../scripts/corpus-inputs.sh"
bench_corpus_toml "$assets" > corpus.toml
now() { date +%s.%N; }
one=(); read=(); final=()
for r in $(seq 1 "$rounds"); do
  rm -rf a b
  t0=$(now); "$trail" corpus build --config corpus.toml --out a --threads 1 --quiet > a.json 2> /dev/null; t1=$(now)
  one+=("$(echo "$t1 - $t0" | bc)")
  t0=$(now)
  "$trail" corpus build --config corpus.toml --out b --task 0 --tasks 2 --quiet 2> /dev/null &
  "$trail" corpus build --config corpus.toml --out b --task 1 --tasks 2 --quiet 2> /dev/null
  wait
  t1=$(now)
  task_bytes=$(du -sb b/.tasks | cut -f1)
  "$trail" corpus build --config corpus.toml --out b --tasks 2 --threads 1 --quiet > b.json 2> /dev/null
  t2=$(now)
  read+=("$(echo "$t1 - $t0" | bc)"); final+=("$(echo "$t2 - $t1" | bc)")
  cmp -s <(cd a && find train validation test -type f | sort | xargs cat) \
         <(cd b && find train validation test -type f | sort | xargs cat) \
    || { echo "FAIL: the two-task build's shards differ" >&2; exit 1; }
  echo "round $r: one process ${one[-1]} s; 2 tasks: read phase ${read[-1]} s + final ${final[-1]} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
m1=$(median "${one[@]}"); mr=$(median "${read[@]}"); mf=$(median "${final[@]}")
in_bytes=$(node -e 'console.log(require(process.argv[1]).bytes_in)' "$dir/a.json")
out_bytes=$(cd b && du -cb train validation test lineage.sqlite | tail -1 | cut -f1)
echo "medians: one process $m1 s; 2 tasks $mr s (read) + $mf s (final) = $(echo "$mr + $mf" | bc) s"
echo "scaling 1 -> 2 tasks: speedup $(echo "scale=2; $m1 / ($mr + $mf)" | bc), efficiency $(echo "scale=2; $m1 / (2 * ($mr + $mf))" | bc); read phase alone: efficiency $(echo "scale=2; ($m1 - $mf) / (2 * $mr)" | bc)"
echo "bytes: input $in_bytes; read tasks' outputs (document runs, quarantine, manifests) $task_bytes; final phase writes $out_bytes (shards + lineage)"
node -e '
const r = require(process.argv[1]);
const per = {}; for (const s of r.stages) per[s.stage] = s.seconds;
const fin = ["exact_dedup", "near_dedup", "pii_decontamination", "shards"].reduce((a, k) => a + (per[k] || 0), 0) + r.lineage_seconds;
console.log(`final phase stage times (1 thread): merge+exact ${per.exact_dedup.toFixed(3)} s, near dedup ${per.near_dedup.toFixed(3)} s, ` +
            `PII+decontamination ${per.pii_decontamination.toFixed(3)} s, shards ${per.shards.toFixed(3)} s, lineage ${r.lineage_seconds.toFixed(3)} s; ` +
            `documents ${r.documents}, kept ${r.kept}, candidate pairs ${r.near_dedup.candidate_pairs}`);
' "$dir/b.json"
