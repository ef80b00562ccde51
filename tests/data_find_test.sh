#!/usr/bin/env bash
# `trail data index` and `trail data find` on real text (the King James Bible, a chapter per
# document, cut in 120-token pieces) and a 30-step run:
#   - a chapter's text is found whole, with every step that read it; each reading is what
#     `trail data inspect --window W` shows for that window (same lineage key, document tokens);
#   - its lineage key gives the same readings; an excerpt is found inside it; a copy with a verse
#     changed is found as partial overlaps; a text not in the corpus is not found;
#   - bad input (empty text, binary data, no index, a damaged index) gets a clear error.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-find-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$here/kjv_train_data.sh"
kjv_train_data
recipe 30 > r.toml
"$trail" train --recipe r.toml --data manifest.json --run run --threads 2 > train.out 2>&1 ||
  { cat train.out; fail "training failed"; }
[ "$(wc -l < run/trajectory.jsonl)" = 30 ] || fail "the run did not train 30 steps"

echo "-- index"
"$trail" data index --manifest manifest.json | tee index.out
[ -f find.idx ] || fail "no find.idx beside the manifest"

# A chapter the run read: the first document of window 5.
key=$("$trail" data inspect --manifest manifest.json --window 5 --json |
  node -e 'const r = JSON.parse(require("fs").readFileSync(0)); console.log(r.documents[0].key)')
echo "chapter $key"
node -e '
const fs = require("fs"), [key] = process.argv.slice(1);
const doc = fs.readFileSync("train.jsonl", "utf8").trim().split("\n").map(JSON.parse).find(d => d.id === key);
fs.writeFileSync("chapter.txt", doc.text);
const lines = doc.text.split("\n");
fs.writeFileSync("excerpt.txt", lines.slice(2, 6).join("\n"));
lines[Math.floor(lines.length / 2)] = "And it came to pass that a new verse was written here instead.";
fs.writeFileSync("edited.txt", lines.join("\n"));
fs.writeFileSync("other.txt", "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, and nothing particular to interest me on shore, I thought I would sail about a little and see the watery part of the world.");
' "$key"

echo "-- the chapter, found whole with its steps"
"$trail" data find --run run --text chapter.txt | tee find.out
"$trail" data find --run run --text chapter.txt --json > find.json
"$trail" data find --run run --key "$key" --json > key.json
node -e '
const fs = require("fs"), { execFileSync } = require("child_process");
const [trail, key] = process.argv.slice(1);
const r = JSON.parse(fs.readFileSync("find.json")), k = JSON.parse(fs.readFileSync("key.json"));
if (r.same_documents.length !== 1 || r.same_documents[0].key !== key) throw "not the same document";
const run = r.runs[0];
if (!run.whole_query || !run.whole_document || run.key !== key) throw "not found whole";
if (run.readings.length === 0 || run.steps_read === 0) throw "no readings";
if (JSON.stringify(run.readings) !== JSON.stringify(k.readings)) throw "--key reads differently";
if (!run.readings.every(x => x.step < 30)) throw "a reading past the run";
let checked = 0;
for (const x of run.readings) {
  const w = JSON.parse(execFileSync(trail, ["data", "inspect", "--manifest", "manifest.json",
                                            "--window", String(x.window), "--json"]));
  const seg = w.documents.find(d => d.key === key && d.window_offset <= x.window_offset &&
                                    x.window_offset < d.window_offset + d.tokens);
  if (!seg) throw `window ${x.window} does not hold ${key} at ${x.window_offset}`;
  const first = seg.doc_offset + (x.window_offset - seg.window_offset);
  if (first !== x.doc_tokens[0]) throw `window ${x.window}: document token ${first}, not ${x.doc_tokens[0]}`;
  if (x.loss_tokens + x.context_tokens !== x.doc_tokens[1] - x.doc_tokens[0]) throw "counts do not add up";
  if (w.step !== undefined && w.step !== x.step) throw "step differs";
  checked++;
}
console.log(`${run.readings.length} readings at ${run.steps_read} steps, each as data inspect shows it (${checked} windows)`);
' "$trail" "$key"

echo "-- an excerpt, an edited copy, a text not in the corpus"
"$trail" data find --run run --text excerpt.txt --min-tokens 20 --json > excerpt.json
"$trail" data find --run run --text edited.txt --json > edited.json
"$trail" data find --run run --text other.txt > other.out
node -e '
const fs = require("fs"), [key] = process.argv.slice(1);
const ex = JSON.parse(fs.readFileSync("excerpt.json")), ed = JSON.parse(fs.readFileSync("edited.json"));
const inside = ex.runs.find(r => r.key === key);
if (!inside || inside.whole_document || inside.query_tokens[1] - inside.query_tokens[0] < ex.query_tokens - 2)
  throw "excerpt not found inside its chapter";
const parts = ed.runs.filter(r => r.key === key);
if (ed.same_documents.length !== 0 || parts.length < 2 || parts.some(r => r.whole_query))
  throw "edited copy not found as partial overlaps";
console.log(`excerpt at document tokens ${inside.doc_tokens}; edited copy: ${parts.length} shared runs`);
' "$key"
grep -q "no shared run" other.out || fail "a text not in the corpus was found"

echo "-- bad input"
ee="$here/expect_exit.sh"
: > empty.txt
printf 'abc\0def' > binary.bin
"$ee" 3 "empty.txt: no text" -- "$trail" data find --run run --text empty.txt
"$ee" 3 "binary.bin: binary data" -- "$trail" data find --run run --text binary.bin
"$ee" 3 "no find index .*trail data index" -- "$trail" data find --run run --text chapter.txt --index none.idx
cp find.idx bad.idx && printf '\x01' | dd of=bad.idx bs=1 seek=300 conv=notrunc 2> /dev/null
"$ee" 3 "bad.idx: .*damaged.*trail data index" -- "$trail" data find --run run --text chapter.txt --index bad.idx
"$ee" 3 "no training document has the key" -- "$trail" data find --run run --key nope
echo PASS
