#!/usr/bin/env bash
# The run the Python package's tests read: the King James Bible data of the training tests
# (tests/kjv_train_data.sh), 30 steps of the small model with operation traces every 10 steps
# and a signed attestation. Usage: make_run.sh TRAIL ASSETS SOURCE_DIR (in the working dir).
set -euo pipefail
trail=$1; assets=$2; source=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$source/tests/kjv_train_data.sh"
kjv_train_data
recipe 30 > recipe.toml
"$trail" audit keygen --out trainer > /dev/null
"$trail" train --recipe recipe.toml --data manifest.json --run run --threads 2 --quiet \
  --trace-every 10 --key trainer.key > train.out 2>&1 || { cat train.out; fail "training"; }
