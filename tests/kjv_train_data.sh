# The King James Bible as training data for the training tests: one document per chapter, every
# 20th chapter held out for validation; a 1024-token BPE tokenizer, shards, and manifest.json
# (64-token windows, 8 per step, 16 from step 60). Sourced with $trail and $assets set, in the
# test's working directory, with fail() defined.
kjv_train_data() {
  awk 'function flush() { if (text != "") { gsub(/\\/, "\\\\", text); gsub(/"/, "\\\"", text);
         printf "{\"id\": \"kjv-%04d\", \"text\": \"%s\"}\n", n, text > (n % 20 == 19 ? "val.jsonl" : "train.jsonl") } text = "" }
       /^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { flush(); n++; next }
       NF > 0 { sub(/^ +[0-9]+ /, ""); text = text $0 "\\n" }
       END { flush() }' "$assets/text/kjv.txt"
  [ "$(wc -l < val.jsonl)" -gt 50 ] || fail "no validation chapters"
  "$trail" tokenizer train --input train.jsonl --vocab-size 1024 --special '<|endoftext|>' \
    --output tokenizer.json 2>/dev/null
  "$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
    --output contract.json > /dev/null
  "$trail" data tokenize --contract contract.json --input train.jsonl --output-dir shards --prefix train > /dev/null 2>&1
  "$trail" data tokenize --contract contract.json --input val.jsonl --output-dir shards --prefix val > /dev/null 2>&1
  "$trail" data manifest --contract contract.json --source kjv=1=shards/train.shards.json \
    --validation kjv=shards/val.shards.json --seq-len 64 --chunk-tokens 120 --seed 7 \
    --batch-schedule 0:8,60:16 --micro-batch 4 --output manifest.json > /dev/null
}

# The small model the tests train: recipe STEPS [EXTRA] prints it, EXTRA appended (e.g. a
# [quant] section).
recipe() {  # steps [extra]
  cat <<TOML
[model]
d_model = 64
n_layers = 2
n_heads = 2
d_ff = 176
max_seq_len = 128
init_seed = 1
[optimizer]
lr = 1e-2
weight_decay = 0.1
[schedule]
decay = "cosine"
warmup_tokens = 5000
total_tokens = $(($1 * 16 * 64))
[mesh]
replicas = 2
shards = 1
[train]
steps = $1
eval_every = 100
eval_windows = 64
checkpoint_every = 25
keep_checkpoints = 2
log_every = 50
${2:-}
TOML
}

