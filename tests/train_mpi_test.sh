#!/usr/bin/env bash
# `trail train` under mpirun: the same bits for any number of processes.
#   - a 3 replicas x 2 shards x 2 micro-batches mesh trained in this process and with
#     P = 1, 2, 3, 4 (uneven: 1, 2, 1, 2 logical ranks) and 6 processes: identical trajectory
#     files, final hashes and checkpoint files; a 4 x 1 mesh with P = 1, 2, 4 likewise;
#   - the mesh with multi-query attention (P = 3, 6) and in OLMo 2's layout (P = 2, 6) likewise;
#   - more processes than logical ranks is a clear error;
#   - a run stopped with P = 2 and resumed with P = 3 (and with one process) equals the straight run;
#   - `audit replay` on P = 2, 3 gives one process's verdicts; traces recorded on 3 processes equal
#     one process's;
#   - [mesh] shard_params = true: the same bits on every P, with and without recomputation,
#     its checkpoints resumed and audited on other P, a torn one skipped; peak memory per
#     process falls as P grows;
#   - one process killed with SIGKILL at seeded random points: the job ends within a bounded time
#     (no hang) with a non-zero status, mid-run, and --resume on another P lands on the straight
#     run's final hash.
set -euo pipefail
trail=$1; assets=$2; kill_shim=$3
command -v mpirun >/dev/null || { echo "FAIL: mpirun missing: run scripts/install-deps.sh" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-mpi-XXXXXX")
trap '[ -n "${TRAIL_KEEP:-}" ] || rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Containers often forbid the cross-process memory copy OpenMPI's shared-memory transport tries.
export OMPI_MCA_btl_vader_single_copy_mechanism=none TRAIL_NUM_THREADS=1
mpi() { local np=$1; shift; mpirun --allow-run-as-root --oversubscribe -np "$np" "$trail" "$@"; }
# killed_in_checkpoint STEP RANK MPIRUN_ARGS...: the job with process RANK SIGKILLed inside step
# STEP's checkpoint, after its parameters and before its moments (its first write to the moments'
# file; tests/kill_on_write.c, loaded with LD_PRELOAD).
killed_in_checkpoint() {
  local step=$1 rank=$2; shift 2
  LD_PRELOAD=$kill_shim TRAIL_KILL_RANK=$rank \
    TRAIL_KILL_ON_WRITE=$(printf 'checkpoints/step_%08d.tmp/optim.safetensors' "$step") \
    timeout -s KILL 60 mpirun --allow-run-as-root --oversubscribe \
    -x LD_PRELOAD -x TRAIL_KILL_RANK -x TRAIL_KILL_ON_WRITE "$@"
}

# 200 chapters of the King James Bible, every 20th held out.
awk 'function flush() { if (text != "") { gsub(/\\/, "\\\\", text); gsub(/"/, "\\\"", text);
       printf "{\"id\": \"kjv-%04d\", \"text\": \"%s\"}\n", n, text > (n % 20 == 19 ? "val.jsonl" : "train.jsonl") } text = "" }
     /^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { flush(); n++; if (n > 200) exit; next }
     NF > 0 { sub(/^ +[0-9]+ /, ""); text = text $0 "\\n" }
     END { flush() }' "$assets/text/kjv.txt"
"$trail" tokenizer train --input train.jsonl --vocab-size 512 --special '<|endoftext|>' \
  --output tokenizer.json 2>/dev/null
"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --output contract.json > /dev/null
for p in train val; do
  "$trail" data tokenize --contract contract.json --input $p.jsonl --output-dir shards --prefix $p > /dev/null 2>&1
done
manifest() {  # name, windows per step, windows per micro-batch
  "$trail" data manifest --contract contract.json --source kjv=1=shards/train.shards.json \
    --validation kjv=shards/val.shards.json --seq-len 32 --chunk-tokens 60 --seed 7 \
    --batch-schedule "0:$2" --micro-batch "$3" --output "$1" > /dev/null
}
manifest m6.json 12 1  # 12 windows over 6 logical ranks: 2 micro-batches of 1 window each
manifest m4.json 8 2   # 8 windows over 4 logical ranks: 1 micro-batch of 2
recipe() {  # replicas shards micro-batches steps
  # d_ff = 1040: each MLP matrix is 66,560 elements, two state-hash chunks, so process ranges
  # also start inside a tensor.
  cat <<TOML
[model]
d_model = 64
n_layers = 2
n_heads = 2
d_ff = 1040
max_seq_len = 64
init_seed = 1
[optimizer]
lr = 1e-2
clip_norm = 0.5
[mesh]
replicas = $1
shards = $2
micro_batches = $3
[train]
steps = $4
eval_every = 4
eval_windows = 8
checkpoint_every = 4
keep_checkpoints = 10
TOML
}
recipe 3 2 2 8 > r6.toml
recipe 4 1 1 8 > r4.toml
recipe 3 2 2 40 > long.toml

