#!/usr/bin/env bash
# `trail train` end to end on real text (the King James Bible, one document per chapter, every
# 20th chapter held out for validation):
#   - a small model learns: validation loss ends well below the unigram entropy of that text;
#   - killed with SIGKILL at random points (several trials), resumed runs end on the same
#     trajectory hash as an uninterrupted run — a run whose data crosses a sequence-length switch
#     (64 -> 128 at step 40) and a mixture phase (step 80), so kills land on both sides of each;
#   - `audit replay` of the last segment is bit-identical; `train verify` checks the run's files and
#     names a checkpoint whose weights lost one bit;
#   - bad input (unknown recipe key, inconsistent shapes, a run directory already in use, a
#     recipe swapped under a run) gets a clear error and leaves the run's files untouched.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-train-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$here/kjv_train_data.sh"
kjv_train_data
# The same text as a run's lifecycle: windows of 128 from step 40 (half as many: the same tokens
# per step), and from step 80 only the source "late" (the same shards under another name).
"$trail" data manifest --contract contract.json --source kjv=1=shards/train.shards.json \
  --source late=1=shards/train.shards.json --validation kjv=shards/val.shards.json --seq-len 64 \
  --chunk-tokens 120 --seed 7 --batch-schedule 0:8,40:4,60:8 --seq-len-phases 40:128 \
  --mixture-phase 80:late=1 --micro-batch 4 --output lifecycle.json > /dev/null

echo "-- a small model learns"
recipe 400 > learn.toml
"$trail" train --recipe learn.toml --data manifest.json --run learn --threads 2 > learn.out 2> learn.err
node -e '
const fs = require("fs");
const info = JSON.parse(fs.readFileSync("learn/run.json"));
const lines = fs.readFileSync("learn/metrics.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const h = info.val_unigram_entropy.kjv, evals = lines.filter(l => l.val);
const first = evals[0].val.kjv, last = evals[evals.length - 1].val.kjv;
console.log(`unigram entropy ${h.toFixed(3)} nats; validation loss ${first.toFixed(3)} -> ${last.toFixed(3)}`);
if (!(last < h - 0.7)) { console.error("did not learn well below the unigram entropy"); process.exit(1); }
if (!(last < first)) process.exit(1);
' || fail "learning"
grep -q "validation unigram entropy" learn.err || fail "no baseline shown"
grep -q "ETA" learn.err || fail "no progress shown"
[ "$(wc -l < learn/trajectory.jsonl)" -eq 400 ] || fail "trajectory length"
[ "$(ls learn/checkpoints | wc -l)" -eq 2 ] || fail "retention keeps 2 checkpoints"
"$trail" audit replay --run learn --steps 375:400 --threads 1 --quiet > replay.out || { cat replay.out; fail "replay"; }
grep -q "25 of 25 requested steps bit-identical" replay.out || { cat replay.out; fail "replay"; }
"$trail" train verify --run learn | grep -q "400 trajectory records chained from genesis, 2 checkpoints verified, 0 problems" \
  || fail "verify a good run"
ckpt=$(ls -d learn/checkpoints/step_* | tail -1)
/usr/bin/python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-5] ^= 1; open(p, "wb").write(b)' \
  "$ckpt/model.safetensors"
if out=$("$trail" train verify --run learn); then fail "verify missed a damaged checkpoint"; fi
grep -q "FAIL .*$(basename "$ckpt")/model.safetensors: SHA-256 differs" <<<"$out" || fail "verify: $out"

