#!/usr/bin/env bash
# Submits a corpus build in tasks to Slurm: the read phase as one job array of TASKS elements
# (at most MAX_RUNNING at once), the final phase as a job that starts when every element has
# succeeded. OUT must be on storage every node sees.
#
#   examples/slurm/submit-corpus-build.sh TRAIL CONFIG OUT TASKS [MAX_RUNNING]
#
# A failed element: rerun it alone (sbatch --array=I ... corpus-read.sbatch), then submit
# corpus-final.sbatch; the final phase names any task still missing or damaged.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
export TRAIL=$1 CONFIG=$2 OUT=$3 TASKS=$4
mkdir -p "$OUT"
read_job=$(sbatch --parsable --export=ALL --array="0-$((TASKS - 1))%${5:-256}" \
  --output="$OUT/.slurm-read-%A_%a.log" "$here/corpus-read.sbatch")
sbatch --parsable --export=ALL --dependency="afterok:$read_job" \
  --output="$OUT/.slurm-final-%j.log" "$here/corpus-final.sbatch"
