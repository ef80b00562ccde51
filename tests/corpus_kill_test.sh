#!/usr/bin/env bash
# `trail corpus build` killed with SIGKILL and run again continues from its completed work and
# produces the same shards and lineage as an uninterrupted build: once after some document runs
# (the per-document stages' checkpoints) were written — the rerun reports it resumed — and at a
# random point. The killed builds work under a small memory budget, in many chunks; the
# straight build under the default one: the budget never changes the output. A damaged run is
# recomputed while the intact ones are reused.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-corpuskill-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
f=/usr/share/games/fortunes
. "$here/../scripts/corpus-inputs.sh"
{ echo "seed = 3"
  toml_source fortunes fortune $(fortune_files $f -maxdepth 1) $(fortune_files $f/de)
  toml_source kjv text "$assets/text/kjv.txt"
  toml_language "$assets"
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\nmin_stop_words = 0\n'
} > corpus.toml
state() {  # shards and the lineage's rows, as text
  (cd "$1" && find train validation test -type f | sort | xargs sha256sum)
  /usr/bin/python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for line in db.iterdump(): print(line)' "$1/lineage.sqlite" | sha256sum
}
"$trail" corpus build --config corpus.toml --out straight --threads 2 --quiet > straight.json
# The effective-data view of the lineage adds up to the build's own report.
"$trail" plan data --lineage straight/lineage.sqlite --json > effective.json
python3 - <<'PY' || fail "plan data vs the build report"
import json
report, view = json.load(open('straight.json')), json.load(open('effective.json'))['sources']
assert sum(s['read']['documents'] for s in view) == report['documents'], (view, report['documents'])
assert sum(s['kept']['documents'] for s in view) == report['kept']
assert sum(s['read']['bytes'] for s in view) == report['bytes_in']
for s in view:
    parts = ['exact_dup', 'near_dup', 'filtered', 'kept']
    assert sum(s[p]['documents'] for p in parts) == s['read']['documents'], s
PY
want=$(state straight)

small="--memory-budget-mb 8"
runs() { ls "$1"/.work/docs-*.run.meta 2>/dev/null | wc -l; }
# Killed once a few document runs are written.
"$trail" corpus build --config corpus.toml --out a --threads 2 --quiet $small > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do [ "$(runs a)" -ge 3 ] && break; sleep 0.01; done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
[ "$(runs a)" -ge 3 ] || fail "no document runs appeared"
[ ! -e a/report.json ] || echo "note: the build finished before the kill"
"$trail" corpus build --config corpus.toml --out a --threads 1 --quiet $small > a.json
grep -q '"resumed"' a.json || fail "the rerun did not resume from the checkpoint"
grep '"resumed"' a.json
[ "$(state a)" = "$want" ] || fail "resumed build differs from the straight build"
[ ! -e a/.work ] || fail "a finished build leaves its work directory"

# Killed at a random point before that.
"$trail" corpus build --config corpus.toml --out b --threads 2 --quiet $small > /dev/null 2>&1 &
pid=$!
sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() }')"
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
"$trail" corpus build --config corpus.toml --out b --threads 2 --quiet $small > b.json
[ "$(state b)" = "$want" ] || fail "rerun after an early kill differs from the straight build"

# A damaged document run is recomputed, never trusted; the others are reused.
"$trail" corpus build --config corpus.toml --out d --threads 2 --quiet $small > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do [ "$(runs d)" -ge 3 ] && break; sleep 0.01; done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
n=$(runs d)
[ "$n" -ge 3 ] || fail "no document runs appeared for the damage check"
printf '\xff' | dd of=d/.work/docs-00001.run bs=1 seek=100 conv=notrunc status=none
"$trail" corpus build --config corpus.toml --out d --threads 2 --quiet $small > d.json
grep -q "restored for $((n - 1)) of" d.json || fail "expected $((n - 1)) runs reused: $(grep resumed d.json)"
[ "$(state d)" = "$want" ] || fail "build with a damaged run differs from the straight build"

# A changed input invalidates the checkpoint: it is recomputed, not trusted.
mkdir -p c/.work && cp -r a/.work/. c/.work/ 2>/dev/null || true
"$trail" corpus build --config corpus.toml --out c --threads 2 --quiet $small > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do [ "$(runs c)" -ge 3 ] && break; sleep 0.01; done
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
sed 's/^seed = 3$/seed = 4/' corpus.toml > other.toml
"$trail" corpus build --config other.toml --out c --threads 2 --quiet $small > c.json
if grep -q '"resumed"' c.json; then fail "a checkpoint of another config was used"; fi
echo PASS
