#!/usr/bin/env bash
# Hugging Face transformers (the peers' environment, scripts/install-peers.sh) reads trail's
# export of seven models trained here on the King James Bible: Llama-style, Qwen3-style
# (QK-norm), Qwen3-style with sliding-window layers, Llama-style with grouped-query attention
# (4 query heads on 2 key/value heads), Qwen3-style with multi-query attention and QK-norm
# gains, the grouped-query Llama with Llama 3's RoPE scaling, and OLMo 2's layout (post-norm,
# QK-norm over whole projections with gains, untied head, 64 padding rows past the tokenizer's
# 1024 ids) on grouped-query attention. For each,
# tests/peers/transformers_check.py loads the folder with AutoModelForCausalLM (float32 and float64, eager attention) and
# AutoTokenizer, offline, and checks the load report, the tokenizer's ids on real multilingual
# text (the vim tutors in every language they are written in UTF-8, fortunes in German, Russian
# and Chinese), the logits over a greedy continuation, and model.generate's greedy tokens.
#   transformers_test.sh TRAIL ASSETS PROBE PEERS_PYTHON
# A missing peer is a failure, never a skip.
set -euo pipefail
trail=$1; assets=$2; probe=$3; python=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/peers/setup.sh"
peer_setup transformers "$python" "transformers, torch"

. "$here/kjv_train_data.sh"
kjv_train_data

# Real text in many scripts, one request per line (lines of up to 400 bytes; the tokenizer's
# pretokenizer sees whole lines, so line ends are not part of what is compared).
{
  for f in /usr/share/vim/vim90/tutor/tutor.*utf-8; do awk 'NF && n++ < 40' "$f"; done
  for f in /usr/share/games/fortunes/{chinese,tang300,de/anekdoten,ru/2001.03,pl/*,cs/*}; do
    case $f in *.dat | *.u8) continue ;; esac
    [ -f "$f" ] || fail "no $f (scripts/install-deps.sh installs the fortunes)"
    iconv -f utf-8 -t utf-8 -c "$f" | awk 'NF && n++ < 30'
  done
} | cut -c1-400 | iconv -f utf-8 -t utf-8 -c > lines.txt
[ "$(wc -l < lines.txt)" -gt 500 ] || fail "too little multilingual text ($(wc -l < lines.txt) lines)"
"$trail" tokenizer encode --tokenizer tokenizer.json --input lines.txt --lines > lines.ids

# The models: a context that holds the probe's 256 tokens.
recipe 30 | sed 's/^max_seq_len = 128$/max_seq_len = 256/' > llama.toml
sed 's/^init_seed = 1$/init_seed = 1\nqk_norm = true/' llama.toml > qwen3.toml
sed 's/^init_seed = 1$/init_seed = 1\nqk_norm = true\nattention_window = 24\nfull_attention_every = 2/' \
  llama.toml > qwen3-sliding.toml
sed 's/^n_heads = 2$/n_heads = 4\nn_kv_heads = 2/' llama.toml > llama-gqa.toml
# qwen3-mqa's heads are wider than d_model / n_heads (head_dim 32 on a width of 64: q [64, 128],
# as every Qwen3 release has); llama3-rope's narrower (head_dim 8: q [64, 32]).
sed 's/^n_heads = 2$/n_heads = 4\nn_kv_heads = 1\nqk_norm_gain = true\nhead_dim = 32/' qwen3.toml > qwen3-mqa.toml
# Llama 3's RoPE scaling with a 64-token original context: over the 256 positions compared, the
# frequencies in all three bands (kept, blended, divided by 8) matter.
sed 's/^init_seed = 1$/init_seed = 1\nrope_scaling = "llama3"\nrope_original_max_seq_len = 64\nhead_dim = 8/' \
  llama-gqa.toml > llama3-rope.toml
sed 's/^init_seed = 1$/init_seed = 1\nqk_norm = true\nqk_norm_gain = true\nqk_norm_projection = true\npost_norm = true\ntied_embeddings = false\nvocab_size = 1088/' \
  llama-gqa.toml > olmo2.toml
grep -q '^post_norm = true$' olmo2.toml || fail "the olmo2 recipe was not written"
grep -q '^n_kv_heads = 2$' llama-gqa.toml && grep -q '^head_dim = 32$' qwen3-mqa.toml \
  && grep -q '^rope_scaling = "llama3"$' llama3-rope.toml || fail "the recipes were not written"
sed -n 3000,3100p "$assets/text/kjv.txt" > text.txt
for r in llama qwen3 qwen3-sliding llama-gqa qwen3-mqa llama3-rope olmo2; do
  echo "-- $r"
  "$trail" train --recipe $r.toml --data manifest.json --run $r --threads 2 > $r.out 2>&1 \
    || { cat $r.out; fail "training $r"; }
  "$trail" export --run $r --format hf --out $r.hf > $r.export || fail "export $r"
  "$trail" generate --run $r --prompt "And the LORD spake unto Moses, saying" --max-tokens 40 \
    --temperature 0 --json > $r.gen.json
  # trail's logits over the prompt, its greedy continuation, and then the text (256 in all).
  "$python" - $r.gen.json "$trail" text.txt > $r.ids <<'PY'
import json, subprocess, sys
g = json.load(open(sys.argv[1]))
ids = g["prompt_ids"] + g["ids"]
text = subprocess.run([sys.argv[2], "tokenizer", "encode", "--tokenizer", "tokenizer.json",
                       "--input", sys.argv[3]], capture_output=True, check=True).stdout
print(json.dumps((ids + json.loads(text))[:256]))
PY
  "$probe" $r ids $r.ids $r.probe
  "$python" "$here/peers/transformers_check.py" $r.hf $r.probe $r.gen.json lines.txt lines.ids \
    || fail "transformers on the $r export"
done

# The check must fail on an export whose config.json drops a feature the weights need.
expect_check_fails() {  # what, run, Python statements editing the config dict c
  echo "-- the check fails without $1"
  rm -rf broken.hf && cp -r "$2.hf" broken.hf
  "$python" -c "import json, sys
c = json.load(open(sys.argv[1]))
$3
json.dump(c, open(sys.argv[1], 'w'))" broken.hf/config.json
  if "$python" "$here/peers/transformers_check.py" broken.hf "$2.probe" "$2.gen.json" \
       lines.txt lines.ids > broken.out 2>&1; then
    cat broken.out; fail "$2 read without $1 passed the check"
  fi
  grep -q "from HF's float64 run" broken.out || { cat broken.out; fail "no logit finding"; }
  echo "without $1: $(grep FAIL broken.out)"
}
expect_check_fails "its windows" qwen3-sliding 'c["use_sliding_window"], c["sliding_window"] = False, None
c["layer_types"] = ["full_attention"] * len(c["layer_types"])'
expect_check_fails "its RoPE scaling" llama3-rope 'c["rope_scaling"] = None'