verdicts() { python3 -c 'import json,sys; r = json.load(sys.stdin)
print(r["verdict"], [(s["step"], s["verdict"], s["chain"]) for s in r["steps"]])'; }
same_run() {  # reference run dir, other run dir, what
  cmp -s "$1/trajectory.jsonl" "$2/trajectory.jsonl" || fail "$3: trajectory differs"
  [ "$(cd "$1/checkpoints" && sha256sum */*.safetensors)" = "$(cd "$2/checkpoints" && sha256sum */*.safetensors)" ] \
    || fail "$3: checkpoint files differ"
}

# The validation losses of metrics.jsonl, one line per evaluating step: every process scores a
# block of the validation batches, and the sums are the bits of one process scoring them all.
vals() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "val" in r: print(r["step"], json.dumps(r["val"], sort_keys=True))' "$1/metrics.jsonl"; }
"$trail" train --recipe r6.toml --data m6.json --run in6 --quiet > in6.out
vals in6 > in6.vals
[ "$(wc -l < in6.vals)" = 2 ] || fail "expected validation after steps 4 and 8: $(cat in6.vals)"
for P in 1 2 3 4 6; do
  mpi $P train --recipe r6.toml --data m6.json --run p6_$P --quiet > p6_$P.out
  cmp -s in6.out p6_$P.out || fail "3x2x2 mesh on $P processes: final hashes differ"
  same_run in6 p6_$P "3x2x2 mesh on $P processes"
  vals p6_$P | cmp -s in6.vals - || fail "3x2x2 mesh on $P processes: validation losses differ"
done
echo "3x2x2 mesh: P = 1, 2, 3, 4, 6 and in-process identical (validation split over the processes too): $(cat in6.out)"
# Each process on a device whose memory only its backend reaches (guarded): the mesh reduction
# and the optimizer's state exchange go through explicit copies, as with one GPU a process.
mpi 3 train --recipe r6.toml --data m6.json --run g6_3 --device guarded --quiet > g6_3.out
cmp -s in6.out g6_3.out || fail "3x2x2 mesh on 3 processes on the guarded device: final hashes differ"
same_run in6 g6_3 "3x2x2 mesh on 3 processes on the guarded device"
echo "3x2x2 mesh: P = 3 on the guarded device identical"
# RECIPE trained in this process as run NAME, then on each P of PS: the same bits.
same_on() {  # name recipe "P..." what
  "$trail" train --recipe "$2" --data m6.json --run "$1" --quiet > "$1.out"
  for P in $3; do
    mpi $P train --recipe "$2" --data m6.json --run "$1_$P" --quiet > "$1_$P.out"
    cmp -s "$1.out" "$1_$P.out" || fail "$4 on $P processes: final hashes differ"
    same_run "$1" "$1_$P" "$4 on $P processes"
  done
  echo "$4: P = ${3// /, } and in-process identical"
}
# Grouped-query attention (4 query heads on 1 key/value head, K/V matrices sharded): the
# in-process run's bits on P = 3 and 6.
sed 's/^n_heads = 2$/n_heads = 4\nn_kv_heads = 1/' r6.toml > r6_mqa.toml
grep -q '^n_kv_heads = 1$' r6_mqa.toml || fail "the multi-query recipe was not written"
same_on mqa r6_mqa.toml "3 6" "3x2x2 mesh with multi-query attention"
cmp -s in6.out mqa.out && fail "the multi-query run has the multi-head run's hashes"
# OLMo 2's layout on it (post-norm; QK-norm over whole projections with gains [96] and [24],
# sharded like every tensor), with heads of 24 not d_model / n_heads = 16 (Wq [64, 96], Wo
# [96, 64]): the in-process run's bits on P = 2 and 6.
sed 's/^init_seed = 1$/init_seed = 1\nqk_norm = true\nqk_norm_gain = true\nqk_norm_projection = true\npost_norm = true\nhead_dim = 24/' \
  r6_mqa.toml > r6_olmo2.toml
grep -q '^post_norm = true$' r6_olmo2.toml || fail "the OLMo 2 recipe was not written"
same_on olmo2 r6_olmo2.toml "2 6" "3x2x2 mesh in OLMo 2's layout"
cmp -s mqa.out olmo2.out && fail "the OLMo 2 run has the pre-norm run's hashes"
# Activation recomputation changes no bit: the same mesh with [train] recompute = "layers"
# in-process and on P = 2, 3, 6 gives the records (all but the chain, which hashes the recipe's
# bytes) and checkpoint files of the run that keeps its activations.
{ cat r6.toml; echo 'recompute = "layers"'; } > r6_recompute.toml
records() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line); r.pop("chain", None); r.pop("seconds", None); print(json.dumps(r, sort_keys=True))' "$1/trajectory.jsonl"; }
records in6 > in6.records
for P in 0 2 3 6; do
  if [ $P = 0 ]; then
    "$trail" train --recipe r6_recompute.toml --data m6.json --run rc_$P --quiet > /dev/null
  else
    mpi $P train --recipe r6_recompute.toml --data m6.json --run rc_$P --quiet > /dev/null
  fi
  records rc_$P | cmp -s in6.records - || fail "recompute = layers on P = $P: the records differ"
  [ "$(cd in6/checkpoints && sha256sum */*.safetensors)" = "$(cd rc_$P/checkpoints && sha256sum */*.safetensors)" ] \
    || fail "recompute = layers on P = $P: checkpoint files differ"
