#!/usr/bin/env bash
# `trail data find` on a run built by the corpus factory from real text: 24 chapters of the King
# James Bible and a planted document go through `trail corpus build` (with a near-duplicate of a
# chapter, one verse changed, that near dedup drops) and `trail corpus tokenize` into a manifest
# linked to the build's lineage, and a 30-step run reads them:
#   - the planted document is found with exactly the windows and steps a scan of every trained
#     window finds (through the Python package's trail.Stream), in two epochs; and with a second
#     source drawing the same shards with replacement that takes over at step 16 (annealing), in
#     both sources and both phases;
#   - the dropped near-duplicate is reported as not trained on, with its cluster's survivor named
#     and the steps that read the survivor;
#   - the find index (default and other gram/window) and the published training-document set are
#     the bytes tests/conformance/find_port.py computes from docs/data.md alone;
#   - published with the build's configuration, the bundle commits to the training documents'
#     band keys: a near-absence proof of an unrelated text verifies; none can be made for the
#     planted document or for the dropped near-duplicate (its survivor shares bands); a proof
#     with a key, the text, an index or the parameters changed is refused.
set -euo pipefail
trail=$1; assets=$2; pydir=$3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-findcorpus-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Chapters 1..24 (Genesis), a chapter's near-duplicate and a planted document, as dolma JSONL.
awk 'function flush() { if (text != "" && n <= 24) { gsub(/\\/, "\\\\", text); gsub(/"/, "\\\"", text);
       printf "{\"id\": \"ch%02d\", \"text\": \"%s\"}\n", n, text } text = "" }
     /^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { flush(); n++; next }
     NF > 0 { sub(/^ +[0-9]+ /, ""); text = text $0 "\\n" }
     END { flush() }' "$assets/text/kjv.txt" > kjv.jsonl
