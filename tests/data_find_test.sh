#!/usr/bin/env bash
# `trail data index`, `trail data find` and `trail data verify-proof` on real text (the King
# James Bible, a chapter per document, cut in 120-token pieces) and a 60-step published run:
#   - a chapter's text is found whole, with every step that read it; each reading is what
#     `trail data inspect --window W` shows for that window (same lineage key, document tokens);
#   - its lineage key gives the same readings; an excerpt is found inside it; a copy with a verse
#     changed is found as partial overlaps; a text not in the corpus is not found;
#   - a membership proof of the chapter verifies from the bundle over a loopback server, fetching
#     a small fraction of its bytes (printed); a proof with a step, a window, a token range, the
#     token hash or the root changed, a reading left out or added is refused naming what is wrong;
#     a bundle serving other bytes for the chapter's tokens is refused (exit 5);
#   - an absence proof for a text no training document is verifies; one for the chapter cannot
#     be made; forged ones (an index moved, the chapter's tokens with neighbours that enclose
#     them elsewhere, an entry changed, tokens changed under their hash) are refused;
#   - `trail data contamination`: of JSONL items, a verse of the chapter the run read is
#     contaminated and trained on (at the steps `data find` names), a verse of a chapter past the
#     run's steps is contaminated but not trained on, a sentence of another book is clean, a
#     two-word item is too short; OLMES ARC-Easy is loaded and checked; the run report shows it;
#   - bad input (empty text, binary data, no index, a damaged index) gets a clear error.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-find-XXXXXX")
. "$here/published_run.sh"
trap 'stop_server; rm -rf "$dir"' EXIT
cd "$dir"

trained_run
[ "$(wc -l < run/trajectory.jsonl)" = 60 ] || fail "the run did not train 60 steps"
"$trail" publish --run run --out bundle --key trainer.key --chunk-bytes 65536 --quiet > /dev/null

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
"$trail" tokenizer encode --tokenizer tokenizer.json --input chapter.txt > chapter.ids
node -e '
const fs = require("fs"), { execFileSync } = require("child_process");
const [trail, key] = process.argv.slice(1);
const r = JSON.parse(fs.readFileSync("find.json")), k = JSON.parse(fs.readFileSync("key.json"));
if (r.same_documents.length !== 1 || r.same_documents[0].key !== key) throw "not the same document";
const run = r.runs[0];
if (!run.whole_query || !run.whole_document || run.key !== key) throw "not found whole";
if (run.readings.length === 0 || run.steps_read === 0) throw "no readings";
if (JSON.stringify(run.readings) !== JSON.stringify(k.readings)) throw "--key reads differently";
if (!run.readings.every(x => x.step < 60)) throw "a reading past the run";
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

