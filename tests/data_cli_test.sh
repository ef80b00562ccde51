#!/usr/bin/env bash
# End to end through the `trail data` commands: JSONL of token ids -> shards -> manifest ->
# inspect / stats / verify, and the errors a user gets for bad input.
set -euo pipefail
trail=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-data-cli-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
contract=$(printf 'ab%.0s' $(seq 32))

for src in web code; do
  : > $src.jsonl
  for d in $(seq 0 19); do
    n=$(( (d * 7 + ${#src}) % 23 + 1 )); toks=""
    for j in $(seq 1 $n); do toks="$toks${toks:+,}$(( (d * 31 + j * 17) % 900 + 10 ))"; done
    echo "{\"key\": \"$src/doc$d\", \"tokens\": [$toks], \"domain\": 0}" >> $src.jsonl
  done
  "$trail" data shard --input $src.jsonl --output $src.tshard --vocab-size 1000 \
    --contract "$contract" > $src.entry
done
cat > manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 1000, "eos_id": 2, "pad_id": 0},
 "sources": [{"name": "web", "target_share": 0.75, "shards": [$(cat web.entry)]},
             {"name": "code", "target_share": 0.25, "shards": [$(cat code.entry)]}],
 "validation": [{"domain": "web", "shards": [$(cat web.entry)]}],
 "stream": {"seed": 3, "seq_len": 16, "batch_schedule": [{"from_step": 0, "windows": 8}],
            "micro_batch_windows": 2}}
JSON

out=$("$trail" data inspect --manifest manifest.json --window 5)
grep -q "^window 5: source '" <<<"$out" || fail "inspect header: $out"
grep -q "web.tshard\|code.tshard" <<<"$out" || fail "inspect shows no shard"
grep -q "/doc" <<<"$out" || fail "inspect shows no document key"
"$trail" data inspect --manifest manifest.json --window 5 --json | grep -q '"key": "' \
  || fail "inspect --json"
out=$("$trail" data inspect --manifest manifest.json --step 3 --ranks 3)
grep -q "step 3: windows \[24, 32)" <<<"$out" || fail "step range: $out"
out=$("$trail" data stats --manifest manifest.json --windows 4000)
grep -Eq "web +permutation +0.75000 +0.75000 +0.750" <<<"$out" || fail "stats shares: $out"
"$trail" data verify --manifest manifest.json | grep -q "3 shards verified, 0 failed" \
  || fail "verify"

# Bad input: each a clear error naming the file (exit 3), and nothing half-written.
echo '{"key": "x", "tokens": [1, 2' > bad.jsonl
if out=$("$trail" data shard --input bad.jsonl --output bad.tshard --vocab-size 1000 \
  --contract "$contract" 2>&1); then fail "malformed JSONL accepted"; fi
grep -q "bad.jsonl:1: not valid JSON" <<<"$out" || fail "malformed JSONL message: $out"
[ ! -e bad.tshard ] || fail "a failed import left a shard behind"
echo '{"key": "x", "tokens": [1, 5000]}' > big.jsonl
out=$("$trail" data shard --input big.jsonl --output big.tshard --vocab-size 1000 \
  --contract "$contract" 2>&1) && fail "out-of-vocabulary id accepted"
grep -q "big.jsonl:1: .*outside the vocabulary" <<<"$out" || fail "vocab message: $out"

cp code.tshard code.bak
printf '\x01' | dd of=code.tshard bs=1 seek=200 conv=notrunc status=none
out=$("$trail" data verify --manifest manifest.json) && fail "flipped byte not detected"
grep -q "code.tshard: content hash mismatch" <<<"$out" || fail "flip message: $out"
out=$("$trail" data inspect --manifest manifest.json --window 0 2>&1) && fail "stream opened a corrupt shard"
grep -q "code.tshard" <<<"$out" || fail "corrupt shard not named: $out"
cp code.bak code.tshard
head -c 300 web.tshard > web.short && mv web.short web.tshard
out=$("$trail" data inspect --manifest manifest.json --window 0 2>&1) && fail "truncated shard opened"
grep -q "web.tshard: .*truncated" <<<"$out" || fail "truncation message: $out"
sed -i 's/"seq_len"/"seqlen"/' manifest.json
out=$("$trail" data stats --manifest manifest.json --windows 1 2>&1) && fail "unknown key accepted"
grep -q "unknown key 'seqlen' in stream" <<<"$out" || fail "unknown key message: $out"
echo "data CLI: all checks passed"