done
echo "3x2x2 mesh with recompute = layers: in-process and P = 2, 3, 6 identical to keeping activations"
"$trail" train --recipe r4.toml --data m4.json --run in4 --quiet > in4.out
for P in 1 2 4; do
  mpi $P train --recipe r4.toml --data m4.json --run p4_$P --quiet > p4_$P.out
  cmp -s in4.out p4_$P.out || fail "4x1 mesh on $P processes: final hashes differ"
  same_run in4 p4_$P "4x1 mesh on $P processes"
done
echo "4x1x1 mesh: P = 1, 2, 4 and in-process identical"

# Parameter sharding changes no bit: [mesh] shard_params = true (each process keeps its range of
# the parameters and gathers each layer from all just before using it), with and without
# recomputation, in-process and on P = 1, 2, 3, 4 (uneven: idle gathers), 6 (3 and 6 gathering
# ahead on a thread, the others in line), gives the records,
# final parameter hash, validation losses and checkpoint files of the run without sharding; the
# 4x1 mesh likewise on P = 1, 2, 4.
with_sharding() { sed 's/^micro_batches = \(.*\)$/micro_batches = \1\nshard_params = true/' "$1"; }
with_sharding r6.toml > s6.toml
{ cat s6.toml; echo 'recompute = "layers"'; } > s6_recompute.toml
with_sharding r4.toml > s4.toml
grep -q '^shard_params = true$' s6.toml || fail "the sharded recipe does not shard: $(cat s6.toml)"
final_params() { awk '{print $NF}' "$1"; }
same_bits() {  # reference run, its output, other run, its output, what
  records "$3" | cmp -s <(records "$1") - || fail "$5: the records differ"
  [ "$(final_params "$2")" = "$(final_params "$4")" ] || fail "$5: final parameters differ"
  [ "$(cd "$1/checkpoints" && sha256sum */*.safetensors)" = "$(cd "$3/checkpoints" && sha256sum */*.safetensors)" ] \
    || fail "$5: checkpoint files differ"
}
for recipe in s6 s6_recompute; do
  for P in 0 1 2 3 4 6; do
    run=${recipe}_$P
    if [ $P = 0 ]; then
      "$trail" train --recipe $recipe.toml --data m6.json --run $run --quiet > $run.out
    else  # P = 3 and 6 gather each next layer on a thread of their own (MPI_THREAD_SERIALIZED)
      ahead=0; [ $((P % 3)) = 0 ] && ahead=1
      TRAIL_GATHER_AHEAD=$ahead mpirun --allow-run-as-root --oversubscribe -np $P \
        -x TRAIL_GATHER_AHEAD "$trail" train --recipe $recipe.toml --data m6.json --run $run \
        --quiet > $run.out
    fi
    same_bits in6 in6.out $run $run.out "$recipe on P = $P"
    vals $run | cmp -s in6.vals - || fail "$recipe on P = $P: validation losses differ"
  done
done
for P in 0 1 2 4; do
  if [ $P = 0 ]; then
    "$trail" train --recipe s4.toml --data m4.json --run s4_$P --quiet > s4_$P.out
  else
    mpi $P train --recipe s4.toml --data m4.json --run s4_$P --quiet > s4_$P.out
  fi
  same_bits in4 in4.out s4_$P s4_$P.out "sharded 4x1 mesh on P = $P"
