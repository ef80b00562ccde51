#!/usr/bin/env bash
# Audits an adversary cannot fool (docs/audit.md, "The cache", "Who published it" and "Exit
# status"), on the 60-step King James run of tests/remote_audit_test.sh published twice (64 KiB
# and 1 MiB chunks). Every hostile case runs the hostile audit on a fresh cache, then the honest
# audit on the same cache: the hostile one never says MATCH and exits with its documented code
# (4: bytes not fetchable; 5: not the published bytes; 6: not the trainer's publication; 3: a
# malformed publication), its peak resident memory stays under a bound; the honest one matches
# the local replay's verdicts, step for step.
#   - transport lies from tests/range_server.py: a byte flipped, a shifted, short or wrong-total
#     Content-Range, a truncated body, a reset, an endless body, a 10^15-byte Content-Length, a
#     whole file of another size for a range, a 10^15-byte publication.json; and a server that
#     answers each range with the whole file followed by bytes without end, which is audited to
#     MATCH with bounded memory (each answer read only up to its range's end);
#   - a publication re-signed by a mirror's key whose shard keeps its genuine SHA-256 but lists
#     forged chunk hashes (refused; accepted with --trust-publisher, it fails, and leaves nothing
#     that makes the honest audit fail);
#   - the genuine file list re-signed by a mirror (the same root): refused by replay, certify and
#     publish verify, accepted with --trust-publisher naming the mirror's key;
#   - a mirror that re-signs the run's attestation.json too: bound to itself (the report names its
#     key), refused by replay and publish verify under --trainer naming the trainer's key;
#   - two honest bundles of one run with different chunk sizes through one cache, both ways;
#   - a published checkpoint that disagrees with the trajectory: the replay falls back to an
#     older one, which is fetched and checked first;
#   - a malformed publication and one whose signature does not verify.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/published_run.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-adversarial-XXXXXX")
trap 'stop_server; rm -rf "$dir"' EXIT
cd "$dir"
# Debian's python3 has python3-cryptography (scripts/install-deps.sh) for the forger's signatures.
py=/usr/bin/python3; [ -x "$py" ] || py=python3
forge="$py $here/audit_forge.py"
# The most a hostile audit may hold resident (KiB): the honest replay of this small model takes
# about 31 MB here; a body read beyond its request (an endless one: up to 256 MiB) would pass it.
max_rss_kb=80000

trained_run
"$trail" audit keygen --out mirror > /dev/null
"$trail" publish --run run --out bundle --key trainer.key --chunk-bytes 65536 --quiet > /dev/null
"$trail" publish --run run --out bundle1m --key trainer.key --chunk-bytes 1048576 --quiet > /dev/null
"$trail" audit replay --run run --steps 50:53 --json --quiet > local.json
"$trail" audit replay --run run --steps 6:9 --json --quiet > local6.json
verdicts() { json "$1" '[(s["step"], s["verdict"], s["chain"]) for s in j["steps"]]'; }

# hostile CODE REGEX CACHE -- ARGS...: the hostile audit (the trail command's ARGS) exits CODE
# with REGEX, never MATCH, under the memory bound.
hostile() {
  local code=$1 want=$2 cache=$3; shift 4
  /usr/bin/time -f "%M" -o rss.txt "$trail" "$@" --cache "$cache" --quiet --retries 0 \
    > hostile.out 2>&1 && got=0 || got=$?
  [ "$got" = "$code" ] || { cat hostile.out; fail "exit $got, expected $code: $*"; }
  grep -Eq -- "$want" hostile.out || { cat hostile.out; fail "no '$want': $*"; }
  ! grep -q "verdict: MATCH" hostile.out || fail "a hostile audit said MATCH: $*"
  local rss; rss=$(tail -1 rss.txt)
  [ "$rss" -lt "$max_rss_kb" ] || fail "peak memory $rss KiB >= $max_rss_kb KiB: $*"
  echo "  exit $got, peak ${rss} KiB: $(grep -m1 -E -- "$want" hostile.out | cut -c1-150)"
}

# honest CACHE [STEPS] [LOCAL]: the genuine bundle audited on the same cache matches.
honest() {
  local cache=$1 steps=${2:-50:53} ref=${3:-local.json}
  serve bundle
  "$trail" audit replay --run "$url" --steps "$steps" --cache "$cache" --json --quiet \
    > honest.json 2> honest.err || { cat honest.json honest.err; fail "the honest audit after a hostile one ($cache)"; }
  [ "$(verdicts honest.json)" = "$(verdicts "$ref")" ] || fail "honest verdicts differ ($cache)"
  [ "$(json honest.json 'j["verdict"]')" = match ] || fail "honest verdict ($cache)"
}

