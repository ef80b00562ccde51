#!/usr/bin/env bash
# The corpus pipeline on a real mixed corpus (fortunes in 12 languages, the UDHR in HTML, the
# KJV as one 4.4 MB document), one thread: MB/s of input per stage and end to end, and peak
# memory; then the same build under an 8 MiB memory budget (same shards, its wall time and peak).
#   bench/run_corpus_bench.sh [BUILD]
set -euo pipefail
build=${1:-build}
assets=$(cd "$build/assets" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpusbench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../scripts/corpus-inputs.sh"
bench_corpus_toml "$assets" > "$dir/corpus.toml"
/usr/bin/time -f "%M" -o "$dir/rss" "$build/src/cli/trail" corpus build --config "$dir/corpus.toml" \
  --out "$dir/out" --threads 1 > "$dir/report.json"
node -e '
const r = require(process.argv[1]); const rss = Number(process.argv[2]);
const mb = r.bytes_in / 1e6; let total = 0;
console.log(`input ${mb.toFixed(1)} MB, ${r.documents} documents, ${r.kept} kept, ${r.shards} shards; peak RSS ${(rss / 1024).toFixed(0)} MB`);
for (const s of r.stages) { total += s.seconds;
  if (s.seconds > 0) console.log(`  ${s.stage.padEnd(16)} ${s.seconds.toFixed(3).padStart(8)} s  ${(mb / s.seconds).toFixed(1).padStart(8)} MB/s  (${s.in} -> ${s.out})`); }
total += r.lineage_seconds + (r.checkpoint_seconds || 0);
console.log(`  checkpoint       ${(r.checkpoint_seconds || 0).toFixed(3).padStart(8)} s  (per-document results saved for resume)`);
console.log(`  lineage          ${r.lineage_seconds.toFixed(3).padStart(8)} s`);
console.log(`  whole pipeline   ${total.toFixed(3).padStart(8)} s  ${(mb / total).toFixed(1).padStart(8)} MB/s per core`);
' "$dir/report.json" "$(cat "$dir/rss")"
# The same build under the smallest memory budget: what out-of-core costs in time, and the peak.
/usr/bin/time -f "%e %M" -o "$dir/small.time" "$build/src/cli/trail" corpus build \
  --config "$dir/corpus.toml" --out "$dir/small" --threads 1 --memory-budget-mb 8 --quiet \
  > "$dir/small.json" 2> /dev/null
cmp -s <(cd "$dir/out" && find train validation test -type f | sort | xargs cat) \
       <(cd "$dir/small" && find train validation test -type f | sort | xargs cat) \
  || { echo "FAIL: the 8 MiB build's shards differ" >&2; exit 1; }
read -r secs kb < "$dir/small.time"
node -e '
const r = require(process.argv[1]); const m = r.memory;
console.log(`  under an 8 MiB budget: ${process.argv[2]} s wall, peak RSS ${(Number(process.argv[3]) / 1024).toFixed(0)} MB ` +
            `(anonymous ${(m.peak_anon_bytes / 1048576).toFixed(0)} MiB), ${m.document_runs} document runs, ` +
            `${(m.spilled_sort_bytes / 1e6).toFixed(1)} MB of sort runs spilled; same shards`);
' "$dir/small.json" "$secs" "$kb"
