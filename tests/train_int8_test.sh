#!/usr/bin/env bash
# int8 quantization-aware training learns as well as fp32 on real text: the small KJV model of
# tests/train_cli_test.sh trained three times with the same recipe, steps and data — fp32, int8
# QAT with int8 backward GEMMs, int8 QAT with fp32 backward GEMMs — and each int8 run's final
# validation loss must end within 0.15 nats of the fp32 run's (all three printed). The runs are
# bit-reproducible like any other (trail selftest pins int8 goldens); this test is about learning.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-int8-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/kjv_train_data.sh"
kjv_train_data

steps=400
recipe $steps > fp32.toml
recipe $steps '[quant]
linear = "int8-lsq"' > int8.toml
recipe $steps '[quant]
linear = "int8-lsq"
backward = "fp32"' > int8-fp32bw.toml
for arm in fp32 int8 int8-fp32bw; do
  start=$(date +%s.%N)
  "$trail" train --recipe $arm.toml --data manifest.json --run $arm --threads 2 --quiet > $arm.out \
    || fail "training $arm"
  echo "$arm: $(node -e "console.log(($(date +%s.%N) - $start).toFixed(1))") s"
done
node -e '
const fs = require("fs");
const last = run => {
  const evals = fs.readFileSync(run + "/metrics.jsonl", "utf8").trim().split("\n").map(JSON.parse)
      .filter(l => l.val);
  return evals[evals.length - 1].val.kjv;
};
const base = last("fp32");
let ok = true;
console.log(`final validation loss after '"$steps"' steps: fp32 ${base.toFixed(4)} nats`);
for (const arm of ["int8", "int8-fp32bw"]) {
  const v = last(arm), gap = v - base;
  console.log(`  ${arm.padEnd(12)} ${v.toFixed(4)} nats (${gap >= 0 ? "+" : ""}${gap.toFixed(4)} against fp32)`);
  if (!(Math.abs(gap) <= 0.15)) { console.error(`${arm} ends more than 0.15 nats from fp32`); ok = false; }
}
process.exit(ok ? 0 : 1);
' || fail "an int8 run did not learn like the fp32 run"
# The recipe is what selects the arithmetic: the int8 and fp32 runs differ from the first step.
[ "$(head -1 int8/trajectory.jsonl)" != "$(head -1 fp32/trajectory.jsonl)" ] \
  || fail "the int8 recipe trained in fp32"
echo "PASS"
