#!/usr/bin/env bash
# Cross-builds trail for aarch64 and runs its golden-hash selftest under qemu-aarch64: the same
# committed hashes must come out of a different ISA (NEON, and the scalar reference), with and
# without the dot-product extension.
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
# Twice: on qemu's `max` CPU, which has the dot-product extension (the int8 GEMM runs on SDOT),
# and as a Cortex-A57 (ARMv8.0, no dot product: MUL and SADALP). Each must name its kernel.
for cpu in max:sdot cortex-a57:mul+sadalp; do
  out=$(qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "${cpu%%:*}" "$build/src/cli/trail" selftest \
        --threads 1) || { echo "$out"; echo "selftest failed on qemu -cpu ${cpu%%:*}" >&2; exit 1; }
  echo "qemu -cpu ${cpu%%:*}:"; echo "$out"
  grep -q "NEON .*int8 ${cpu#*:} " <<<"$out" ||
    { echo "expected the NEON int8 GEMM on ${cpu#*:} under -cpu ${cpu%%:*}" >&2; exit 1; }
done
