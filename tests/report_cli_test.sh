#!/usr/bin/env bash
# `trail report` opened in a real browser (Debian's chromium, headless): a tiny run on KJV bytes
# with two validation domains, several evaluations, log steps, a mixture phase at step 30 and a
# sequence-length switch (16 -> 32) at step 20;
# the report renders to a screenshot, the page logs nothing to the console, every chart is in
# the DOM with non-empty paths, the numbers the DOM carries equal the run's metrics.jsonl and
# run.json, each mixture and length phase shows its shares or windows and tokens, and two auditors'
# attestations give the verdict "verified" and full coverage per step range.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-report-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TRAIL_NUM_THREADS=1
command -v chromium > /dev/null || fail "chromium is not installed (scripts/install-deps.sh installs it)"

"$here/kjv_byte_shards.sh" "$trail" "$assets/text/kjv.txt" train=0:3000 psalms=14000:14040 \
  gospels=23200:23240
contract=$(printf 'ab%.0s' $(seq 32))
cat > manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 258, "eos_id": 256, "pad_id": 257},
 "sources": [{"name": "kjv", "target_share": 1.0, "shards": [$(cat train.entry)]},
             {"name": "again", "target_share": 1.0, "shards": [$(cat train.entry)]}],
 "validation": [{"domain": "psalms", "shards": [$(cat psalms.entry)]},
                {"domain": "gospels", "shards": [$(cat gospels.entry)]}],
 "stream": {"seed": 3, "seq_len": 16, "positions": "window", "batch_schedule": [{"from_step": 0, "windows": 4}],
            "mixture_phases": [{"from_step": 30, "shares": {"again": 1}}],
            "seq_len_phases": [{"from_step": 20, "seq_len": 32}]}}
JSON
cat > recipe.toml <<'TOML'
[model]
d_model = 32
n_layers = 2
n_heads = 2
d_ff = 64
max_seq_len = 32
[optimizer]
lr = 3e-3
[schedule]
decay = "cosine"
warmup_tokens = 512
total_tokens = 5120
[train]
steps = 40
eval_every = 10
eval_windows = 4
log_every = 5
TOML
"$trail" train --recipe recipe.toml --data manifest.json --run run --quiet > /dev/null
# Two auditors certify the run (redundancy 1); the report collects their attestations.
mkdir trusted
for i in 0 1; do
  "$trail" audit keygen --out auditor$i > /dev/null
  cp auditor$i.pub trusted/
done
"$trail" audit plan --run run --auditors 2 --redundancy 1 --out plan.json > /dev/null
for i in 0 1; do
  "$trail" audit certify --run run --plan plan.json --key auditor$i.key --auditor $i --out att$i.json \
    --quiet > certify$i.out || fail "certify $i: $(cat certify$i.out)"
done
[ "$("$trail" report run --plan plan.json --keys trusted --attestation att0.json --attestation att1.json)" = \
  run/report.html ] || fail "report path"

browse() {  # chromium, headless, as root in a container: no sandbox
  chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --enable-logging=stderr --v=0 "$@" "file://$dir/run/report.html"
}
browse --screenshot="$dir/shot.png" --window-size=1000,2600 2> screenshot.log > /dev/null ||
  fail "chromium could not render the report: $(tail -5 screenshot.log)"