done
echo "sharded parameters: 3x2x2 mesh in-process and P = 1, 2, 3, 4, 6, with and without recompute, 4x1 mesh P = 1, 2, 4: the unsharded bits"

# A run written by 4 processes (stopped after step 4), verified, resumed on P = 3 and in one
# process, audited in one process: the reference run's bits. Args: recipe, reference run, run, what.
checkpointed_by_4() {
  local recipe=$1 ref=$2 run=$3 what=$4
  mpi 4 train --recipe "$recipe" --data m6.json --run $run --stop-after 4 --quiet > /dev/null
  "$trail" train verify --run $run > $run.verify 2>&1 || fail "$what: train verify of the P = 4 run: $(cat $run.verify)"
  cp -r $run ${run}b
  mpi 3 train --resume --run $run --quiet > /dev/null
  same_run $ref $run "$what: checkpoint written with P = 4, resumed with P = 3"
  "$trail" train --resume --run ${run}b --quiet > /dev/null
  same_run $ref ${run}b "$what: checkpoint written with P = 4, resumed in one process"
  "$trail" audit replay --run $run --steps 2:8 --json --quiet | verdicts > $run.audit
  grep -q "^match " $run.audit || fail "$what: audit in one process: $(cat $run.audit)"
}

# Sharded checkpoints: written by 4 processes, resumed on P = 3 and in one process, audited in one
# process and on 2: the straight sharded run's bits. A process killed inside a checkpoint: the
# resume starts from the last complete one.
checkpointed_by_4 s6.toml s6_0 sw4 "sharded"
mpi 2 audit replay --run sw4 --steps 2:8 --json --quiet | verdicts > sw4.audit2
cmp -s sw4.audit sw4.audit2 || fail "audit of the sharded run on 2 processes: $(cat sw4.audit2)"
if killed_in_checkpoint 8 1 -np 3 "$trail" train --recipe s6.toml --data m6.json \
     --run storn --quiet > storn.out 2> storn.err; then
  fail "the sharded job succeeded though a process died in its checkpoint"
fi
[ ! -e storn/checkpoints/step_00000008 ] || fail "a torn sharded checkpoint was committed"
mpi 2 train --resume --run storn --quiet > storn.resumed 2>&1 || fail "resume after the torn sharded checkpoint: $(cat storn.resumed)"
same_run s6_0 storn "sharded run resumed with P = 2 after a process died in the step-8 checkpoint"
echo "sharded checkpoints: written by 4, resumed on P = 3 and 1, audited on P = 1 and 2, a torn one skipped: identical"

# Peak resident memory per process falls as P grows with sharded parameters, and sharding
# lowers it against the same P without: a model of 8.5 M parameters (34 MB) on a 4 x 1 mesh.
cat > mem.toml <<TOML
[model]
d_model = 256
n_layers = 8
n_heads = 4
d_ff = 1024
max_seq_len = 64
init_seed = 1
[optimizer]
lr = 1e-3
[mesh]
replicas = 4
shards = 1
micro_batches = 1
[train]
steps = 2
TOML
with_sharding mem.toml > mem_sharded.toml
peak() {  # the largest peak resident MiB of the job's processes, from trail's memory line
  sed -n 's/^memory: peak resident MiB by process: \([0-9. ]*\).*/\1/p' "$1" | tr ' ' '\n' | sort -g | tail -1; }
for P in 1 2 4; do
  mpi $P train --recipe mem_sharded.toml --data m4.json --run mem_s$P > /dev/null 2> mem_s$P.err
  peak mem_s$P.err > mem_s$P.peak
  [ -s mem_s$P.peak ] || fail "no memory line from the sharded run on P = $P: $(cat mem_s$P.err)"
done
mpi 4 train --recipe mem.toml --data m4.json --run mem_w4 > /dev/null 2> mem_w4.err
peak mem_w4.err > mem_w4.peak
python3 - "$(cat mem_s1.peak)" "$(cat mem_s2.peak)" "$(cat mem_s4.peak)" "$(cat mem_w4.peak)" <<'PY' || fail "peak memory does not fall with P"
import sys
s1, s2, s4, w4 = map(float, sys.argv[1:])
model = 8524032 * 4 / 2**20
print(f"peak resident per process, sharded: P=1 {s1:.0f} MiB, P=2 {s2:.0f}, P=4 {s4:.0f} "
      f"({s1/model:.1f}x, {s2/model:.1f}x, {s4/model:.1f}x the model's {model:.1f} MiB); "
      f"P=4 unsharded {w4:.0f} MiB ({w4/model:.1f}x)")
