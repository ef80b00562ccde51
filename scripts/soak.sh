#!/usr/bin/env bash
# Long-running robustness (make soak; not in make test): for SOAK_MINUTES (default 30) in all,
#   - training: a run on real text (the King James Bible, a byte-level tokenizer trained here)
#     is SIGKILLed at random moments — mid-step, mid-checkpoint, mid-resume — and resumed each
#     time until it completes; its trajectory, final hash and last checkpoint must equal an
#     uninterrupted run's;
#   - the corpus factory: the reference corpus (fortunes in 13 languages, the KJV, language ID on)
#     is built with random kills and reruns, several times; shards and lineage must equal a
#     straight build's.
# Kill moments come from SOAK_SEED (printed). Prints the kills survived, resumes and the verdict.
# Usage: scripts/soak.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd); trail=$build/src/cli/trail; assets=$build/assets
here=$(cd "$(dirname "$0")" && pwd)
minutes=${SOAK_MINUTES:-30}; seed=${SOAK_SEED:-$(date +%s)}
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-soak-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "SOAK FAIL: $*" >&2; exit 1; }
echo "soak: $minutes minutes, seed $seed (rerun with SOAK_SEED=$seed)"
RANDOM=$seed
rand_ms() { echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) )); }  # lo..hi
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

# ---- training ----------------------------------------------------------------------------
awk '/^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { if (t != "") { gsub(/\\/, "\\\\", t); gsub(/"/, "\\\"", t);
       printf "{\"id\": \"kjv-%04d\", \"text\": \"%s\"}\n", n++, t } t = ""; next }
     NF > 0 { sub(/^ +[0-9]+ /, ""); t = t $0 "\\n" }' "$assets/text/kjv.txt" > docs.jsonl
"$trail" tokenizer train --input docs.jsonl --vocab-size 2048 --special '<|endoftext|>' \
  --output tokenizer.json > /dev/null 2>&1
"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --output contract.json > /dev/null
"$trail" data tokenize --contract contract.json --input docs.jsonl --output-dir shards --prefix kjv > /dev/null 2>&1
"$trail" data manifest --contract contract.json --source kjv=1=shards/kjv.shards.json --seq-len 128 --chunk-tokens 120 \
  --seed 5 --batch-schedule 0:16 --micro-batch 4 --output manifest.json > /dev/null
recipe() {  # steps
  printf '[model]\nd_model = 128\nn_layers = 4\nn_heads = 4\nd_ff = 352\nmax_seq_len = 128\n'
  printf '[optimizer]\nlr = 3e-3\n[mesh]\nreplicas = 2\nshards = 2\n'
  printf '[train]\nsteps = %d\ncheckpoint_every = 7\nkeep_checkpoints = 3\nlog_every = 10\n' "$1"
}
# The step rate of this machine sizes the run: a straight run (~18% of the time) and a killed one
# (about twice as long: each resume repeats the steps since the last checkpoint) take ~55%.
recipe 8 > probe.toml
t0=$(date +%s%N)
"$trail" train --recipe probe.toml --data manifest.json --run probe --quiet --threads 2 > /dev/null
per_step_ms=$(( ($(date +%s%N) - t0) / 8000000 + 1 ))
steps=$(( minutes * 60000 * 18 / 100 / per_step_ms ))
[ "$steps" -ge 30 ] || steps=30
echo "training: $steps steps (~${per_step_ms} ms a step here)"
recipe "$steps" > soak.toml
"$trail" train --recipe soak.toml --data manifest.json --run straight --quiet --threads 2 > straight.out
want=$(grep -o 'trajectory [0-9a-f]*' straight.out)
kills=0; resumes=0
"$trail" train --recipe soak.toml --data manifest.json --run killed --quiet --threads 2 > resumed.out 2> resumed.err &
pid=$!
while :; do
  sleep_ms "$(rand_ms 300 $(( per_step_ms * 20 + 500 )))"
  if ! kill -9 $pid 2>/dev/null; then  # it finished before the kill: it must have succeeded
    wait $pid || fail "train failed: $(cat resumed.err)"
    break
  fi
  kills=$((kills + 1)); wait $pid 2>/dev/null || true
  if [ -e killed/trajectory.jsonl ]; then
    resumes=$((resumes + 1))
    "$trail" train --run killed --resume --quiet --threads 2 > resumed.out 2> resumed.err &
  else  # killed before the run's start was committed: start it again
    "$trail" train --recipe soak.toml --data manifest.json --run killed --quiet --threads 2 > resumed.out 2> resumed.err &
  fi
  pid=$!
done
got=$("$trail" train verify --run killed | tail -n 1)
cmp -s killed/trajectory.jsonl straight/trajectory.jsonl || fail "trajectories differ after $kills kills"
last=$(ls -d straight/checkpoints/step_* | tail -n 1 | xargs basename)
for f in model.safetensors optim.safetensors; do
  cmp -s "straight/checkpoints/$last/$f" "killed/checkpoints/$last/$f" || fail "$last/$f differs"
done
echo "training: $kills SIGKILLs survived, $resumes resumes; trajectory and $last equal the straight run's ($want); verify: $got"

# ---- corpus factory ----------------------------------------------------------------------
. "$here/corpus-inputs.sh"
f=/usr/share/games/fortunes
{ echo "seed = 3"
  toml_source fortunes fortune $(fortune_files $f -maxdepth 1) $(fortune_files $f/de)
  toml_source kjv text "$assets/text/kjv.txt"
  toml_language "$assets"
} > corpus.toml
state() {  # shards and the lineage's rows
  (cd "$1" && find train validation test -type f | sort | xargs sha256sum)
  /usr/bin/python3 -c 'import sqlite3, sys
for line in sqlite3.connect(sys.argv[1]).iterdump(): print(line)' "$1/lineage.sqlite" | sha256sum
}
t0=$(date +%s%N)
"$trail" corpus build --config corpus.toml --out straight-corpus --threads 2 --quiet > /dev/null 2>&1
build_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
want=$(state straight-corpus)
builds=0; ckills=0
while [ "$(elapsed)" -lt $(( minutes * 60 - build_ms * 3 / 1000 )) ] || [ $builds -eq 0 ]; do
  out=c$builds; builds=$((builds + 1))
  budget=$(( 8 << (RANDOM % 4) ))  # 8..64 MiB: many chunks or few
  while :; do
    "$trail" corpus build --config corpus.toml --out $out --threads 2 --quiet --memory-budget-mb $budget > /dev/null 2> build.err &
    pid=$!
    sleep_ms "$(rand_ms 100 $(( build_ms * 2 / 3 + 100 )))"
    if ! kill -9 $pid 2>/dev/null; then
      wait $pid || fail "corpus build $out failed: $(cat build.err)"
      break
    fi
    ckills=$((ckills + 1)); wait $pid 2>/dev/null || true
  done
  [ "$(state $out)" = "$want" ] || fail "corpus build $out differs from the straight build"
  rm -rf $out
done
echo "corpus: $builds builds, $ckills SIGKILLs survived; shards and lineage equal the straight build's"
echo "soak: PASS in $(( $(elapsed) / 60 )) minutes"
