#!/usr/bin/env bash
# `trail data tokenize` in tasks: for N = 1, 2, 3 and 7 encode tasks (shuffled, some SIGKILLed
# at a random moment and rerun, the rest two at a time through xargs) and a final phase (killed
# once mid-way and resumed), the shards, the shard list and the journal equal a one-process
# job's bytes. A damaged or missing task output is named by the final phase, which writes
# nothing; rerunning those tasks alone repairs the job.
set -euo pipefail
trail=$1; assets=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-tokenizetasks-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

head -4000 "$assets/text/kjv.txt" > train.txt
"$trail" tokenizer train --input train.txt --vocab-size 1200 --special '<|endoftext|>' --threads 2 \
  --output tokenizer.json 2>/dev/null
"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --output tokenizer.contract.json > /dev/null
# The KJV's verses as documents in nine files of uneven sizes (plain, .gz, .zst), with a few
# empty documents, which are counted and skipped.
awk 'NF > 0 { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "{\"id\": \"kjv-%d\", \"text\": \"%s\\n\"}\n", n++, $0 }
     n % 997 == 0 { printf "{\"id\": \"empty-%d\", \"text\": \"\"}\n", n++ }' "$assets/text/kjv.txt" > all.jsonl
inputs=()
start=1
for i in 1 2 3 4 5 6 7 8 9; do
  lines=$(( i == 9 ? 1000000 : 300 * i * i ))
  sed -n "${start},$((start + lines - 1))p" all.jsonl > part$i.jsonl
  start=$((start + lines))
  case $i in 3) gzip part$i.jsonl; inputs+=(--input part$i.jsonl.gz) ;;
             6) zstd -q --rm part$i.jsonl; inputs+=(--input part$i.jsonl.zst) ;;
             *) inputs+=(--input part$i.jsonl) ;; esac
done
job=(--contract tokenizer.contract.json --shard-tokens 50000 "${inputs[@]}")
state() { (cd "$1" && sha256sum ./*.tshard shard.shards.json shard.progress.json); }

"$trail" data tokenize "${job[@]}" --output-dir one --threads 2 2>/dev/null
want=$(state one)
[ "$(ls one/*.tshard | wc -l)" -ge 10 ] || fail "expected many shards"

for n in 1 2 3 7; do
  out=tasks$n
  for t in $(seq 0 $((n - 1)) | shuf); do
    if [ $((RANDOM % 2)) = 0 ]; then
      "$trail" data tokenize "${job[@]}" --output-dir $out --task $t --tasks $n > /dev/null 2>&1 &
      pid=$!
      sleep "$(awk -v s=$RANDOM 'BEGIN { srand(s); printf "%.2f", rand() * 0.5 }')"
      kill -9 $pid 2>/dev/null || true
      wait $pid 2>/dev/null || true
    fi
  done
  seq 0 $((n - 1)) | shuf | xargs -P 2 -I{} "$trail" data tokenize "${job[@]}" --output-dir $out \
    --task {} --tasks $n 2> xargs.log || fail "encode tasks: $(cat xargs.log)"
  seq 0 $((n - 1)) | xargs -I{} "$trail" data tokenize "${job[@]}" --output-dir $out --task {} \
    --tasks $n 2> again.log
  [ "$(grep -c 'was already complete' again.log)" = $n ] || fail "a complete task redid work: $(cat again.log)"
  if [ $n = 3 ]; then  # the final phase killed once its journal holds a shard, then resumed
    "$trail" data tokenize "${job[@]}" --output-dir $out --tasks $n > /dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 2000); do grep -q '"next_line"' $out/shard.progress.json 2>/dev/null && break; sleep 0.005; done
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
  fi
  "$trail" data tokenize "${job[@]}" --output-dir $out --tasks $n 2> final.log
  [ "$(state $out)" = "$want" ] || fail "$n tasks differ from the one-process job"
  [ ! -e $out/.tasks ] || fail "a finished job in $n tasks left its tasks' directory"
  "$trail" data tokenize "${job[@]}" --output-dir $out --tasks $n 2> /dev/null ||
    fail "the final phase run again after it completed failed"
  [ "$(state $out)" = "$want" ] || fail "the final phase run again changed the output"
  echo "ok: $n tasks ($(grep -o '[0-9]* verified from an earlier run' final.log))"
done

# Damage: task 1's run flipped, task 2's manifest gone.
for t in 0 1 2; do "$trail" data tokenize "${job[@]}" --output-dir dmg --task $t --tasks 3 2>/dev/null; done
printf '\x01' | dd of=dmg/.tasks/shard-00003/task-00001/tokens.run bs=1 seek=40 conv=notrunc status=none
rm dmg/.tasks/shard-00003/task-00002/task.json
if "$trail" data tokenize "${job[@]}" --output-dir dmg --tasks 3 2> refused.txt; then
  fail "the final phase ran on a damaged task"; fi
cat refused.txt
grep -q "task 1: tokens.run is damaged" refused.txt || fail "the damaged run is not named"
grep -q "task 2: not complete" refused.txt || fail "the missing manifest is not named"
if grep -q "task 0" refused.txt; then fail "an intact task was named"; fi
[ -z "$(ls dmg/*.tshard 2>/dev/null)" ] || fail "a refused final phase wrote shards"
for t in 1 2; do "$trail" data tokenize "${job[@]}" --output-dir dmg --task $t --tasks 3 2>/dev/null; done
"$trail" data tokenize "${job[@]}" --output-dir dmg --tasks 3 2>/dev/null
[ "$(state dmg)" = "$want" ] || fail "the repaired job differs"
out=$("$trail" data tokenize "${job[@]}" --output-dir x --task 0 --tasks 2 --max-shards 1 2>&1) &&
  fail "--max-shards with a task was accepted"
grep -q "a task always finishes its slice" <<<"$out" || fail "--max-shards message: $out"
echo "PASS"