assert s1 > s2 > s4 and s4 < w4, "expected P=1 > P=2 > P=4 and sharded < unsharded at P=4"
PY

# A run's lifecycle on the 4x1 mesh: only source b from step 3 (data annealing), windows of 48
# instead of 32 and 6 per step instead of 8 from step 5 (two logical ranks then hold a padding
# row). In-process and P = 1, 2, 4 identical; stopped on P = 2 before both switches and resumed on
# P = 3 (3 processes for 4 ranks) identical; replayed across both switches on P = 1 and 2.
"$trail" data manifest --contract contract.json --source a=1=shards/train.shards.json \
  --source b=1=shards/train.shards.json --validation kjv=shards/val.shards.json --seq-len 32 \
  --chunk-tokens 60 --seed 7 --batch-schedule 0:8,5:6 --micro-batch 2 --seq-len-phases 5:48 \
  --mixture-phase 3:b=1 --output mlc.json > /dev/null
"$trail" data stats --manifest mlc.json --steps 8 | grep -q "from step 5 (window 40): L = 48, 18 windows, 864 tokens" \
  || fail "data stats does not show the length phase: $("$trail" data stats --manifest mlc.json --steps 8)"
"$trail" train --recipe r4.toml --data mlc.json --run lc_in --quiet > lc_in.out
for P in 1 2 4; do
  mpi $P train --recipe r4.toml --data mlc.json --run lc_$P --quiet > lc_$P.out
  cmp -s lc_in.out lc_$P.out || fail "lifecycle run on $P processes: final hashes differ"
  same_run lc_in lc_$P "lifecycle run on $P processes"
done
mpi 2 train --recipe r4.toml --data mlc.json --run lc_rs --stop-after 2 --quiet > /dev/null
mpi 3 train --resume --run lc_rs --quiet > /dev/null
same_run lc_in lc_rs "lifecycle run stopped on P = 2 before both switches, resumed on P = 3"
"$trail" audit replay --run lc_in --steps 2:8 --json --quiet | verdicts > lc_audit1.out
grep -q "^match " lc_audit1.out || fail "lifecycle replay in one process: $(cat lc_audit1.out)"
mpi 2 audit replay --run lc_in --steps 2:8 --json --quiet | verdicts > lc_audit2.out
cmp -s lc_audit1.out lc_audit2.out || fail "lifecycle replay on 2 processes: $(cat lc_audit2.out)"
echo "lifecycle run (mixture phase, length switch): P = 1, 2, 4, resumed on P = 3, replayed on P = 1, 2: identical"

if mpi 7 train --recipe r6.toml --data m6.json --run p7 --quiet > p7.out 2> p7.err; then
  fail "7 processes for 6 logical ranks ran"
fi
grep -q "start at most that many processes" p7.err || fail "no clear error for P > ranks: $(cat p7.err)"

# Resharding: stop with P = 2, resume with P = 3; stop with P = 2, resume in one process.
mpi 2 train --recipe r6.toml --data m6.json --run rs3 --stop-after 4 --quiet > /dev/null
mpi 3 train --resume --run rs3 --quiet > rs3.out
same_run in6 rs3 "P = 2 resumed with P = 3"
mpi 2 train --recipe r6.toml --data m6.json --run rs1 --stop-after 5 --quiet > /dev/null
"$trail" train --resume --run rs1 --quiet > /dev/null
same_run in6 rs1 "P = 2 resumed in one process"
echo "resume across process counts: identical"

# Checkpoints written by every process: written with P = 4 (no gather: each process writes its
# range of both files), meta.json records the 4 writers' ranges; resumed with P = 3 and in one
# process, and audited in one process from them: the straight run's bits.
checkpointed_by_4 r6.toml in6 w4 "whole parameters"
python3 -c 'import json,sys; l = json.load(open(sys.argv[1]))["layout"]
assert l["writers"] == 4 and len(l["flat_ranges"]) == 4 and l["flat_ranges"][0][0] == 0, l' \
  w4/checkpoints/step_00000004/meta.json || fail "P = 4 checkpoint: no layout of 4 writers"