node -e '
const fs = require("fs");
const docs = fs.readFileSync("kjv.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const ch = docs[6];  // ch07
const lines = ch.text.split("\n");
lines[5] = "And the waters were upon the whole earth for many days, as it was told.";
const planted = "The lighthouse keeper kept a ledger of every ship that passed the northern cape, " +
  "noting the flag, the hour, the wind and the colour of the sea; in forty years he missed no " +
  "entry, and when the ledger was found after his death it ran to eleven volumes bound in " +
  "sailcloth, each page ruled by hand and signed at the foot with the same small anchor.";
fs.writeFileSync("extra.jsonl", JSON.stringify({id: "zz-neardup", text: lines.join("\n")}) + "\n" +
  JSON.stringify({id: "planted", text: planted}) + "\n");
fs.writeFileSync("planted.txt", planted);
fs.writeFileSync("neardup.txt", lines.join("\n"));
'
{ echo "seed = 5"
  printf '[[source]]\nname = "kjv"\nformat = "jsonl"\npaths = ["kjv.jsonl", "extra.jsonl"]\n'
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\nmin_stop_words = 0\nrepetition = false\n'
  printf '[split]\ntrain = 1.0\nvalidation = 0.0\n'
} > corpus.toml
"$trail" corpus build --config corpus.toml --out corpus --threads 2 --quiet > build.json
"$trail" corpus why --out corpus kjv/zz-neardup | tee why.out
grep -q "near" why.out || fail "the near-duplicate was not dropped as one"

"$trail" tokenizer train --input kjv.jsonl --vocab-size 1024 --special '<|endoftext|>' --output tokenizer.json 2> /dev/null
"$trail" tokenizer contract --tokenizer tokenizer.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --output contract.json > /dev/null
"$trail" corpus tokenize --out corpus --contract contract.json > /dev/null
"$trail" data manifest --contract contract.json --source kjv=1=corpus/tokens/train/kjv.shards.json \
  --seq-len 64 --chunk-tokens 60 --seed 3 --batch-schedule 32 --lineage corpus/lineage.sqlite --output manifest.json > /dev/null
# The same shards as a second source drawn with replacement, alone from step 16 on.
node -e '
const fs = require("fs"), m = JSON.parse(fs.readFileSync("manifest.json"));
m.sources[0].max_epochs = 3;
m.sources.push({...JSON.parse(JSON.stringify(m.sources[0])), name: "anneal", sampling: "replacement", target_share: 0.0001});
delete m.sources[1].max_epochs;
m.stream.replacement_block_tokens = 2000;
m.stream.mixture_phases = [{from_step: 16, shares: {anneal: 1}}];
fs.writeFileSync("anneal.json", JSON.stringify(m, null, 1));
'
recipe() {
  printf '[model]\nd_model = 32\nn_layers = 1\nn_heads = 2\nd_ff = 64\nmax_seq_len = 64\ninit_seed = 1\n'
  printf '[optimizer]\nlr = 1e-2\n[schedule]\ndecay = "cosine"\nwarmup_tokens = 1000\ntotal_tokens = 40000\n'
  printf '[train]\nsteps = 30\neval_every = 0\ncheckpoint_every = 30\nlog_every = 100\n'
}
recipe > r.toml
for m in manifest anneal; do
  "$trail" data index --manifest $m.json --out $m.idx > /dev/null
  "$trail" train --recipe r.toml --data $m.json --run run-$m --threads 2 --quiet > train.out 2>&1 ||
    { cat train.out; fail "training on $m"; }
done

echo "-- the planted document, against a scan of every trained window"
for m in manifest anneal; do
  "$trail" data find --run run-$m --index $m.idx --text planted.txt --json > found-$m.json
  PYTHONPATH="$pydir" /usr/bin/python3 - "$m" <<'PY' || fail "readings differ from the scan ($m)"
import json, sys, trail
m = sys.argv[1]
found = json.load(open(f"found-{m}.json"))
runs = [r for r in found["runs"] if r["key"] == "kjv/planted"]
assert runs and all(r["whole_query"] and r["whole_document"] for r in runs), found
s = trail.Stream(f"{m}.json", verify=False)
limit = s.step_windows(29).stop
scan = set()
for w in range(min(limit, s.num_windows or limit)):
    for d in s.lineage(w):
        if d["key"] == "kjv/planted":
            scan.add((d["source"], w))
got = {(r["source"], x["window"]) for r in runs for x in r["readings"]}
assert got == scan, (sorted(got), sorted(scan))
passes = {(r["source"], x["pass"]) for r in runs for x in r["readings"]}
steps = {x["step"] for r in runs for x in r["readings"]}
print(f"{m}: {len(got)} readings in {len(steps)} steps, passes {sorted(passes)}")
if m == "manifest":
    assert {p for _, p in passes} >= {0, 1}, "not read in two epochs"
else:
    assert {src for src, _ in got} == {"kjv", "anneal"}, "not read by both sources"
    assert min(steps) < 16 <= max(steps), "not read on both sides of the phase"
PY
done

echo "-- the dropped near-duplicate"
"$trail" data find --run run-manifest --index manifest.idx --text neardup.txt | tee near.out
"$trail" data find --run run-manifest --index manifest.idx --text neardup.txt --json > near.json
node -e '
const r = JSON.parse(require("fs").readFileSync("near.json"));
const v = r.lineage.find(x => x.key === "kjv/zz-neardup");
if (!v || v.kept || v.survivor !== "kjv/ch07") throw "lineage verdict: " + JSON.stringify(r.lineage);
if (r.same_documents.length !== 0 || r.runs.some(x => x.whole_query)) throw "reported as trained on";
if (!(v.survivor_steps_read > 0)) throw "the survivor was not trained on";
if (!r.runs.some(x => x.key === "kjv/ch07")) throw "no partial overlap with the survivor";
console.log(`dropped as ${v.dropped}; survivor ${v.survivor} read at ${v.survivor_steps_read} steps`);
'
echo "-- the index and the document set against the specification's port"
"$trail" audit keygen --out trainer > /dev/null
"$trail" publish --run run-manifest --out bundle --key trainer.key --corpus-config corpus.toml \
  --quiet > /dev/null
"$trail" data index --manifest manifest.json --out other.idx --gram 5 --window 3 > /dev/null
python3 "$here/conformance/find_port.py" manifest.json manifest.idx \
  bundle/data/training-documents.sha256set || fail "the index or the set differs from the port"
python3 "$here/conformance/find_port.py" manifest.json other.idx --gram 5 --window 3 ||
  fail "the index with other parameters differs from the port"
echo "-- near-absence proofs"
ee="$here/expect_exit.sh"
printf 'Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, and nothing particular to interest me on shore, I thought I would sail about a little and see the watery part of the world.' > other.txt
"$trail" data find --run run-manifest --index manifest.idx --absent --near --text other.txt \
  --proof near.proof --bundle bundle --cache cache
"$trail" data verify-proof --proof near.proof --bundle bundle --cache cache2 | tee near-verify.out
grep -q "^VERIFIED: no training document shares an LSH band" near-verify.out || fail "near-absence not verified"
"$ee" 3 "shares band .* candidate near duplicate" -- "$trail" data find --run run-manifest \
  --index manifest.idx --absent --near --text planted.txt --proof x.proof --bundle bundle --cache cache
"$ee" 3 "shares band .* candidate near duplicate" -- "$trail" data find --run run-manifest \
  --index manifest.idx --absent --near --text neardup.txt --proof x.proof --bundle bundle --cache cache
node -e '
const fs = require("fs"), p = JSON.parse(fs.readFileSync("near.proof"));
const w = (name, f) => { const q = JSON.parse(JSON.stringify(p)); f(q); fs.writeFileSync(name, JSON.stringify(q)); };
w("key.proof", q => { q.bands[3].key = q.bands[3].key.replace(/^./, c => c === "0" ? "1" : "0"); });
w("text.proof", q => { q.text = q.text.replace("Ishmael", "Jonah"); });
w("index.proof", q => { q.bands[0].index += 1; });
w("params.proof", q => { q.params.seed += 1; });
'
"$ee" 1 "FAIL: band 3: the proof.s key is not the text.s" -- "$trail" data verify-proof --proof key.proof --bundle bundle --cache cache2
"$ee" 1 "FAIL: band [0-9]+: the proof.s key is not the text.s" -- "$trail" data verify-proof --proof text.proof --bundle bundle --cache cache2
"$ee" 1 "FAIL: band 0: the published keys on either side" -- "$trail" data verify-proof --proof index.proof --bundle bundle --cache cache2
"$ee" 1 "FAIL: the proof.s parameters are not" -- "$trail" data verify-proof --proof params.proof --bundle bundle --cache cache2
echo PASS
