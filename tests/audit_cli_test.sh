#!/usr/bin/env bash
# `trail audit` end to end on real text (the King James Bible as UTF-8 bytes, one document per
# chapter), on a run of 40 steps signed by its trainer:
#   - replay of every step matches (text and --json), also from a copy of the data elsewhere;
#   - four auditors, redundancy 2: plan, certify, collect -> 100% coverage, verified; one
#     auditor's verdict forged and re-signed by an independent Ed25519 implementation (Python's
#     `cryptography`) is caught as a disagreement;
#   - forgeries that recompute every hash they can (tests/audit_forge.py) are each found by
#     replay and localized to the first affected step: one token of one shard, a run that
#     trained on a document its manifest lacks, one trajectory record, one bit of a checkpoint.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
forge="python3 $here/audit_forge.py"
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-audit-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TRAIL_NUM_THREADS=1

# Chapters 1..120 as documents of byte tokens (vocabulary 258: bytes, EOS 256, PAD 257); the
# second corpus has one more chapter inserted in the middle.
python3 - "$assets/text/kjv.txt" <<'PY'
import json, re, sys
chapters, cur = [], []
for line in open(sys.argv[1], encoding='utf-8'):
    if re.match(r'^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$', line.strip()):
        if cur: chapters.append(''.join(cur))
        cur = []
    elif line.strip(): cur.append(re.sub(r'^ +[0-9]+ ', '', line))
docs = chapters[:120]
def write(path, docs):
    with open(path, 'w') as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({'key': 'kjv-%03d' % i, 'tokens': list(d.encode()), 'domain': 0}) + '\n')
write('docs.jsonl', docs)
write('extra.jsonl', docs[:60] + [chapters[500]] + docs[60:])
PY
contract=$(printf 'cd%.0s' $(seq 32))
for set in docs extra; do
  mkdir -p "$set"
  "$trail" data shard --input $set.jsonl --output $set/kjv.tshard --vocab-size 258 \
    --contract "$contract" > $set/entry
  cat > $set/manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 258, "eos_id": 256, "pad_id": 257},
 "sources": [{"name": "kjv", "target_share": 1.0, "shards": [$(cat $set/entry | sed 's|"path":"[^"]*"|"path":"kjv.tshard"|')]}],
 "stream": {"seed": 11, "seq_len": 32, "positions": "window","batch_schedule": [{"from_step": 0, "windows": 8}],
            "micro_batch_windows": 2}}
JSON
done
cat > recipe.toml <<'TOML'
[model]
d_model = 32
n_layers = 2
n_heads = 2
d_ff = 64
max_seq_len = 32
init_seed = 5
[optimizer]
lr = 3e-3
[mesh]
replicas = 2
shards = 2
[train]
steps = 40
checkpoint_every = 10
keep_checkpoints = 10
log_every = 10
TOML
"$trail" audit keygen --out trainer > /dev/null
"$trail" train --recipe recipe.toml --data docs/manifest.json --run run --key trainer.key \
  --trace-every 10 --quiet > train.out
final=$(grep -o 'trajectory [0-9a-f]*' train.out | cut -d' ' -f2)

echo "-- replay every step: a match, in text and JSON, also from a copy of the data"
"$trail" audit replay --run run --steps 0:40 --quiet > replay.out || { cat replay.out; fail "replay"; }
grep -q "40 of 40 requested steps bit-identical" replay.out || fail "replay: $(cat replay.out)"
grep -q "run attestation: signed by key" replay.out || fail "attestation not reported"
grep -q "verdict: MATCH" replay.out || fail "verdict"
mkdir elsewhere && cp docs/kjv.tshard docs/manifest.json elsewhere/
"$trail" audit replay --run run --sample 5 --seed 3 --data elsewhere/manifest.json --json --quiet > replay.json
python3 -c 'import json,sys; r = json.load(open("replay.json"))
assert r["verdict"] == "match" and r["first_failure"] is None, r
assert sum(s["requested"] for s in r["steps"]) == 5, r["steps"]' || fail "replay --json"
sed 's/"seed": 11/"seed": 12/' docs/manifest.json > elsewhere/other.json
if "$trail" audit replay --run run --step 3 --data elsewhere/other.json > other.out 2>&1; then
  fail "another manifest accepted"; fi
grep -q "is not the manifest_sha256 the run records" other.out || fail "other manifest: $(cat other.out)"

