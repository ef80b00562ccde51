#!/usr/bin/env bash
# The corpus-to-shards path end to end: train a tokenizer, write its contract, tokenize dolma
# JSONL (plain, .gz, .zst) into shards on 1 and 2 threads, stop and resume, build a manifest,
# verify it and inspect a window as text; a manifest with mixture and length phases from flags.
set -euo pipefail
trail=$1; assets=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-tokenize-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
sums() { (cd "$1" && sha256sum ./*.tshard); }

head -4000 "$assets/text/kjv.txt" > train.txt
awk 'NF > 0 && n < 6000 { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "{\"id\": \"kjv-%d\", \"text\": \"%s\\n\", \"source\": \"kjv\"}\n", n++, $0 }' \
  "$assets/text/kjv.txt" > docs.jsonl
gzip -k docs.jsonl
zstd -q -k docs.jsonl

"$trail" tokenizer train --input train.txt --vocab-size 1200 --special '<|endoftext|>' --threads 1 --output tok1.json 2>/dev/null
"$trail" tokenizer train --input train.txt --vocab-size 1200 --special '<|endoftext|>' --threads 2 --output tokenizer.json 2>/dev/null
cmp tok1.json tokenizer.json || fail "training depends on the thread count"
"$trail" tokenizer info --tokenizer tokenizer.json | grep -q '"vocab_size": 1200' || fail "vocab size"
echo "In the beginning God created the heaven and the earth." > line.txt
"$trail" tokenizer encode --tokenizer tokenizer.json --input line.txt > ids.json
"$trail" tokenizer decode --tokenizer tokenizer.json --input ids.json | cmp - line.txt || fail "round trip"

"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --sample train.txt --output tokenizer.contract.json > contract.hash
hash=$(cut -d' ' -f1 contract.hash)
[ "$hash" = "$(sha256sum tokenizer.contract.json | cut -d' ' -f1)" ] || fail "contract hash"

tokenize() { "$trail" data tokenize --contract tokenizer.contract.json --shard-tokens 20000 "$@" 2>/dev/null; }
tokenize --input docs.jsonl --output-dir one --threads 1
tokenize --input docs.jsonl --output-dir two --threads 2
[ "$(sums one)" = "$(sums two)" ] || fail "shards depend on the thread count"
[ "$(ls one/*.tshard | wc -l)" -ge 4 ] || fail "expected several shards"
tokenize --input docs.jsonl --output-dir resumed --threads 2 --max-shards 2
[ "$(ls resumed/*.tshard | wc -l)" = 2 ] || fail "--max-shards"
tokenize --input docs.jsonl --output-dir resumed --threads 1
[ "$(sums one)" = "$(sums resumed)" ] || fail "a resumed run differs from an uninterrupted one"
tokenize --input docs.jsonl.gz --output-dir gz
tokenize --input docs.jsonl.zst --output-dir zst
[ "$(sums one)" = "$(sums gz)" ] && [ "$(sums one)" = "$(sums zst)" ] || fail "compressed input differs"
out=$("$trail" data tokenize --contract tokenizer.contract.json --input docs.jsonl \
  --output-dir resumed --shard-tokens 999 2>&1) && fail "a rerun with other parameters was accepted"
grep -q "an earlier run used other parameters" <<<"$out" || fail "rerun message: $out"

"$trail" data manifest --contract tokenizer.contract.json --source kjv=1=one/shard.shards.json \
  --seq-len 32 --seed 1 --output manifest.json > /dev/null
shards=$(ls one/*.tshard | wc -l)
"$trail" data verify --manifest manifest.json | grep -qx "$shards shards verified, 0 failed" || fail "verify"
out=$("$trail" data inspect --manifest manifest.json --window 7 --contract tokenizer.contract.json)
grep -q "kjv-" <<<"$out" || fail "inspect shows no document key: $out"
grep -Eq '"[^"]*[a-z]{3,}' <<<"$out" || fail "inspect shows no text: $out"

# A lifecycle manifest from flags: L = 32 (8 windows a step) until step 3, then L = 64 (4 a step),
# so step 4 starts after 3·8·32 + 4·64 = 1,024 tokens; only "again" from step 2.
"$trail" data manifest --contract tokenizer.contract.json --source kjv=1=one/shard.shards.json \
  --source again=1=one/shard.shards.json --seq-len 32 --seed 1 --batch-schedule 0:8,3:4 \
  --seq-len-phases 3:64 --mixture-phase 2:again=1 --output lifecycle.json > /dev/null
out=$("$trail" data inspect --manifest lifecycle.json --step 4)
grep -q "windows \[28, 32) of L = 64, .* 1024 tokens consumed before it" <<<"$out" \
  || fail "inspect --step after the switch: $out"
out=$("$trail" data inspect --manifest lifecycle.json --window 24 --json)
python3 -c 'import json,sys; w = json.load(sys.stdin)
assert (w["seq_len"], w["step"], w["source"], w["mixture_phase_from_step"], w["seq_len_phase_from_step"]) == (64, 3, "again", 2, 3), w' <<<"$out" \
  || fail "inspect --window at the switch: $out"
out=$("$trail" data manifest --contract tokenizer.contract.json --source kjv=1=one/shard.shards.json \
  --seq-len-phases 3 --output x.json 2>&1) && fail "a malformed --seq-len-phases was accepted"
grep -q "is not FROM_STEP:L" <<<"$out" || fail "--seq-len-phases message: $out"
out=$("$trail" data manifest --contract tokenizer.contract.json --source kjv=1=one/shard.shards.json \
  --mixture-phase 2:wiki=1 --output x.json 2>&1) && fail "a phase naming no source was accepted"
grep -q "names 'wiki', which is not a source" <<<"$out" || fail "--mixture-phase message: $out"
out=$("$trail" data manifest --contract tokenizer.contract.json --source kjv=1=one/shard.shards.json \
  --prepend-bos --output x.json 2>&1) && fail "--prepend-bos without a BOS in the contract was accepted"
grep -q "needs a contract with a bos_id" <<<"$out" || fail "--prepend-bos message: $out"
[ ! -e x.json ] || fail "a refused manifest was written"

# Bad input.
sed 's/"sha256": "[0-9a-f]*"/"sha256": "0000000000000000000000000000000000000000000000000000000000000000"/' \
  tokenizer.contract.json > bad.contract.json
out=$("$trail" data tokenize --contract bad.contract.json --input docs.jsonl --output-dir x 2>&1) && fail "bad artifact hash accepted"
grep -q "but the contract pins" <<<"$out" || fail "artifact hash message: $out"
printf '{"id": "a", "text": "ok"}\n{"id": "b", "txt": "no"}\n' > missing.jsonl
out=$("$trail" data tokenize --contract tokenizer.contract.json --input missing.jsonl --output-dir y 2>&1) && fail "missing text accepted"
grep -q "missing.jsonl:2: missing string field 'text'" <<<"$out" || fail "missing text message: $out"
head -c 2000 docs.jsonl.zst > cut.jsonl.zst
out=$("$trail" data tokenize --contract tokenizer.contract.json --input cut.jsonl.zst --output-dir z 2>&1) && fail "truncated zstd accepted"
grep -q "cut.jsonl.zst: truncated zstd data" <<<"$out" || fail "truncated zstd message: $out"
echo "tokenize CLI: all checks passed"
