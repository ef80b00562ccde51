#!/usr/bin/env bash
# Builds trail with clang (Debian's clang-14) and runs its golden-hash selftest on every SIMD
# target and 1, 2 and 7 threads: the same committed hashes (operations, data stream, training
# chains) must come out of a second compiler. The corpus factory is left out (TRAIL_CORPUS=OFF):
# the selftest does not run it, and it was a third of this build. The build must print no
# compiler warning.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/clang}
command -v clang++-14 >/dev/null || { echo "missing clang++-14: run scripts/install-deps.sh" >&2; exit 1; }
CC=clang-14 CXX=clang++-14 cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTRAIL_BUILD_TESTS=OFF -DTRAIL_BUILD_BENCH=OFF -DTRAIL_CUDA=OFF -DTRAIL_CORPUS=OFF -DTRAIL_PYTHON=OFF >/dev/null
# The build must be warning-free under clang as under GCC: a warning fails the check (a fresh
# build compiles every file; an incremental one only what changed).
log="$build/build.log"
cmake --build "$build" --target trail 2>&1 | tee "$log"
if grep -q "warning:" "$log"; then
  echo "check-clang: the clang build printed compiler warnings (above); fix them" >&2
  exit 1
fi
exec "$build/src/cli/trail" selftest --threads 1,2,7