echo "-- SIGKILL at random points, then resume: the same final hash"
# Kill points are drawn from TRAIL_KILL_SEED (printed, so a failure can be rerun exactly) and
# are step counts, not times: each kill lands mid-run whatever the machine's speed.
seed=${TRAIL_KILL_SEED:-20261203}; trials=${TRAIL_KILL_TRIALS:-3}; steps=120
echo "kill seed $seed, $trials trials"
draw() {  # k lo hi: the k-th draw from the seed, in [lo, hi] (a 64-bit LCG step, high bits)
  local x=$(( (seed + $1 * 2654435761) * 6364136223846793005 + 1442695040888963407 ))
  echo $(( $2 + ((x >> 33) & 0x7fffffff) % ($3 - $2 + 1) ))
}
records() { [ -f "$1/trajectory.jsonl" ] && wc -l < "$1/trajectory.jsonl" || echo 0; }
kill_after() {  # pid, run directory, records: SIGKILL once the trajectory holds that many
  local pid=$1 run=$2 n=$3
  while kill -0 "$pid" 2>/dev/null && [ "$(records "$run")" -lt "$n" ]; do sleep 0.005; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
recipe $steps > kill.toml
"$trail" train --recipe kill.toml --data lifecycle.json --run straight --quiet --threads 2 > straight.out
want=$(grep -o 'trajectory [0-9a-f]*' straight.out)
for trial in $(seq 1 "$trials"); do
  rm -rf killed
  first=$(draw "$trial" 1 $((steps - 40)))  # 1..80: either side of both switches
  "$trail" train --recipe kill.toml --data lifecycle.json --run killed --quiet --threads 2 > /dev/null &
  kill_after $! killed "$first"
  done_steps=$(records killed)
  [ "$done_steps" -gt 0 ] && [ "$done_steps" -lt $steps ] \
    || fail "trial $trial: the kill did not land mid-run ($done_steps of $steps steps recorded)"
  # A second kill during the resume, some steps later, then resume again.
  second=$((done_steps + $(draw $((trial + 100)) 1 20)))
  "$trail" train --data lifecycle.json --run killed --resume --quiet --threads 2 > /dev/null 2>&1 &
  kill_after $! killed "$second"
  again=$(records killed)
  [ "$again" -lt $steps ] || fail "trial $trial: the second kill did not land mid-run"
  "$trail" train --run killed --resume --quiet --threads 2 > resumed.out  # the run's manifest
  got=$(grep -o 'trajectory [0-9a-f]*' resumed.out)
  echo "trial $trial: killed after $done_steps recorded steps, again after $again; $got"
  [ "$got" = "$want" ] || fail "trial $trial: resumed run ends on $got, straight run on $want"
  cmp -s killed/trajectory.jsonl straight/trajectory.jsonl || fail "trial $trial: trajectories differ"
done

echo "-- SIGKILL while the run starts (run.json written, no trajectory yet): rerun, same hash"
# The trajectory file is the start's commit point (written after checkpoint 0): killed before it,
# the directory holds no run, so the same command starts it again; killed after, --resume does.
rm -rf early
"$trail" train --recipe kill.toml --data lifecycle.json --run early --quiet --threads 2 > /dev/null &
pid=$!
while kill -0 $pid 2>/dev/null && [ ! -e early/run.json ]; do sleep 0.001; done
kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
if [ -e early/trajectory.jsonl ]; then
  echo "killed after the start's commit point ($(records early) records): resume"
  "$trail" train --run early --resume --quiet --threads 2 > early.out
else
  echo "killed before the start's commit point: the same command again"
  out=$("$trail" train --run early --resume --quiet 2>&1) && fail "resumed a run that never started"
  grep -q "holds no run to resume" <<<"$out" || fail "resume of an unstarted run: $out"
  "$trail" train --recipe kill.toml --data lifecycle.json --run early --quiet --threads 2 > early.out
fi
[ "$(grep -o 'trajectory [0-9a-f]*' early.out)" = "$want" ] || fail "a run killed at its start ends elsewhere"
# The state before the commit point, made exactly: every file but the trajectory.
rm -rf unstarted; cp -r straight unstarted; rm unstarted/trajectory.jsonl
find unstarted/checkpoints -mindepth 1 -maxdepth 1 ! -name step_00000000 -exec rm -rf {} +
"$trail" train --recipe kill.toml --data lifecycle.json --run unstarted --quiet --threads 2 > unstarted.out
[ "$(grep -o 'trajectory [0-9a-f]*' unstarted.out)" = "$want" ] || fail "a rerun over an unstarted run ends elsewhere"

echo "-- bad input: clear errors, nothing overwritten"
expect_error() {  # pattern, command...
  local pat=$1; shift
  if "$@" > err.out 2>&1; then fail "succeeded: $*"; fi
  grep -q "$pat" err.out || { cat err.out; fail "no '$pat' in the error of: $*"; }
}
recipe 10 | sed 's/^lr = 1e-2/lr = 1e-2\nlearning_rate = 3/' > typo.toml
expect_error "unknown key 'learning_rate' in \[optimizer\]" "$trail" train --recipe typo.toml --data manifest.json --run typo
[ ! -e typo ] || fail "a refused recipe created a run directory"
recipe 10 | sed 's/^n_heads = 2/n_heads = 3/' > shapes.toml
expect_error "multiple of n_heads" "$trail" train --recipe shapes.toml --data manifest.json --run shapes
before=$(sha256sum straight/trajectory.jsonl)
expect_error "already holds a run" "$trail" train --recipe kill.toml --data lifecycle.json --run straight
recipe 121 > other.toml
expect_error "differs from the run's recipe" "$trail" train --recipe other.toml --data lifecycle.json --run straight --resume
[ "$(sha256sum straight/trajectory.jsonl)" = "$before" ] || fail "a refused command changed the run"
echo "PASS"
