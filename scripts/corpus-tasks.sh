#!/usr/bin/env bash
# A corpus build in tasks on one machine: the read tasks through `xargs -P`, each retried once
# if it fails, then the final phase. The same commands a cluster scheduler runs
# (examples/slurm/); docs/corpus.md, "A build in tasks".
#
#   scripts/corpus-tasks.sh TRAIL CONFIG OUT TASKS [PARALLEL] [-- extra build flags]
#
# Every task is idempotent: run this again after any failure and only what is not complete
# is redone.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
trail=$1; config=$2; out=$3; tasks=$4; parallel=${5:-$(nproc)}
shift $(( $# >= 5 ? 5 : 4 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
export trail config out tasks
run_task() {  # one read task; a second attempt if the first fails
  "$trail" corpus build --config "$config" --out "$out" --task "$1" --tasks "$tasks" --quiet "${@:2}" ||
    "$trail" corpus build --config "$config" --out "$out" --task "$1" --tasks "$tasks" --quiet "${@:2}"
}
export -f run_task
seq 0 $((tasks - 1)) | xargs -P "$parallel" -I{} bash -c 'run_task "$@"' _ {} "${extra[@]}"
"$trail" corpus build --config "$config" --out "$out" --tasks "$tasks" "${extra[@]}"