echo "-- operation traces: a replayed trace equals the recorded one; an altered entry is named"
[ "$(ls run/traces/*.trace | wc -l)" -eq 4 ] || fail "traces of steps 0, 10, 20, 30 expected: $(ls run/traces)"
[ "$(ls run/traces/*.trace.sig | wc -l)" -eq 4 ] || fail "the trainer signs each trace: $(ls run/traces)"
"$trail" audit trace --run run --step 20 --out t20.trace --threads 2 > /dev/null
"$trail" audit bisect run/traces/step_00000020.trace t20.trace > bisect.out || fail "bisect: $(cat bisect.out)"
grep -q "the traces are identical" bisect.out || fail "bisect: $(cat bisect.out)"
# Replays steps 10:20 and traces step 20 with the options given: every step a match, and the
# trace identical to the one recorded in training.
replays_like_training() {  # name, options...
  local name=$1
  shift
  "$trail" audit replay --run run --steps 10:20 "$@" --quiet > $name.out ||
    { cat $name.out; fail "$name: replay"; }
  grep -q "10 of 10 requested steps bit-identical" $name.out || fail "$name: $(cat $name.out)"
  "$trail" audit trace --run run --step 20 --out $name.trace "$@" > /dev/null
  "$trail" audit bisect run/traces/step_00000020.trace $name.trace > $name.bisect ||
    fail "$name: bisect: $(cat $name.bisect)"
  grep -q "the traces are identical" $name.bisect || fail "$name: $(cat $name.bisect)"
}
# The same on the guarded test device (docs/devices.md): a CPU-trained run replays and traces
# there with the same bits.
replays_like_training guarded --device guarded
grep -q "bit-identical .* on guarded" guarded.out || fail "guarded: $(cat guarded.out)"
# An auditor short of memory replays with activation recomputation the run did not use: the
# same verdicts, and the same trace, entry for entry.
replays_like_training recompute --recompute layers
if "$trail" audit replay --run run --step 3 --recompute some > rcbad.out 2>&1; then
  fail "--recompute some accepted"; fi
grep -q "recompute" rcbad.out || fail "no clear error for --recompute some: $(cat rcbad.out)"
python3 - t20.trace <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
for n, l in enumerate(lines[1:], 1):
    j = json.loads(l)
    if j["tensor"] == "d_act" and j["layer"] == 1:
        j["hash"] = "0" * 64; lines[n] = json.dumps(j); break
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
if "$trail" audit bisect run/traces/step_00000020.trace t20.trace --json > bisect.json; then
  fail "an altered trace entry went unnoticed"; fi
python3 -c 'import json; d = json.load(open("bisect.json"))
assert d["diverges"] and d["op"] == "matmul" and d["layer"] == 1 and d["tensor"] == "d_act", d' \
  || fail "bisect --json: $(cat bisect.json)"

echo "-- four auditors, redundancy 2"
mkdir trusted
for i in 0 1 2 3; do
  "$trail" audit keygen --out auditor$i > /dev/null
  cp auditor$i.pub trusted/
done
"$trail" audit plan --run run --auditors 4 --redundancy 2 --out plan.json > /dev/null
# Auditor 3 replays on the guarded device (memory reached only through the backend's ops), and
# its attestation names the device it replayed on.
for i in 0 1 2 3; do
  device=cpu; [ $i = 3 ] && device=guarded
  "$trail" audit certify --run run --plan plan.json --key auditor$i.key --auditor $i \
    --out att$i.json --quiet --threads $((i % 2 + 1)) --device $device > certify$i.out \
    || fail "certify $i: $(cat certify$i.out)"
done
grep -q '"backend": "guarded (' att3.json || fail "the attestation does not name the device"
"$trail" audit collect --run run --plan plan.json --keys trusted att0.json att1.json att2.json \
  att3.json > collect.out || { cat collect.out; fail "collect"; }
grep -q "coverage: 40 of 40 planned steps verified by at least one auditor (100.0%), 40 by at least 2 (100.0%)" \
  collect.out || fail "coverage: $(cat collect.out)"
