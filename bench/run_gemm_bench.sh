#!/usr/bin/env bash
# trail's GEMMs against OpenBLAS with its best kernels for this CPU (bench/openblas_core.sh
# chooses the core type from the CPU's flags and prints it). Benchmark-only setting.
set -euo pipefail
build=${1:-build}
. "$(cd "$(dirname "$0")" && pwd)/openblas_core.sh"
if [ -n "$OPENBLAS_CORE" ]; then export OPENBLAS_CORETYPE=$OPENBLAS_CORE; else unset OPENBLAS_CORETYPE; fi
unset OPENBLAS_L2_SIZE
exec "$build/bench/gemm_bench" "${@:2}"
