#!/usr/bin/env bash
# Published runs and audits over the network (docs/audit.md, "Publishing a run" and "Auditing a
# published run", "Verifying a run together"), on a 60-step run of the King James Bible with a
# checkpoint every 10 steps, published in 64 KiB chunks (its one shard is 2.5 MB):
#   - `trail publish` writes a bundle that `trail publish verify` checks, as a folder and over
#     http://; a publication whose file list was altered after signing is refused;
#   - `audit replay --run http://127.0.0.1:PORT/…` (tests/range_server.py: Range requests on
#     loopback) gives the verdicts of the local replay and fetches well under half of the
#     bundle for three steps (the figure is printed); a warm cache fetches only publication.json;
#   - faults: a byte flipped in transit is named (file, byte range) with exit 5 and no verdict;
#     a connection dropped mid-transfer fails, and the rerun resumes from the cache and matches;
#     a server that answers ranges with the whole file still gives the match; a wrong
#     Content-Range is refused (exit 4); a server that is down gets a clear error (exit 4);
#   - `audit certify` and `audit trace` take the URL too; the trainer's signed trace and the
#     remote one bisect clean under --strict, which refuses an unsigned or altered trace;
#   - a copy of the data whose shard was altered and rehashed with its manifest entry: the shard
#     is named with the first replayed step that reads it; those steps are unverified (never
#     "differs"), and with a differing validation shard the training steps still match; a copy
#     that differs beyond its shards' hashes is refused naming that; a bundle whose publisher
#     altered a shard, rehashed it with its manifest entry and re-signed is audited the same way;
#   - a segment plan (4 auditors, redundancy 2, segments of 10 steps) covers every step twice, is
#     a pure function of the run, and each auditor's certify from the URL loads one checkpoint
#     per run of consecutive segments (read from its report) and fetches exactly the bytes the
#     plan priced; the four attestations collect to "verified".
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/published_run.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-remote-XXXXXX")
trap 'stop_server; rm -rf "$dir"' EXIT
cd "$dir"
expect() { "$here/expect_exit.sh" "$@" > expect.out || { cat expect.out; fail "$*"; }; }

trained_run --trace-every 20

echo "-- publish and verify"
"$trail" publish --run run --out bundle --key trainer.key --chunk-bytes 65536 --quiet > publish.out
cat publish.out
[ "$(json bundle/publication.json 'len(j["statement"]["checkpoints"])')" -ge 3 ] || fail "checkpoints"
[ "$(json bundle/publication.json 'j["statement"]["tokenizer"]')" = data/contract.json ] \
  || fail "the tokenizer contract is not published"
cmp -s bundle/data/tokenizer.json tokenizer.json || fail "the contract's artifact is not published"
"$trail" publish verify --bundle bundle > /dev/null || fail "publish verify of a folder"
# The trajectory's bytes, its chain and the publication's root, recomputed from the docs alone.
python3 "$here/conformance/trajectory_port.py" run bundle/publication.json > port.out \
  || { cat port.out; fail "the trajectory or publication port"; }
[ "$(sed -n 's/^root //p' port.out)" = "$("$trail" publish verify --bundle bundle --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["root"])')" ] \
  || fail "the port's publication root is not trail's"
python3 "$here/conformance/state_hash_port.py" run/checkpoints/step_00000050 > port.out \
  || { cat port.out; fail "the state hash port"; }
serve bundle
"$trail" publish verify --bundle "$url" --json > verify.json || fail "publish verify over http"
[ "$(json verify.json 'j["ok"]')" = True ] || fail "verify.json"
expect 3 "exists and is not empty" -- "$trail" publish --run run --out bundle --key trainer.key
python3 - <<'PY'
import json
d = json.load(open("bundle/publication.json"))
d["statement"]["files"][0]["size"] += 1
json.dump(d, open("forged.json", "w"))
PY
mkdir forged && cp bundle/publication.json forged/ && cp forged.json forged/publication.json
expect 6 "signature does not verify" -- "$trail" publish verify --bundle forged

echo "-- remote replay: the local verdicts, a fraction of the bytes"
"$trail" audit replay --run run --steps 50:53 --json --quiet > local.json
"$trail" audit replay --run "$url" --steps 50:53 --cache cache --json --quiet > remote.json \
  || fail "remote replay"
