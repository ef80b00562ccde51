#!/usr/bin/env bash
# lm-eval (the peers' environment, scripts/install-peers.sh) scores the Hugging Face export of
# a model trained here on the King James Bible on the same requests as `trail eval`: real OLMES
# tasks from the assets (ARC-Easy cloze and multiple-choice, HellaSwag cloze, Winogrande's
# partial scoring), their first 40 documents each, turned into lm-eval tasks read from local
# files (tests/peers/olmes_to_lm_eval.py) and run with `lm_eval --model hf --log_samples`,
# offline. tests/peers/lm_eval_compare.py then checks every request: the same (context,
# continuation), the same token ids and window, log-likelihoods within a float32 bound, the same
# is_greedy, and per task the same accuracies. A log-likelihood altered in trail's requests
# file must fail that comparison.
#   lm_eval_test.sh TRAIL ASSETS OLMES PROBE PEERS_PYTHON
# A missing peer is a failure, never a skip.
set -euo pipefail
trail=$1; assets=$2; olmes=$3; probe=$4; python=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/peers/setup.sh"
peer_setup lm-eval "$python" "lm_eval, transformers, torch"
[ -d "$olmes/arc_easy/rc_5shot" ] || fail "no OLMES request files at '$olmes' (scripts/fetch-assets.sh)"

. "$here/kjv_train_data.sh"
kjv_train_data
recipe 30 | sed 's/^max_seq_len = 128$/max_seq_len = 256/' > llama.toml
"$trail" train --recipe llama.toml --data manifest.json --run llama --threads 2 > train.out 2>&1 \
  || { cat train.out; fail "training"; }
"$trail" export --run llama --format hf --out llama.hf > /dev/null

# lm-eval task name = trail's task name = OLMES folder.
tasks=(arc_easy_rc=arc_easy=arc_easy/rc_5shot arc_easy_mc=arc_easy:mc=arc_easy/mc_5shot
       hellaswag_rc=hellaswag=hellaswag/rc_5shot winogrande_rc=winogrande=winogrande/rc_5shot)
limit=40
lm_names=(); convert=(); compare=(); trail_dirs=()
for t in "${tasks[@]}"; do
  IFS== read -r lm tr folder <<< "$t"
  lm_names+=("$lm"); convert+=("$lm=$olmes/$folder"); compare+=("$lm=$tr")
  trail_dirs+=("$olmes/$folder")
done
"$trail" eval --run llama --tasks "${trail_dirs[@]}" --limit $limit --threads 2 --quiet --out eval.json
"$python" "$here/peers/olmes_to_lm_eval.py" lm-tasks $limit "${convert[@]}"
for lm in "${lm_names[@]}"; do
  "$probe" llama pairs "lm-tasks/$lm.pairs.jsonl" "lm-tasks/$lm.trail-ids"
done
lm_eval_bin=$(dirname "$python")/lm_eval
HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 "$lm_eval_bin" --model hf \
  --model_args "pretrained=$peer_dir/llama.hf,dtype=float32,attn_implementation=eager" \
  --tasks "$(IFS=,; echo "${lm_names[*]}")" --include_path lm-tasks --batch_size 1 --device cpu \
  --log_samples --output_path lm-out > lm-eval.log 2>&1 || { tail -40 lm-eval.log; fail "lm_eval"; }
grep -E '^\|' lm-eval.log
"$python" "$here/peers/lm_eval_compare.py" "$peer_dir/llama.hf" lm-out eval.json lm-tasks "${compare[@]}" \
  2> compare.err || { cat compare.err; fail "lm-eval and trail disagree"; }

echo "-- a log-likelihood altered by 0.01 in trail's requests file is found"
mkdir -p forged
"$python" - eval.json forged <<'PY'
import json, os, sys
report, out = sys.argv[1], sys.argv[2]
r = json.load(open(report))
lines = open(r["requests_file"]).read().splitlines()
j = json.loads(lines[7]); j["loglik"] += 0.01; lines[7] = json.dumps(j)
open(os.path.join(out, r["requests_file"]), "w").write("\n".join(lines) + "\n")
json.dump(r, open(os.path.join(out, "eval.json"), "w"))
PY
if "$python" "$here/peers/lm_eval_compare.py" "$peer_dir/llama.hf" lm-out forged/eval.json lm-tasks \
     "${compare[@]}" > forged.out 2>&1; then
  cat forged.out; fail "an altered log-likelihood passed"
fi
grep -q "log-likelihood .* (lm-eval) vs .* (trail)" forged.out || { cat forged.out; fail "no finding"; }
echo "found: $(grep FAIL forged.out)"
