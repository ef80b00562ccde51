#!/usr/bin/env bash
# scripts/pack-cuda.sh and scripts/check-cuda.sh, run here without a GPU: the check on the cpu
# device (CHECK_DEVICE=cpu, no benchmarks) must unpack the bundle, run with the carried
# libraries, train the three recipes to the CPU runs' bytes and replay the fp32 run, and write
# a report that says so. The GPU machine runs the same scripts with the cuda device.
#   cuda_check_script_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1; build=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-cudacheck-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
PACK_BUILD=0 "$src/scripts/pack-cuda.sh" "$build" 12 "$dir/bundle" || fail "pack-cuda.sh"
CHECK_DEVICE=cpu CHECK_BENCH=0 "$src/scripts/check-cuda.sh" "$dir/bundle" "$dir/out" > "$dir/log" \
  || { cat "$dir/log"; fail "check-cuda.sh"; }
python3 - "$dir/out/cuda-check.json" <<'PY' || fail "the report: $(cat "$dir/out/cuda-check.json")"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["golden_reproduces"] is True and s["golden_mismatched"] == [], s
assert s["training_same_bits"] == {"fp32": "same", "int8": "same", "int8-learned": "same"}, s
assert s["cpu_run_replays_on_gpu"] is True, s
PY
echo "PASS"