grep -q "verdict: verified" collect.out || fail "collect verdict"
# Auditor 2 forges one verdict and signs it with its own key, outside trail.
python3 - att2.json auditor2.key <<'PY'
import json, sys
from cryptography.hazmat.primitives.serialization import load_pem_private_key
doc = json.load(open(sys.argv[1]))
st = doc['statement']
st['steps'][0]['verdict'] = 'differs'
key = load_pem_private_key(open(sys.argv[2], 'rb').read(), None)
msg = 'trail.audit.attestation.v1\n' + json.dumps(st, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
doc['signature'] = key.sign(msg.encode()).hex()
json.dump(doc, open(sys.argv[1], 'w'), indent=2)
PY
if "$trail" audit collect --run run --plan plan.json --keys trusted att0.json att1.json att2.json \
  att3.json > collect2.out; then fail "a forged verdict went unnoticed"; fi
grep -q "DISAGREEMENT at step .* auditor 2 (auditor2) says differs" collect2.out || fail "disagreement: $(cat collect2.out)"
grep -q "verdict: disputed" collect2.out || fail "disputed: $(cat collect2.out)"
grep -q "4 attestations accepted, 0 rejected" collect2.out || fail "the re-signed file was not accepted as auditor 2's"

# A forged run: a copy of `run` (and of its data when `data` is given) altered by audit_forge.py.
# Replays every step and checks the first failure is at `want`, with `pattern` in its report.
expect_caught() {  # name want pattern
  local name=$1 want=$2 pat=$3
  if "$trail" audit replay --run $name --steps 0:40 --json --quiet > $name.json 2> $name.err; then
    fail "$name: forgery not detected"; fi
  python3 - $name.json "$want" "$pat" <<'PY' || fail "$name: $(cat $name.json $name.err | head -50)"
import json, sys
r = json.load(open(sys.argv[1])); want = int(sys.argv[2]); pat = sys.argv[3]
assert r["verdict"] == "fail" and r["first_failure"] == want, (r["first_failure"], want)
texts = [s["detail"] for s in r["steps"] if s["step"] == want] + [f["what"] for f in r["findings"] if f["step"] == want]
assert any(pat in t for t in texts), texts
print("caught at step %d: %s" % (want, [t for t in texts if pat in t][0][:150]))
PY
}

echo "-- one token of one shard (shard trailer, manifest, run.json, genesis, chain, checkpoints recomputed)"
step=17
first_window=$(sed -n "$((step + 1))p" run/trajectory.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["windows"][0])')
index=$("$trail" data inspect --manifest docs/manifest.json --window $first_window --json | python3 -c '
import json, sys
w = json.load(sys.stdin)
seg = max(w["documents"], key=lambda d: d["tokens"])
print(seg["doc"], seg["doc_offset"] + seg["tokens"] // 2)' | {
  read doc off; python3 -c "
import struct, sys
b = open('docs/kjv.tshard', 'rb').read()
index_offset, = struct.unpack_from('<Q', b, 40)
start, = struct.unpack_from('<Q', b, index_offset + 32 * $doc)
print(start + $off)"; })
cp -r docs tokdata && cp -r run tokrun
$forge token tokdata/kjv.tshard $index
$forge manifest tokdata/manifest.json
$forge claim tokrun tokdata/manifest.json
"$trail" train verify --run tokrun > /dev/null || fail "the token forgery is not self-consistent"
expect_caught tokrun $step "batch: the run records"

echo "-- a run that trained on a document its manifest lacks"
"$trail" train --recipe recipe.toml --data extra/manifest.json --run extrarun --quiet > /dev/null
$forge claim extrarun docs/manifest.json
# The first step whose batch differs between the two data sets, as the honest runs on each
# recorded it (the forgery rewrites chains, not batch hashes).
want=$(python3 -c '
import json
a = [json.loads(l)["batch"] for l in open("run/trajectory.jsonl")]
b = [json.loads(l)["batch"] for l in open("extrarun/trajectory.jsonl")]
print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), ""))')
[ -n "$want" ] || fail "the extra document changed no window of 40 steps"
expect_caught extrarun "$want" "batch: the run records"

echo "-- one trajectory record (the chain recomputed after it)"
cp -r run recrun
$forge record recrun 25 grad_norm_bits
expect_caught recrun 25 "grad_norm_bits: the run records"

echo "-- one bit of a checkpoint's weights (file hash and state hash in meta.json recomputed)"
cp -r run bitrun
[ "$($forge state-hash run/checkpoints/step_00000020/model.safetensors)" = \
  "$(python3 -c 'import json; print(json.load(open("run/checkpoints/step_00000020/meta.json"))["params_hash"])')" ] \
  || fail "audit_forge.py's state hash does not follow the spec"
$forge weight-bit bitrun 20
"$trail" train verify --run bitrun > /dev/null || fail "the checkpoint forgery is not self-consistent"
expect_caught bitrun 20 "parameter state hash"
echo "ok"
