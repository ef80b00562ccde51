#!/usr/bin/env bash
# `trail generate` on a model trained on real text (the King James Bible):
#   - the same options give the same ids and log-probability bits with 1, 2 and 7 threads and on
#     every SIMD target here; another seed gives other tokens;
#   - greedy text streams to stdout and equals the --json text; a stop string cuts it; the
#     model's context ends a long prompt's generation;
#   - the tokenizer is found through the manifest's contract hash; a run without checkpoints, a
#     step without one, another tokenizer, an empty or too long prompt and bad sampling options
#     get clear errors.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-generate-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { "$here/expect_exit.sh" "$@" > expect.out || { cat expect.out; fail "$*"; }; }

. "$here/kjv_train_data.sh"
kjv_train_data
recipe 60 > recipe.toml
"$trail" train --recipe recipe.toml --data manifest.json --run run --threads 2 > train.out 2>&1 \
  || { cat train.out; fail "training"; }

echo "-- the same bits on every thread count and SIMD target"
gen() { "$trail" generate --run run --prompt "And God said" --max-tokens 40 "$@"; }
field() { node -e 'const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
                   console.log(JSON.stringify([j.ids, j.logprob_bits, j.text, j.finish]))'; }
ref=$(gen --temperature 0.8 --top-p 0.95 --seed 5 --json --threads 1 | field)
for t in 2 7; do
  [ "$(gen --temperature 0.8 --top-p 0.95 --seed 5 --json --threads $t | field)" = "$ref" ] \
    || fail "threads $t: other tokens or bits"
done
targets=$("$trail" selftest --json --threads 1 | node -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  console.log([...new Set(j.runs.map(r => r.backend.replace("+AMX", "")))].join(" "))')
for b in $targets; do
  [ "$(TRAIL_BACKEND=$b gen --temperature 0.8 --top-p 0.95 --seed 5 --json | field)" = "$ref" ] \
    || fail "SIMD target $b: other tokens or bits"
done
echo "identical on threads 1, 2, 7 and targets: $targets"
[ "$(gen --temperature 0.8 --top-p 0.95 --seed 6 --json | field)" != "$ref" ] \
  || fail "another seed gave the same tokens"

echo "-- greedy text, stop strings, the context"
gen --temperature 0 > greedy.txt 2> greedy.err
grep -q "finish: length" greedy.err || fail "no summary line: $(cat greedy.err)"
node -e '
  const fs = require("fs");
  const j = JSON.parse(fs.readFileSync(0, "utf8"));
  const streamed = fs.readFileSync("greedy.txt", "utf8");
  if (streamed !== j.text + "\n") { console.error("streamed text differs from --json"); process.exit(1); }
  if (j.ids.length !== 40 || j.logprob_bits.length !== 40) process.exit(1);
  for (let i = 0; i < 40; i++) {
    const b = Buffer.alloc(4); b.writeFloatBE(j.logprobs[i]);
    if (b.toString("hex") !== j.logprob_bits[i] || !(j.logprobs[i] <= 0)) { console.error("bits", i); process.exit(1); }
  }' < <(gen --temperature 0 --json) || fail "greedy --json"
stop=$(head -c 30 greedy.txt | tail -c 4)
gen --temperature 0 --stop "$stop" --json > stop.json
node -e '
  const j = JSON.parse(require("fs").readFileSync("stop.json", "utf8"));
  const full = require("fs").readFileSync("greedy.txt", "utf8");
  if (j.finish !== "stop" || j.text !== full.slice(0, full.indexOf(process.argv[1]))) process.exit(1);' \
  "$stop" || fail "stop string"
long=$(head -c 2000 "$assets/text/kjv.txt")
"$trail" generate --run run --prompt "$long" --max-tokens 5 --json > long.json 2>&1 || true
grep -q "context is max_seq_len = 128" long.json || fail "a prompt past the context: $(cat long.json)"
printf '%s' "$(head -c 310 "$assets/text/kjv.txt" | tail -c 300)" > prompt.txt
"$trail" generate --run run --prompt-file prompt.txt --max-tokens 100 --temperature 0 --json > ctx.json
node -e '
  const j = JSON.parse(require("fs").readFileSync("ctx.json", "utf8"));
  if (j.finish !== "context" || j.prompt_ids.length + j.ids.length !== 129) {
    console.error(j.finish, j.prompt_ids.length, j.ids.length); process.exit(1); }' \
  || fail "the context did not end the generation"

echo "-- errors"
expect 3 "no checkpoint of step 7; its checkpoints: " -- "$trail" generate --run run --step 7 --prompt x
mkdir -p fresh/checkpoints && cp run/run.json run/recipe.toml fresh/
expect 3 "has no checkpoint yet" -- "$trail" generate --run fresh --prompt x
"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --output other.json > /dev/null
expect 3 "not the tokenizer of this run" -- "$trail" generate --run run --prompt x --tokenizer other.json
expect 3 "give the prompt" -- "$trail" generate --run run --prompt ""
: > empty.txt
expect 3 "the prompt is empty" -- "$trail" generate --run run --prompt-file empty.txt
expect 3 "top-p must be in \(0, 1\]" -- "$trail" generate --run run --prompt x --top-p 0
expect 3 "temperature must be >= 0" -- "$trail" generate --run run --prompt x --temperature -1
expect 2 "prompt-file" -- "$trail" generate --run run --prompt x --prompt-file prompt.txt
echo "PASS"
