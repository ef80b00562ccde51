#!/usr/bin/env bash
# The Python package against numpy (bench/python_bench.py), with OpenBLAS's core type chosen for
# this CPU and every core for both.   bench/run_python_bench.sh BUILD [MANIFEST]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
manifest=${2:-$build/demo/manifest.json}
. "$here/openblas_core.sh"  # sets OPENBLAS_CORE and says which
if [ -n "$OPENBLAS_CORE" ]; then export OPENBLAS_CORETYPE=$OPENBLAS_CORE; fi
export OPENBLAS_NUM_THREADS=$(nproc) OMP_NUM_THREADS=$(nproc)
[ -f "$manifest" ] || manifest=""
PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_bench.py" $manifest
