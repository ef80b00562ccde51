#!/usr/bin/env bash
# OpenBLAS 0.3.21 does not recognise this CPU family and would fall back to slow kernels; the
# SkylakeX kernels are its best here (otherwise it runs SSE3 kernels). Benchmark-only setting.
set -euo pipefail
build=${1:-build}
export OPENBLAS_CORETYPE=${TRAIL_BENCH_OPENBLAS_CORETYPE:-SKYLAKEX}
unset OPENBLAS_L2_SIZE
exec "$build/bench/gemm_bench" "${@:2}"
