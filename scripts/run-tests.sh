#!/usr/bin/env bash
# `make test`: installs what is missing, configures, builds, fetches the assets and runs ctest,
# then says where the time went: each phase, and the slowest tests (ctest's own timings). The
# report is printed last and kept in BUILD/test-times.txt; the exit status is ctest's, or 1 when
# the build printed a compiler warning.
#   scripts/run-tests.sh [BUILD] [JOBS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
jobs=${2:-$(nproc)}
cd "$here"

phases=()
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { print a - b }'; }
# phase NAME COMMAND...: runs COMMAND and records its wall time under NAME.
phase() {
  local name=$1 t0
  shift
  t0=$(now)
  "$@"
  phases+=("$(printf '%-10s %8.1f s' "$name" "$(since "$t0")")")
}

start=$(now)
phase deps scripts/install-deps.sh "$build"
# The real peers (PyTorch 2.x, transformers, lm-eval) that interop tests compare with.
phase peers scripts/install-peers.sh "$build"
# The CUDA backend must compile where install-deps.sh installs nvcc from PyPI (x86-64).
cuda=AUTO; [ "$(uname -m)" = x86_64 ] && cuda=ON
phase configure cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAIL_CUDA="${TRAIL_CUDA:-$cuda}"
# The build must be warning-free (GCC here; CI keeps it so): its output is kept and its compiler
# warnings counted, and any fails the run after the tests.
build_logged() {
  cmake --build "$build" -j "$jobs" 2>&1 | tee "$build/build.log"
  return "${PIPESTATUS[0]}"
}
phase build build_logged
warnings=$(grep -c ': warning: ' "$build/build.log" || true)
phase assets scripts/fetch-assets.sh "$build/assets"
log=$build/ctest.log
t0=$(now)
set +e
ctest --test-dir "$build" --output-on-failure -j "$jobs" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
phases+=("$(printf '%-10s %8.1f s  (%s jobs)' ctest "$(since "$t0")" "$jobs")")

{
  echo "make test: where the time went ($(nproc) CPUs)"
  printf '  %s\n' "${phases[@]}"
  printf '  %-10s %8.1f s\n' total "$(since "$start")"
  echo "slowest tests (each test's own wall time; tests run $jobs at a time):"
  # ctest lines: "  12/408 Test  #37: name ......   Passed   12.34 sec". awk takes the first 12
  # and reads the rest (head would close the pipe early: SIGPIPE to sort, and pipefail fails).
  sed -n 's/^ *[0-9]*\/[0-9]* *Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1/p' "$log" |
    sort -rn | awk 'NR <= 12 { printf "  %8.1f s  %s\n", $1, $2 }'
  if [ "$warnings" -gt 0 ]; then
    echo "FAIL: the build printed $warnings compiler warnings ($build/build.log):"
    grep ': warning: ' "$build/build.log" | sort | uniq -c | sort -rn | awk 'NR <= 10'
  fi
} | tee "$build/test-times.txt"
[ "$warnings" -gt 0 ] && [ "$status" -eq 0 ] && status=1
exit "$status"
