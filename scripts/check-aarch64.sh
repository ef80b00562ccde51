#!/usr/bin/env bash
# Cross-builds trail for aarch64 and runs its golden-hash selftest under qemu-aarch64: the same
# committed hashes must come out of a different ISA (NEON, and the scalar reference).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/aarch64}
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
done
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" \
  -DTRAIL_BUILD_TESTS=OFF -DTRAIL_BUILD_BENCH=OFF -DTRAIL_CUDA=OFF -DTRAIL_PYTHON=OFF >/dev/null
cmake --build "$build" --target trail
# One thread: qemu-user here hangs on any std::thread, even a trivial program that starts and
# joins one; thread-count invariance is by construction and tested natively with 1, 2 and 7.
exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/src/cli/trail" selftest --threads 1
