#!/usr/bin/env bash
# Steps of a run trained by this build, replayed by another build of trail — the aarch64 build
# under qemu-aarch64 (another ISA) or the clang build (another compiler): the audit verdict must
# be a match, the same bits from the other build; for a run with whole parameters and for one
# with sharded parameters.
# Arguments: this build's trail, the other build's directory (configured by
# scripts/check-aarch64.sh or scripts/check-clang.sh), and how to run it: qemu or native.
set -euo pipefail
trail=$1; build=$2; how=$3
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-audit-cross-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cmake --build "$build" --target trail > /dev/null  # configured by scripts/check-*.sh
python3 -c '
import json
for d in range(60):
    print(json.dumps({"key": "doc%d" % d, "tokens": [(d * 131 + j * 17) % 250 for j in range(5 + d % 40)]}))' > docs.jsonl
contract=$(printf 'ef%.0s' $(seq 32))
"$trail" data shard --input docs.jsonl --output docs.tshard --vocab-size 256 --contract "$contract" \
  | sed 's|"path":"[^"]*"|"path":"docs.tshard"|' > entry
cat > manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 256, "eos_id": 250, "pad_id": 251},
 "sources": [{"name": "d", "target_share": 1.0, "shards": [$(cat entry)]}],
 "stream": {"seed": 4, "seq_len": 16, "positions": "window",
            "batch_schedule": [{"from_step": 0, "windows": 4}], "micro_batch_windows": 2}}
JSON
cat > recipe.toml <<'TOML'
[model]
d_model = 32
n_layers = 2
n_heads = 2
d_ff = 64
max_seq_len = 16
qk_norm = true
[mesh]
replicas = 2
shards = 1
[train]
steps = 6
checkpoint_every = 3
TOML
# The same run with sharded parameters ([mesh] shard_params): the replay gathers each layer.
sed 's/^shards = 1$/shards = 1\nshard_params = true/' recipe.toml > sharded.toml
grep -q '^shard_params = true$' sharded.toml
if [ "$how" = qemu ]; then
  # One thread: qemu-user here hangs on any std::thread (see scripts/check-aarch64.sh).
  other=(qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/src/cli/trail"); threads=1
else
  other=("$build/src/cli/trail"); threads=2
fi
for r in recipe sharded; do
  "$trail" train --recipe $r.toml --data manifest.json --run run_$r --quiet --threads 2 > /dev/null
  "${other[@]}" audit replay --run run_$r --steps 3:6 --threads $threads --quiet | tee replay.out
  grep -q "3 of 3 requested steps bit-identical" replay.out
  grep -q "verdict: MATCH" replay.out
done