echo "-- a membership proof, verified over HTTP"
"$trail" data find --run run --text chapter.txt --proof chapter.proof --bundle bundle > /dev/null
serve bundle
"$trail" data verify-proof --proof chapter.proof --bundle "$url" --cache cache | tee verify.out
grep -q "^VERIFIED: $key" verify.out || fail "the proof did not verify"
"$trail" data verify-proof --proof chapter.proof --bundle "$url" --cache cache2 --json > verify.json
node -e '
const v = JSON.parse(require("fs").readFileSync("verify.json"));
const share = v.fetched_bytes / v.bundle_bytes;
console.log(`fetched ${v.fetched_bytes} of ${v.bundle_bytes} bundle bytes (${(100 * share).toFixed(2)} %)`);
if (!v.ok || v.binding !== "trainer" || !(share < 0.1)) throw "verified badly, or fetched too much";
'
# tamper NAME JS: a copy of the proof with p (its JSON) changed by JS.
tamper() {
  node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync("chapter.proof"));
           eval(process.argv[2]); fs.writeFileSync(process.argv[1], JSON.stringify(p));' "$1" "$2"
}
tamper step.proof 'p.readings[0].step += 1'
tamper window.proof 'p.readings[p.readings.length - 1].window += 1'
tamper range.proof 'p.doc_tokens[1] -= 1'
tamper hash.proof 'p.tokens_sha256 = p.tokens_sha256.replace(/^./, c => c === "0" ? "1" : "0")'
tamper missing.proof 'p.readings.pop()'
tamper added.proof 'p.readings.push(p.readings[0])'
tamper root.proof 'p.publication = p.publication.replace(/^./, c => c === "0" ? "1" : "0")'
tamper key.proof 'p.document.key = "kjv-9999"'
ee="$here/expect_exit.sh"
"$ee" 1 "FAIL: reading 0: the proof says step" -- "$trail" data verify-proof --proof step.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: reading .*window" -- "$trail" data verify-proof --proof window.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: .*tokens_sha256" -- "$trail" data verify-proof --proof range.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: .*tokens_sha256" -- "$trail" data verify-proof --proof hash.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: the proof leaves out a reading" -- "$trail" data verify-proof --proof missing.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: reading .* is not in the stream" -- "$trail" data verify-proof --proof added.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: the proof is for publication" -- "$trail" data verify-proof --proof root.proof --bundle "$url" --cache cache
"$ee" 1 "FAIL: .*has the key 'kjv-" -- "$trail" data verify-proof --proof key.proof --bundle "$url" --cache cache
printf '{"format": "trail.data-proof.v1", "kind": "membership"}' > bad.proof
"$ee" 3 "bad.proof: needs a string .publication." -- "$trail" data verify-proof --proof bad.proof --bundle "$url" --cache cache
# A mirror serving other bytes in the chapter's tokens: refused as not the published bytes.
shard=$(node -e 'console.log(JSON.parse(require("fs").readFileSync("chapter.proof")).document.shard)')
cp -r bundle mirror && chmod -R u+w mirror && rm "mirror/$shard" && cp "bundle/$shard" "mirror/$shard" && chmod u+w "mirror/$shard"
offset=$(node -e '
const fs = require("fs"), b = fs.readFileSync(process.argv[1]);
const p = JSON.parse(fs.readFileSync("chapter.proof"));
const tokensOffset = Number(b.readBigUInt64LE(32)), indexOffset = Number(b.readBigUInt64LE(40));
const start = Number(b.readBigUInt64LE(indexOffset + 32 * p.document.doc));
console.log(tokensOffset + 2 * (start + p.doc_tokens[0] + 3));' "mirror/$shard")
printf '\x07' | dd of="mirror/$shard" bs=1 seek="$offset" conv=notrunc 2> /dev/null
serve mirror
"$ee" 5 "not the published" -- "$trail" data verify-proof --proof chapter.proof --bundle "$url" --cache cache3

echo "-- absence proofs"
serve bundle
"$trail" data find --run run --absent --text other.txt --proof absent.proof --bundle "$url" --cache cache
"$trail" data verify-proof --proof absent.proof --bundle "$url" --cache cache4 | tee absent.out
grep -q "^VERIFIED: no training document is exactly these" absent.out || fail "absence not verified"
"$ee" 3 "a training document has exactly these tokens" -- \
  "$trail" data find --run run --absent --text chapter.txt --proof present.proof --bundle bundle --cache cache
[ ! -e present.proof ] || fail "an absence proof was written for a present document"
node -e '
const fs = require("fs"), crypto = require("crypto");
const a = JSON.parse(fs.readFileSync("absent.proof"));
const w = (name, f) => { const p = JSON.parse(JSON.stringify(a)); f(p); fs.writeFileSync(name, JSON.stringify(p)); };
w("moved.proof", p => { p.index += 1; });
w("entry.proof", p => { p.after = p.after.replace(/^./, c => c === "0" ? "1" : "0"); });
w("tokens.proof", p => { p.tokens[0] += 1; });
// The chapter (a training document) claimed absent with the entries of another place.
const ids = JSON.parse(fs.readFileSync("chapter.ids"));
const buf = Buffer.alloc(4 * ids.length); ids.forEach((t, i) => buf.writeUInt32LE(t, 4 * i));
w("forged.proof", p => { p.tokens = ids; p.tokens_sha256 = crypto.createHash("sha256").update(buf).digest("hex"); });
'
"$ee" 1 "FAIL: the published entries on either side of index [0-9]+ are not the proof.s" -- "$trail" data verify-proof --proof moved.proof --bundle "$url" --cache cache4
"$ee" 1 "FAIL: the published entries on either side of index [0-9]+ are not the proof.s" -- "$trail" data verify-proof --proof entry.proof --bundle "$url" --cache cache4
"$ee" 1 "FAIL: the proof's tokens do not hash" -- "$trail" data verify-proof --proof tokens.proof --bundle "$url" --cache cache4
"$ee" 1 "FAIL: .*do not enclose the tokens' hash" -- "$trail" data verify-proof --proof forged.proof --bundle "$url" --cache cache4

echo "-- contamination"
node -e '
const fs = require("fs"), [key] = process.argv.slice(1);
const docs = fs.readFileSync("train.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const chapter = docs.find(d => d.id === key), late = docs[docs.length - 1];
const verse = d => d.text.split("\n").filter(l => l.length > 80)[0];
const items = [{id: "read", text: verse(chapter)}, {id: "unread", text: verse(late)},
  {id: "other", text: fs.readFileSync("other.txt", "utf8")}, {id: "short", text: "the LORD"}];
fs.writeFileSync("items.jsonl", items.map(i => JSON.stringify(i)).join("\n") + "\n");
' "$key"
"$trail" data contamination --run run --items items.jsonl --tasks "$assets/olmes/arc_easy" | tee contam.out
node -e '
const fs = require("fs");
const r = JSON.parse(fs.readFileSync("run/contamination.json")), f = JSON.parse(fs.readFileSync("find.json"));
const items = r.tasks.find(t => t.task === "items"), arc = r.tasks.find(t => t.task.startsWith("arc_easy"));
const by = id => items.contaminated_items.find(c => c.id === id);
if (items.items !== 4 || items.short_items !== 1 || items.contaminated !== 2) throw "items miscounted";
// A verse on its own may end in another token than inside its chapter (". " against ".\n"):
// its shared run is the item but for its last token or two.
const read = by("read");
if (!read || read.longest < read.tokens - 2 || !read.trained) throw "the read verse is not contaminated and trained";
if (!by("unread") || by("unread").trained) throw "the unread verse";
if (by("other") || by("short")) throw "a clean item was flagged";
const steps = new Set(f.runs[0].readings.map(x => x.step));
if (!by("read").listed[0].steps.every(s => steps.has(s))) throw "steps differ from data find";
if (!(arc.items > 500) || arc.contaminated !== 0) throw "ARC-Easy not checked";
console.log(`items: ${items.contaminated} of ${items.items} contaminated; ARC-Easy: ${arc.items} items, none`);
'
"$trail" report run --out report.html > /dev/null
grep -q "Contamination of evaluation sets" report.html || fail "the run report has no contamination section"

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
# A text longer than the whole corpus: said so, and its shared runs (every chapter) still found.
node -e '
const fs = require("fs");
const docs = fs.readFileSync("train.jsonl", "utf8").trim().split("\n").map(JSON.parse);
fs.writeFileSync("long.txt", docs.map(d => d.text).join("\n").repeat(2));'
"$trail" data find --run run --text long.txt > long.out
grep -q "longer than all .* training tokens together" long.out || fail "a text longer than the corpus"
[ "$(grep -c '^  [0-9]*\. kjv' long.out)" -gt 1000 ] || fail "the long text's shared runs were not found"
echo PASS