verdicts() { json "$1" '[(s["step"], s["verdict"], s["chain"]) for s in j["steps"]]'; }
[ "$(verdicts remote.json)" = "$(verdicts local.json)" ] || fail "remote verdicts differ from local"
[ "$(json remote.json 'j["verdict"]')" = match ] || fail "remote verdict"
fraction=$(json remote.json 'round(100 * j["fetch"]["fetched_bytes"] / j["fetch"]["bundle_bytes"], 1)')
echo "3 steps of 60 fetched ${fraction}% of the bundle ($(json remote.json 'j["fetch"]["fetched_bytes"]') of $(json remote.json 'j["fetch"]["bundle_bytes"]') bytes)"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 40 else 1)" "$fraction" \
  || fail "fetched $fraction% of the bundle for 3 steps"
"$trail" audit replay --run "$url" --steps 50:53 --cache cache --json --quiet > warm.json
[ "$(json warm.json 'j["fetch"]["fetched_bytes"] == len(open("bundle/publication.json", "rb").read())')" = True ] \
  || fail "a warm cache fetched more than publication.json"

echo "-- certify and trace from the URL"
"$trail" audit plan --run run --auditors 2 --sample 4 --out plan.json > /dev/null
"$trail" audit keygen --out auditor > /dev/null
"$trail" audit certify --run "$url" --cache cache --plan plan.json --key auditor.key --auditor 1 \
  --out att.json --quiet > certify.out || { cat certify.out; fail "remote certify"; }
"$trail" audit trace --run "$url" --cache cache --step 40 --out remote.trace > /dev/null
"$trail" audit bisect run/traces/step_00000040.trace remote.trace --run run --strict > /dev/null \
  || fail "the remote trace of step 40 diverges from the recorded one"

echo "-- signed traces: bisect --strict"
expect 3 "is unsigned" -- "$trail" audit bisect remote.trace run/traces/step_00000040.trace --run run --strict
cp run/traces/step_00000040.trace altered.trace && cp run/traces/step_00000040.trace.sig altered.trace.sig
sed -i '3s/"hash":"[0-9a-f]\{8\}/"hash":"00000000/' altered.trace
expect 3 "signs another trace" -- "$trail" audit bisect altered.trace remote.trace --run run --strict
expect 2 "needs --run" -- "$trail" audit bisect run/traces/step_00000040.trace remote.trace --strict
"$trail" audit bisect altered.trace remote.trace > /dev/null && fail "an altered trace agrees" || true

echo "-- segment plans"
"$trail" audit plan --run run --auditors 4 --redundancy 2 --segments 10 --bundle "$url" \
  --cache costs --out segplan.json > segplan.out
