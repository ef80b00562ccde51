# Sourced by the benchmark scripts: the OpenBLAS core type that is the baseline's best on this
# CPU, from its flags. OpenBLAS 0.3.21 (Debian 12) does not recognise some recent CPU families
# and falls back to SSE3 kernels there, so its detection is overridden on x86-64:
#   AVX-512 (avx512f, avx512bw, avx512vl) -> SKYLAKEX;  AVX2 + FMA -> ZEN on AMD, HASWELL
#   otherwise;  anything older, or not x86-64 -> OpenBLAS's own detection.
# Never a core type the CPU cannot run (that dies with SIGILL). TRAIL_BENCH_OPENBLAS_CORETYPE
# overrides the choice. Sets OPENBLAS_CORE (empty: OpenBLAS's detection) and prints it.
openblas_core_for_this_cpu() {
  [ -n "${TRAIL_BENCH_OPENBLAS_CORETYPE:-}" ] && { echo "$TRAIL_BENCH_OPENBLAS_CORETYPE"; return; }
  [ "$(uname -m)" = x86_64 ] || return 0
  local flags vendor
  local info=${TRAIL_BENCH_CPUINFO:-/proc/cpuinfo}  # (a file of the same form, for tests)
  flags=" $(grep -m1 '^flags' "$info" | cut -d: -f2) "
  vendor=$(grep -m1 '^vendor_id' "$info" | cut -d: -f2 | tr -d ' ')
  has() { [[ "$flags" == *" $1 "* ]]; }
  if has avx512f && has avx512bw && has avx512vl; then
    echo SKYLAKEX
  elif has avx2 && has fma; then
    [ "$vendor" = AuthenticAMD ] && echo ZEN || echo HASWELL
  fi
}
OPENBLAS_CORE=$(openblas_core_for_this_cpu)
echo "baseline: OpenBLAS core type ${OPENBLAS_CORE:-(its own detection)}" >&2
