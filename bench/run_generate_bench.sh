#!/usr/bin/env bash
# Generation speed of trail against llama.cpp (node-llama-cpp@3.21.1's prebuilt CPU build, the
# reference for CPU inference) on the same f32 model and prompt, greedy, 1 and 2 threads, three
# alternating rounds; prints decode tokens/s medians and the ratio. The model: d_model 512,
# 8 layers, 8 heads, d_ff 1408, the KV cache up to 512 positions, a 1024-id BPE vocabulary of
# the KJV, trained one step (speed does not depend on the weights), exported to GGUF f32. Then
# evaluation speed: OLMES requests/s at --limit 200 on the nine tasks (BUILD/assets/olmes
# or $TRAIL_OLMES), and its cost against a training step's forward.
#   bench/run_generate_bench.sh [BUILD] [NEW_TOKENS] [EVAL_LIMIT (200; 0 leaves evaluation out)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
new=${2:-128}
limit=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
trail=$build/src/cli/trail
assets=$build/assets
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-genbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
cd "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/../tests/kjv_train_data.sh"
kjv_train_data
cat > recipe.toml <<TOML
[model]
d_model = 512
n_layers = 8
n_heads = 8
d_ff = 1408
max_seq_len = 512
init_seed = 1
[train]
steps = 1
checkpoint_every = 1
eval_every = 0
TOML
"$trail" train --recipe recipe.toml --data manifest.json --run run --threads 2 > train.out 2>&1 \
  || { cat train.out; fail "training"; }
"$trail" export --run run --format gguf --out model.gguf > /dev/null
prompt="And it came to pass, when the LORD would take up Elijah into heaven by a whirlwind, that"
"$trail" generate --run run --prompt "$prompt" --max-tokens 2 --temperature 0 --json |
  node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(0, "utf8")).prompt_ids))' > prompt.json
for t in 1 2; do
  for round in 1 2 3; do
    "$trail" generate --run run --prompt "$prompt" --max-tokens "$new" --temperature 0 --json \
      --threads $t | node -e '
        const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
        console.log(JSON.stringify({tokens: j.ids.length, tok_s: (j.ids.length - 1) / j.decode_seconds,
                                    prefill_s: j.prefill_seconds}))' >> "trail-$t.jsonl"
    node "$here/generate_bench_llama.mjs" "$assets/llama" model.gguf prompt.json "$new" $t >> "llama-$t.jsonl"
  done
done
node -e '
const fs = require("fs");
const read = f => fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse);
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
console.log(`greedy decoding, d_model 512 x 8 layers, vocab 1024, f32, prompt ${JSON.parse(fs.readFileSync("prompt.json")).length} tokens, up to ${process.argv[1]} new (median of 3):`);
for (const t of [1, 2]) {
  const a = read(`trail-${t}.jsonl`), b = read(`llama-${t}.jsonl`);
  const ta = med(a.map(r => r.tok_s)), tb = med(b.map(r => r.tok_s));
  console.log(`  ${t} thread(s): trail ${ta.toFixed(1)} tok/s (${a[0].tokens} tokens), llama.cpp ${tb.toFixed(1)} tok/s (${b[0].tokens}): ${(ta / tb).toFixed(2)}x`);
}' "$new"
olmes=${TRAIL_OLMES:-$assets/olmes}
if [ -d "$olmes" ] && [ "$limit" -gt 0 ]; then
  "$trail" eval --run run --tasks "$olmes" --limit "$limit" --threads 2 --quiet --out eval.json > /dev/null
  # Training steps of the same model on 512-token batches (the median of steps 2-5), for the
  # forward's rate (a step is about three forwards' work).
  sed 's/^steps = 1$/steps = 6\nlog_every = 1/' recipe.toml > recipe4.toml
  "$trail" train --recipe recipe4.toml --data manifest.json --run run4 --threads 2 > train4.out 2>&1
  node -e '
    const fs = require("fs");
    const r = JSON.parse(fs.readFileSync("eval.json", "utf8"));
    const lines = fs.readFileSync("eval.requests.jsonl", "utf8").trim().split("\n").map(JSON.parse);
    const windows = lines.reduce((s, l) => s + l.context_tokens + l.continuation_tokens - 1, 0);
    // Steps 2..5: neither the first (warm-up) nor the last (it also validates).
    const rates = fs.readFileSync("train4.out", "utf8").split("\n")
      .filter(l => /^step [2-5]\/6 /.test(l)).map(l => Number(/([0-9.]+) tok\/s/.exec(l)[1]))
      .sort((a, b) => a - b);
    const train = rates[Math.floor(rates.length / 2)];
    console.log(`evaluation: ${r.requests} OLMES requests (nine tasks, CF and MCF, --limit ${r.limit}) in ${r.seconds.toFixed(1)} s: ${(r.requests / r.seconds).toFixed(1)} requests/s on 2 threads`);
    console.log(`  ${(windows / r.seconds).toFixed(0)} window tokens/s (${windows} tokens read, shared prefixes counted each time) vs a training step ${train} tok/s (a forward is about a third: ~${(3 * train).toFixed(0)} tok/s)`);'
fi