# One process killed inside a checkpoint, its range half written: the job ends, the torn
# checkpoint is never listed, and the resume starts from the last complete one.
if killed_in_checkpoint 8 2 -np 4 "$trail" train --recipe r6.toml --data m6.json \
     --run torn --quiet > torn.out 2> torn.err; then
  fail "the job succeeded though a process died in its checkpoint"
fi
[ -d torn/checkpoints/step_00000008.tmp ] || fail "no torn checkpoint left: $(ls torn/checkpoints)"
[ ! -e torn/checkpoints/step_00000008 ] || fail "a torn checkpoint was committed"
mpi 3 train --resume --run torn --quiet > torn.resumed 2>&1 || fail "resume after the torn checkpoint: $(cat torn.resumed)"
same_run in6 torn "resumed with P = 3 after a process died in the step-8 checkpoint"
echo "checkpoints written by 4 processes: resumed on P = 3 and 1, audited, a torn one skipped: identical"

# The audit under mpirun: replay on P = 2 and 3 gives the same verdicts and replayed chains as in
# one process; operation traces recorded by 3 processes equal those of one (entries in rank order).
"$trail" audit replay --run in6 --steps 2:8 --json --quiet | verdicts > audit1.out
grep -q "^match " audit1.out || fail "audit replay in one process: $(cat audit1.out)"
for P in 2 3; do
  mpi $P audit replay --run in6 --steps 2:8 --json --quiet | verdicts > audit$P.out
  cmp -s audit1.out audit$P.out || fail "audit replay on $P processes: $(cat audit$P.out)"
done
"$trail" train --recipe r6.toml --data m6.json --run tr1 --trace-every 4 --quiet > /dev/null
mpi 3 train --recipe r6.toml --data m6.json --run tr3 --trace-every 4 --quiet > /dev/null
for t in tr1/traces/*.trace; do
  cmp -s <(tail -n +2 "$t") <(tail -n +2 "tr3/traces/$(basename "$t")") || fail "trace $t differs on 3 processes"
done
[ "$(ls tr1/traces | wc -l)" -eq 2 ] || fail "traces of steps 0 and 4 expected"
echo "audit replay on P = 1, 2, 3 and traces on P = 1, 3: identical"

# SIGKILL one process mid-run; the job must end, and a resume on another P land on the straight run.
"$trail" train --recipe long.toml --data m6.json --run straight --quiet > straight.out
RANDOM=${TRAIL_KILL_SEED:-12}
for trial in 1 2 3; do
  run=kill$trial
  # The launcher itself is killed after 60 s: a job that outlives its killed process hangs.
  timeout -s KILL 60 mpirun --allow-run-as-root --oversubscribe -np 3 "$trail" train \
    --recipe long.toml --data m6.json --run $run --quiet > $run.out 2> $run.err &
  launcher=$!
  # A seeded point in the run: once the trajectory holds k steps (1 <= k <= 30).
  k=$((RANDOM % 30 + 1))
  for _ in $(seq 600); do
    [ -f $run/trajectory.jsonl ] && [ "$(wc -l < $run/trajectory.jsonl)" -ge $k ] && break
    sleep 0.05
  done
  # The training processes (their command line starts with trail), not the launcher.
  victims=($(pgrep -f "^$trail train --recipe long.toml --data m6.json --run $run" || true))
  [ ${#victims[@]} -ge 1 ] || fail "trial $trial: no training process to kill"
  victim=${victims[$((RANDOM % ${#victims[@]}))]}
  kill -9 "$victim" 2>/dev/null || true
  start=$SECONDS
  status=0
  wait $launcher || status=$?
  [ $((SECONDS - start)) -lt 55 ] || fail "trial $trial: the job hung after a process was killed"
  [ $status -ne 0 ] || fail "trial $trial: the job reported success after a process was killed"
  done_steps=$(wc -l < $run/trajectory.jsonl)
  [ "$done_steps" -gt 0 ] && [ "$done_steps" -lt 40 ] \
    || fail "trial $trial: the kill did not land mid-run ($done_steps of 40 steps)"
  np=$((trial % 2 + 1))
  mpi $np train --resume --run $run --quiet > $run.resumed
  [ "$(tail -1 $run.resumed)" = "$(tail -1 straight.out)" ] \
    || fail "trial $trial: resumed with P = $np to $(tail -1 $run.resumed), not $(tail -1 straight.out)"
  cmp -s straight/trajectory.jsonl $run/trajectory.jsonl || fail "trial $trial: trajectory differs"
  echo "kill trial $trial: process killed after $done_steps steps; job ended in $((SECONDS - start)) s; resumed with P = $np: identical"
done
echo "PASS"
