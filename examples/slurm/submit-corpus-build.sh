#!/usr/bin/env bash
# Submits a corpus build in tasks to Slurm: the read phase as a job array of TASKS elements (at
# most MAX_RUNNING at once); with NEAR_TASKS > 0 the index job and the near phase as a job array
# of NEAR_TASKS elements, each starting when the previous phase has succeeded; then the final
# job. OUT must be on storage every node sees. Prints the final job's id.
#
#   examples/slurm/submit-corpus-build.sh TRAIL CONFIG OUT TASKS [NEAR_TASKS] [MAX_RUNNING]
#
# A failed element: rerun it alone (sbatch --array=I ... corpus-read.sbatch or
# corpus-near.sbatch), then submit the later phases; each names any task still missing or
# damaged.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
export TRAIL=$1 CONFIG=$2 OUT=$3 TASKS=$4 NEAR_TASKS=${5:-0}
max=${6:-256}
mkdir -p "$OUT"
[ "$NEAR_TASKS" -gt 0 ] || unset NEAR_TASKS
job=$(sbatch --parsable --export=ALL --array="0-$((TASKS - 1))%$max" \
  --output="$OUT/.slurm-read-%A_%a.log" "$here/corpus-read.sbatch")
if [ -n "${NEAR_TASKS:-}" ]; then
  job=$(sbatch --parsable --export=ALL --dependency="afterok:$job" \
    --output="$OUT/.slurm-index-%j.log" "$here/corpus-index.sbatch")
  job=$(sbatch --parsable --export=ALL --dependency="afterok:$job" \
    --array="0-$((NEAR_TASKS - 1))%$max" --output="$OUT/.slurm-near-%A_%a.log" "$here/corpus-near.sbatch")
fi
sbatch --parsable --export=ALL --dependency="afterok:$job" \
  --output="$OUT/.slurm-final-%j.log" "$here/corpus-final.sbatch"
