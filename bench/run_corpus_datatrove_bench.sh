#!/usr/bin/env bash
# The corpus factory beside datatrove on the same input, one core each: MB/s per core and the
# documents each keeps and drops by rule (bench/corpus_vs_datatrove.py says what runs).
#   bench/run_corpus_datatrove_bench.sh [BUILD] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
python=$build/peers/bin/python
"$python" -c "import datatrove, spacy" 2>/dev/null \
  || { echo "run_corpus_datatrove_bench: no datatrove in $python (make peers installs it)" >&2; exit 1; }
log=$(mktemp "${TMPDIR:-/tmp}/trail-datatrove-log-XXXXXX")
trap 'rm -f "$log"' EXIT
# datatrove logs every step to stderr: kept aside, shown only when the bench fails.
"$python" "$here/corpus_vs_datatrove.py" "$(cd "$build" && pwd)/src/cli/trail" "$build/assets" \
  "$rounds" 2> "$log" || { tail -60 "$log"; exit 1; }