cat segplan.out
"$trail" audit plan --run run --auditors 4 --redundancy 2 --segments 10 --out again.json > /dev/null
cmp -s segplan.json again.json || fail "the segment plan is not a pure function of the run"
python3 - <<'PY' || fail "segment plan coverage"
import collections, json
p = json.load(open("segplan.json"))
count = collections.Counter(s for a in p["assignments"] for s in a["steps"])
assert sorted(count) == list(range(60)) and set(count.values()) == {2}, count
for a in p["assignments"]:
    assert len(a["steps"]) == 10 * len({s // 10 for s in a["steps"]}), a
PY
mkdir trusted
for i in 0 1 2 3; do
  "$trail" audit keygen --out trusted/seg$i > /dev/null
  "$trail" audit certify --run "$url" --cache segcache$i --plan segplan.json --key trusted/seg$i.key \
    --auditor $i --out segatt$i.json > cert$i.out 2> cert$i.err || { cat cert$i.out cert$i.err; fail "certify $i"; }
  starts=$(python3 -c '
import json, sys
steps = sorted(json.load(open("segplan.json"))["assignments"][int(sys.argv[1])]["steps"])
segs = sorted({s // 10 for s in steps})
print(", ".join(str(10 * g) for k, g in enumerate(segs) if k == 0 or segs[k - 1] != g - 1))' $i)
  grep -q "starting points at steps $starts loaded" cert$i.out \
    || { cat cert$i.out; fail "auditor $i did not load exactly one checkpoint per run of segments ($starts)"; }
  priced=$(sed -nE "s/^  auditor $i: .*fetches ([0-9.]+) MB.*/\1/p" segplan.out)
  grep -q "these steps read $priced MB" cert$i.err \
    || { grep fetch: cert$i.err; fail "auditor $i fetched other bytes than the plan priced ($priced MB)"; }
done
rm trusted/*.key
"$trail" audit collect --run run --plan segplan.json --keys trusted segatt0.json segatt1.json \
  segatt2.json segatt3.json > collect.out || { cat collect.out; fail "collect of the segment plan"; }
grep -q "verified" collect.out || fail "the segment plan's run verdict"

echo "-- a copy of the data whose shard differs (rehashed with its manifest entry)"
forge="python3 $here/audit_forge.py"
mkdir copy-val && cp -r shards manifest.json copy-val/
$forge token copy-val/shards/val-00000.tshard 5 && $forge manifest copy-val/manifest.json
expect 1 "no replayed step reads it" -- "$trail" audit replay --run run --data copy-val/manifest.json \
  --steps 50:53 --json --quiet
python3 -c '
import json, re, sys
j = json.loads(open("expect.out").read()[:open("expect.out").read().rindex("}") + 1])
assert [s["verdict"] for s in j["steps"] if s["requested"]] == ["match"] * 3, j["steps"]
assert len(j["findings"]) == 1 and "shards/val-00000.tshard differs" in j["findings"][0]["what"]' \
  || fail "a differing validation shard: the training steps must still match"
mkdir copy-train && cp -r shards manifest.json copy-train/
$forge token copy-train/shards/train-00000.tshard 1000 && $forge manifest copy-train/manifest.json
expect 1 "step 50 is the first replayed step that reads it" -- "$trail" audit replay --run run \
  --data copy-train/manifest.json --steps 50:53 --quiet
grep -q "step 51: unverified" expect.out || fail "a step that reads the differing shard is not unverified"
grep -q "differs —\|: differs" expect.out && fail "a step was said to differ because the copy of the data does"
sed -i 's/"seed": 7/"seed": 8/' copy-train/manifest.json
expect 3 "beyond its shards' hashes" -- "$trail" audit replay --run run --data copy-train/manifest.json \
  --steps 50:53 --quiet

echo "-- a bundle whose shard was altered, rehashed and re-signed by its publisher"
cp -r bundle forged-bundle
$forge token forged-bundle/data/shards/train-00000.tshard 1000
$forge manifest forged-bundle/data/manifest.json
python3 - forged-bundle trainer.key <<'PY'
import hashlib, json, sys
from cryptography.hazmat.primitives.serialization import load_pem_private_key
bundle, key = sys.argv[1:3]
doc = json.load(open(bundle + "/publication.json"))
st, size = doc["statement"], doc["statement"]["chunk_bytes"]
for f in st["files"]:
    b = open(bundle + "/" + f["path"], "rb").read()
    f["size"], f["sha256"] = len(b), hashlib.sha256(b).hexdigest()
    f["chunks"] = [hashlib.sha256(b[i:i + size]).hexdigest() for i in range(0, len(b), size)]
message = "trail.publication.v1\n" + json.dumps(st, separators=(",", ":"), sort_keys=True)
doc["signature"] = load_pem_private_key(open(key, "rb").read(), None).sign(message.encode()).hex()
json.dump(doc, open(bundle + "/publication.json", "w"))
PY
"$trail" publish verify --bundle forged-bundle > /dev/null || fail "the re-signed bundle does not verify"
serve forged-bundle
expect 1 "train-00000.tshard differs from the data the run trained on.*step 50 is the first" \
  --not ": differs" -- "$trail" audit replay --run "$url" --steps 50:53 --cache c0 --quiet

echo "-- faults"
serve bundle --flip .tshard
expect 5 "tshard: bytes \[[0-9]+, [0-9]+\) are not the published ones" --not "verdict" -- \
  "$trail" audit replay --run "$url" --steps 50:53 --cache c1 --quiet
serve bundle --drop-once 100000
expect 4 "partial" -- "$trail" audit replay --run "$url" --steps 50:53 --cache c2 --quiet --retries 0
"$trail" audit replay --run "$url" --steps 50:53 --cache c2 --json --quiet --retries 0 > resumed.json \
  || fail "the rerun after a dropped connection"
[ "$(verdicts resumed.json)" = "$(verdicts local.json)" ] || fail "resumed verdicts"
serve bundle --ignore-range
"$trail" audit replay --run "$url" --steps 50:53 --cache c3 --json --quiet > whole.json \
  || fail "a server that ignores ranges"
[ "$(verdicts whole.json)" = "$(verdicts local.json)" ] || fail "whole-file verdicts"
serve bundle --bad-range
expect 4 "Content-Range" -- "$trail" audit replay --run "$url" --steps 50:53 --cache c4 --quiet
stop_server
expect 4 "Couldn't connect" -- "$trail" audit replay --run "$url" --steps 50:53 --cache c5 --quiet --retries 1
echo "remote audit: all checks passed"
