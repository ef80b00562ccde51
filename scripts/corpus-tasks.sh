#!/usr/bin/env bash
# A corpus build in tasks on one machine: the read tasks through `xargs -P` (each retried once
# if it fails), then — with NEAR > 0 — the index phase and the NEAR near-dedup tasks the same
# way, then the final phase. The same commands a cluster scheduler runs (examples/slurm/);
# docs/corpus.md, "A build in tasks".
#
#   scripts/corpus-tasks.sh TRAIL CONFIG OUT TASKS [PARALLEL] [NEAR] [-- extra build flags]
#
# Every task is idempotent: run this again after any failure and only what is not complete
# is redone.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
trail=$1; config=$2; out=$3; tasks=$4; shift 4
parallel=$(nproc); near=0
if [ $# -gt 0 ] && [ "$1" != "--" ]; then parallel=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then near=$1; shift; fi
[ "${1:-}" = "--" ] && shift
extra=("$@")
near_flags=()
[ "$near" -gt 0 ] && near_flags=(--near-tasks "$near")
export trail config out tasks
run() {  # one task's command; a second attempt if the first fails
  "$trail" corpus build --config "$config" --out "$out" --tasks "$tasks" --quiet "$@" ||
    "$trail" corpus build --config "$config" --out "$out" --tasks "$tasks" --quiet "$@"
}
export -f run
seq 0 $((tasks - 1)) | xargs -P "$parallel" -I{} bash -c 'run --task "$@"' _ {} "${extra[@]}"
if [ "$near" -gt 0 ]; then
  run --phase index "${near_flags[@]}" "${extra[@]}"
  seq 0 $((near - 1)) | xargs -P "$parallel" -I{} bash -c 'run --phase near --task "$@"' _ {} \
    "${near_flags[@]}" "${extra[@]}"
fi
"$trail" corpus build --config "$config" --out "$out" --tasks "$tasks" "${near_flags[@]}" "${extra[@]}"