echo "-- transport lies, each followed by the honest audit on its cache"
n=0
for fault in "shifted|4|Content-Range|announces a range" "short-range|4|Content-Range|announces a range" "wrong-total|4|Content-Range" \
             "truncate|4|partial|Transferred" "reset|4|Failure when receiving|reset|Recv failure|Empty reply" \
             "endless|4|more than the [0-9]+ bytes asked for" \
             "huge-length|4|announces a range of 1000000000000000" \
             "whole-other|5|the server's file is [0-9]+ bytes, not the"; do
  name=${fault%%|*}; rest=${fault#*|}; code=${rest%%|*}; want=${rest#*|}
  n=$((n + 1))
  echo " $name"
  serve bundle --fault "$name" --only .tshard
  hostile "$code" "$want" "c$n" -- audit replay --run "$url" --steps 50:53
  honest "c$n"
done
echo " a server that ignores ranges and sends each file, then bytes without end"
serve bundle --fault whole-endless --only .tshard
/usr/bin/time -f "%M" -o rss.txt "$trail" audit replay --run "$url" --steps 50:53 --cache cwhole \
  --json --quiet --retries 0 > whole.json || fail "a whole-file answer read up to the range's end"
[ "$(verdicts whole.json)" = "$(verdicts local.json)" ] || fail "whole-file verdicts"
[ "$(tail -1 rss.txt)" -lt "$max_rss_kb" ] || fail "peak memory $(tail -1 rss.txt) KiB reading ranges of endless answers"
echo "  match, peak $(tail -1 rss.txt) KiB: each answer read only up to its range's end"
echo " flip"
serve bundle --flip .tshard
hostile 5 "tshard: bytes \[[0-9]+, [0-9]+\) are not the published ones \(chunk [0-9]+" cflip -- \
  audit replay --run "$url" --steps 50:53
honest cflip
echo " a publication.json announcing 10^15 bytes"
serve bundle --fault huge-length --only publication.json
hostile 4 "beyond the limit of" chuge -- audit replay --run "$url" --steps 50:53
honest chuge

echo "-- a mirror's publication: the genuine shard SHA-256, forged chunk hashes"
cp -r bundle forged
$forge swap-chunks forged mirror.key data/shards/train-00000.tshard
serve forged
hostile 6 "not by the run's trainer" cforged -- audit replay --run "$url" --steps 50:53
mirror=$(json forged/publication.json 'j["public_key"]')
mirror_fp=$(python3 -c "import hashlib, sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())" "$mirror")
# Trusted by name, its forged chunks are fetched into the cache and the steps differ; never MATCH.
hostile 1 "accepted by --trust-publisher" cforged -- audit replay --run "$url" --steps 50:53 \
  --trust-publisher mirror.pub
grep -q "step 50: differs" hostile.out || { cat hostile.out; fail "the forged chunks did not change step 50"; }
honest cforged
echo "  then the forged bundle again, trusted by fingerprint: still not MATCH"
serve forged
hostile 1 "differs" cforged -- audit replay --run "$url" --steps 50:53 --trust-publisher "$mirror_fp"
honest cforged

echo "-- the genuine file list re-signed by a mirror (the same root)"
cp -r bundle resigned
$forge sign resigned mirror.key
[ "$(json resigned/publication.json 'j["statement"]')" = "$(json bundle/publication.json 'j["statement"]')" ] \
  || fail "re-signing changed the statement"
serve resigned
hostile 6 "publication.json is signed by key $mirror_fp, not by the run's trainer" cres -- \
  audit replay --run "$url" --steps 50:53
"$trail" audit plan --run run --auditors 2 --sample 4 --out plan.json > /dev/null
"$trail" audit keygen --out auditor > /dev/null
hostile 6 "not by the run's trainer" cres -- audit certify --run "$url" --plan plan.json \
  --key auditor.key --auditor 1 --out att.json
[ ! -e att.json ] || fail "certify wrote an attestation of a refused publication"
"$trail" publish verify --bundle "$url" > verify.out && got=0 || got=$?
[ "$got" = 6 ] && grep -q "REFUSED" verify.out || { cat verify.out; fail "publish verify of a re-signed bundle: exit $got"; }
"$trail" publish verify --bundle "$url" --trust-publisher mirror.pub --json > verify.json \
  || fail "publish verify with --trust-publisher"
[ "$(json verify.json 'j["binding"]')" = trusted ] || fail "verify.json binding"
"$trail" audit replay --run "$url" --steps 50:53 --cache cres --trust-publisher mirror.pub --json \
  --quiet > trusted.json || fail "a trusted mirror's genuine bundle"
[ "$(json trusted.json 'j["publication"]["binding"]')" = trusted ] || fail "trusted binding"
[ "$(verdicts trusted.json)" = "$(verdicts local.json)" ] || fail "trusted verdicts"
honest cres
serve bundle
"$trail" audit certify --run "$url" --cache cres --plan plan.json --key auditor.key --auditor 1 \
  --out att.json --quiet > certify.out 2>&1 || { cat certify.out; fail "certify from the genuine bundle"; }
python3 - bundle/publication.json att.json <<'PY' || fail "the attestation does not record the publication"
import hashlib, json, sys
pub, att = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
statement = json.dumps(pub["statement"], separators=(",", ":"), sort_keys=True)
root = hashlib.sha256(("trail.publication.v1\n" + statement).encode()).hexdigest()
signer = hashlib.sha256(bytes.fromhex(pub["public_key"])).hexdigest()
p = att["statement"]["publication"]
assert p == {"root": root, "signer": signer, "binding": "trainer"}, p
PY
"$trail" publish verify --bundle "$url" > verify.out || { cat verify.out; fail "publish verify"; }
grep -q "(trainer)" verify.out || { cat verify.out; fail "publish verify names no binding"; }

echo "-- a mirror that re-signs the run's attestation too: bound to itself, refused by --trainer"
cp -r bundle claimed
$forge sign-attestation claimed/run mirror.key
$forge sign claimed mirror.key
serve claimed
"$trail" audit replay --run "$url" --steps 50:53 --cache cclaim --json --quiet > claimed.json \
  || fail "the mirror's self-consistent bundle of genuine bytes"
[ "$(json claimed.json 'j["publication"]["binding"]')" = trainer ] || fail "claimed binding"
[ "$(json claimed.json 'j["run_attestation"]["signer"]')" = "$mirror_fp" ] \
  || fail "the report does not name the key that signed the attestation"
hostile 6 "run/attestation.json is signed by key $mirror_fp, not by the trainer's key" cclaim -- \
  audit replay --run "$url" --steps 50:53 --trainer trainer.pub
"$trail" publish verify --bundle "$url" --trainer trainer.pub > verify.out && got=0 || got=$?
[ "$got" = 6 ] || { cat verify.out; fail "publish verify --trainer of a claimed bundle: exit $got"; }
honest cclaim
serve bundle
"$trail" audit replay --run "$url" --steps 50:53 --cache cclaim --trainer trainer.pub --quiet \
  > /dev/null || fail "the genuine bundle with --trainer"

echo "-- two chunk sizes through one cache"
serve bundle
"$trail" audit replay --run "$url" --steps 0:3 --cache ctwo --json --quiet > two0.json \
  || fail "64 KiB bundle, steps 0:3"
serve bundle1m
"$trail" audit replay --run "$url" --steps 6:9 --cache ctwo --json --quiet > two1.json \
  || { cat two1.json; fail "1 MiB bundle, steps 6:9, after the 64 KiB one"; }
[ "$(verdicts two1.json)" = "$(verdicts local6.json)" ] || fail "1 MiB verdicts"
echo "  1 MiB bundle: $(json two1.json 'j["fetch"]["reused_bytes"]') bytes reused of the 64 KiB bundle's"
honest ctwo 6:9 local6.json
honest ctwo

echo "-- a published checkpoint that disagrees with the trajectory: an older start, fetched first"
cp -r bundle badckpt
$forge weight-bit badckpt/run 50
$forge sign badckpt trainer.key
serve badckpt
"$trail" audit replay --run "$url" --steps 50:53 --cache cckpt --json --quiet > badckpt.json \
  && fail "a bad checkpoint passed" || true
python3 - badckpt.json local.json <<'PY' || { cat badckpt.json; fail "the fallback start"; }
import json, sys
j, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert j["starting_points"] == [40], j["starting_points"]
assert [f["step"] for f in j["findings"]] == [50], j["findings"]
want = {s["step"]: s["chain"] for s in ref["steps"]}
got = {s["step"]: (s["verdict"], s["chain"]) for s in j["steps"] if s["step"] in want}
assert got == {s: ("match", c) for s, c in want.items()}, got
PY
honest cckpt

echo "-- a malformed publication, a signature that does not verify"
mkdir -p malformed && echo '{"statement": {"format": "trail.publication.v1"}}' > malformed/publication.json
serve malformed
hostile 3 "malformed publication" cmal -- audit replay --run "$url" --steps 50:53
honest cmal
cp -r bundle badsig
python3 - badsig/publication.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["statement"]["checkpoints"] = d["statement"]["checkpoints"][:-1]
json.dump(d, open(sys.argv[1], "w"))
PY
serve badsig
hostile 6 "the signature does not verify" cbadsig -- audit replay --run "$url" --steps 50:53
honest cbadsig
stop_server
echo "adversarial audit: all checks passed"
