#!/usr/bin/env bash
# Grouped-query attention against multi-head attention at the same d_model, side by side:
#  - training (bench/train_bench, configuration B: 6 layers, d 384, 6 query heads, T 256, B 8)
#    with 6 (multi-head), 2 and 1 key/value heads: median seconds per step and planned
#    activation memory, three interleaved rounds;
#  - generation (d_model 512, 8 layers, 8 query heads, d_ff 1408, a 1024-id BPE vocabulary of the
#    KJV, trained one step) with 8, 2 and 1 key/value heads: greedy decoding of NEW tokens after a
#    short prompt, decode tokens/s (median of three interleaved rounds) and the KV cache's bytes.
#   bench/run_gqa_bench.sh [BUILD] [THREADS (2)] [NEW_TOKENS (900)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
threads=${2:-2}
new=${3:-900}
here=$(cd "$(dirname "$0")" && pwd)
trail=$build/src/cli/trail
assets=$build/assets
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-gqabench-XXXXXX")
trap 'rm -rf "$out"' EXIT
cd "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
field() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())[sys.argv[1]])' "$1"; }

for round in 1 2 3; do
  for kv in 0 2 1; do
    "$build/bench/train_bench" 3 "$threads" fp32 "kv=$kv" >> "train-$kv.jsonl"
  done
done
echo "training, configuration B (6 query heads, d 384, T 256, 8 windows), $threads threads, median of 3:"
for kv in 0 2 1; do
  s=$(while read -r l; do echo "$l" | field step_s; done < "train-$kv.jsonl" | median)
  m=$(head -1 "train-$kv.jsonl" | field activations_mb)
  [ "$kv" = 0 ] && base=$s
  printf '  %s key/value heads: %.3f s/step (speed %.2fx of multi-head), activations %s MB\n' \
    "$([ "$kv" = 0 ] && echo 6 || echo "$kv")" "$s" "$(echo "$base / $s" | bc -l)" "$m"
done

. "$here/../tests/kjv_train_data.sh"
kjv_train_data
prompt="And it came to pass, when the LORD would take up Elijah into heaven by a whirlwind, that"
for kv in 8 2 1; do
  cat > r$kv.toml <<TOML
[model]
d_model = 512
n_layers = 8
n_heads = 8
n_kv_heads = $kv
d_ff = 1408
max_seq_len = 1024
init_seed = 1
[train]
steps = 1
checkpoint_every = 1
eval_every = 0
TOML
  "$trail" train --recipe r$kv.toml --data manifest.json --run run$kv --threads "$threads" \
    > train$kv.out 2>&1 || { cat train$kv.out; fail "training"; }
done
for round in 1 2 3; do
  for kv in 8 2 1; do
    "$trail" generate --run run$kv --prompt "$prompt" --max-tokens "$new" --temperature 0 --json \
      --threads "$threads" > g.json
    python3 -c 'import json,sys; j = json.load(open("g.json"))
print(len(j["ids"]), (len(j["ids"]) - 1) / j["decode_seconds"], j["kv_cache_bytes"])' >> "gen-$kv.txt"
  done
done
echo "greedy decoding, d_model 512 x 8 layers, 8 query heads, up to $new new tokens, $threads threads, median of 3:"
for kv in 8 2 1; do
  t=$(awk '{print $2}' "gen-$kv.txt" | median)
  read -r n _ bytes < "gen-$kv.txt"
  [ "$kv" = 8 ] && base=$t
  printf '  %s key/value heads: %.1f tok/s (speed %.2fx of multi-head; %s tokens), KV cache %.1f MB\n' \
    "$kv" "$t" "$(echo "$t / $base" | bc -l)" "$n" "$(echo "$bytes / 1048576" | bc -l)"
done