[ -s shot.png ] || fail "no screenshot"
browse --dump-dom 2> console.log > dom.html || fail "chromium --dump-dom: $(tail -5 console.log)"
if grep -E "CONSOLE|Uncaught" console.log screenshot.log; then fail "the page logged to the console"; fi
python3 - <<'PY' || fail "report DOM"
import json
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs, self.paths, self.current, self.cells, self.row, self.in_td = [], [], None, {}, None, False
        self.exact = {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'svg':
            self.current = a.get('id'); self.svgs.append(self.current)
        if tag == 'path' and a.get('class') == 'series':
            self.paths.append((self.current, a))
        if tag == 'tr' and a.get('class') == 'val':
            self.row = a['data-domain']; self.cells[self.row] = []
        if tag == 'td' and self.row:
            self.in_td = True
            if 'data-value' in a: self.exact.setdefault(self.row, []).append(a['data-value'])
    def handle_endtag(self, tag):
        if tag == 'tr': self.row = None
        if tag == 'td': self.in_td = False
    def handle_data(self, data):
        if self.in_td and self.row: self.cells[self.row].append(data)

dom = Dom()
dom.feed(open('dom.html').read())
charts = ['chart-loss', 'chart-lr', 'chart-grad-norm', 'chart-throughput', 'chart-weight-norms',
          'chart-audit-coverage']
assert all(c in dom.svgs for c in charts), dom.svgs
for chart, a in dom.paths:
    assert a['d'].startswith('M') and len(a['d']) > 10, (chart, a['data-name'], a['d'][:40])
for c in charts:
    assert any(ch == c for ch, _ in dom.paths), 'no path in ' + c

metrics = [json.loads(l) for l in open('run/metrics.jsonl')]
info = json.load(open('run/run.json'))
def series(chart, name):
    a = [a for ch, a in dom.paths if ch == chart and a['data-name'] == name]
    assert len(a) == 1, (chart, name)
    return [float(v) for v in a[0]['data-x'].split()], [float(v) for v in a[0]['data-y'].split()]
x, y = series('chart-loss', 'training loss')
assert x == [float(m['tokens']) for m in metrics] and y == [m['loss'] for m in metrics]
assert series('chart-lr', 'lr')[1] == [m['lr'] for m in metrics]
assert series('chart-grad-norm', 'before clipping')[1] == [m['grad_norm'] for m in metrics]
for domain in ['psalms', 'gospels']:
    evals = [m for m in metrics if 'val' in m]
    assert len(evals) == 4, len(evals)
    x, y = series('chart-loss', 'validation ' + domain)
    assert y == [m['val'][domain] for m in evals] and x == [float(m['tokens']) for m in evals]
    cells, exact = dom.cells[domain], dom.exact[domain]
    assert float(exact[0]) == evals[-1]['val'][domain] and float(exact[1]) == info['val_unigram_entropy'][domain], exact
    # People read four decimals.
    assert cells[2] == '%.4f' % evals[-1]['val'][domain] and cells[3] == '%.4f' % info['val_unigram_entropy'][domain], cells
logged = [m for m in metrics if 'weight_norms' in m]
assert series('chart-weight-norms', 'layers.1')[1] == [m['weight_norms']['layers.1'] for m in logged]
PY
grep -q 'audit-verdict">verified<' dom.html || fail "audit verdict"
grep -q '<td>1 replica × 1 shard</td>' dom.html || fail "the mesh in words"
# The mixture phases: half and half over steps 0..29 (120 windows), then only "again" (40).
python3 - <<'PY' || fail "mixture phase rows"
import re
rows = re.findall(r'<tr class="phase"><td>(\d+)</td><td class="num">(\d+)</td><td>(\w+)</td><td class="num">([\d.]+)</td><td class="num">([\d.]+)</td>', open('dom.html').read())
assert rows == [('0', '120', 'kjv', '0.5000', '0.5000'), ('0', '120', 'again', '0.5000', '0.5000'),
                ('30', '40', 'kjv', '0.0000', '0.0000'), ('30', '40', 'again', '1.0000', '1.0000')], rows
PY
# The length phases: 80 windows of 16 tokens (steps 0..19), then 80 of 32.
python3 - <<'PY' || fail "length phase rows"
import re
rows = re.findall(r'<tr class="length"><td>(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', open('dom.html').read())
assert rows == [('0', '16', '80', '1280'), ('20', '32', '80', '2560')], rows
PY
python3 - <<'PY' || fail "audit coverage rows"
import re
rows = re.findall(r'<tr class="coverage"><td>[^<]*</td><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', open('dom.html').read())
assert sum(int(p) for p, _, _ in rows) == 40 and sum(int(v) for _, v, _ in rows) == 40, rows
assert all(d == '0' for _, _, d in rows), rows
PY
grep -q "last-chain\">$(tail -1 run/trajectory.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["chain"])')" dom.html ||
  fail "last chained hash"
echo "report: rendered by chromium ($(stat -c %s shot.png) bytes of screenshot), no console output, numbers equal metrics.jsonl"
