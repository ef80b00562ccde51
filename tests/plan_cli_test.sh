#!/usr/bin/env bash
# `trail plan` end to end:
#   cost: each preset's parameter count equals the same architecture built as PyTorch modules
#         (tests/plan/torch_param_count.py, Debian's python3-torch), GPT-2 small's differs from
#         the published 124,439,808 by exactly its position embeddings and biases; on a real run
#         the parameters and FLOPs per token equal what the trainer wrote in run.json;
#   sweep: an IsoFLOP grid (3 budgets x 3 widths) of tiny runs on KJV bytes, trained by its
#         run.sh; each run consumed the tokens sweep.json planned, and `plan fit` fits them
#         (the fit's quality is printed, not asserted: at this scale it need not be Chinchilla's);
#   fit:  the (N, D, L) point read from a real run directory equals what run.json and
#         metrics.jsonl say; a CSV of losses from a known law gives the law back (JSON); bad
#         tables and too few runs are refused with messages that say what to fix.
set -euo pipefail
trail=$1; assets=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-plan-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TRAIL_NUM_THREADS=1

# A tiny run on KJV bytes with two validation domains (vocabulary 258: bytes, EOS, PAD).
"$here/kjv_byte_shards.sh" "$trail" "$assets/text/kjv.txt" train=0:2000 valA=2000:2040 valB=3000:3040
contract=$(printf 'ab%.0s' $(seq 32))
cat > manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 258, "eos_id": 256, "pad_id": 257},
 "sources": [{"name": "kjv", "target_share": 1.0, "shards": [$(cat train.entry)]}],
 "validation": [{"domain": "a", "shards": [$(cat valA.entry)]}, {"domain": "b", "shards": [$(cat valB.entry)]}],
 "stream": {"seed": 3, "seq_len": 32, "positions": "window", "batch_schedule": [{"from_step": 0, "windows": 4}]}}
JSON
cat > recipe.toml <<'TOML'
[model]
d_model = 16
n_layers = 1
n_heads = 2
d_ff = 32
max_seq_len = 32
[optimizer]
lr = 3e-3
[train]
steps = 6
eval_windows = 4
TOML
"$trail" train --recipe recipe.toml --data manifest.json --run run --quiet > /dev/null
# plan cost on the run's own recipe and data: what the trainer recorded.
"$trail" plan cost --recipe recipe.toml --data manifest.json --json > cost.json
python3 - <<'PY' || fail "plan cost vs run.json"
import json
cost, info = json.load(open('cost.json')), json.load(open('run/run.json'))
assert cost['parameters']['total'] == info['parameters'], (cost['parameters'], info['parameters'])
assert cost['flops_per_token'] == info['flops_per_token'], (cost['flops_per_token'], info['flops_per_token'])
last = [json.loads(l) for l in open('run/metrics.jsonl')][-1]
assert cost['tokens'] == last['tokens'], (cost['tokens'], last['tokens'])  # 6 steps x 4 windows x 32
PY
# --measure: a few real steps give a rate and the run's estimated time.
"$trail" plan cost --recipe recipe.toml --data manifest.json --measure 3 --json 2> /dev/null > measured.json
python3 - <<'PY' || fail "plan cost --measure"
import json
j = json.load(open('measured.json'))
m = j['measured']
assert m['steps'] == 2 and m['seconds_per_token'] > 0 and m['median_step_seconds'] > 0, m
assert abs(m['estimated_seconds'] - m['seconds_per_token'] * j['tokens']) <= 1e-9 * m['estimated_seconds'], m
PY
"$trail" plan cost --recipe recipe.toml --vocab 258 --measure 3 2> err.txt && fail "--measure without --data"
grep -q "requires --data" err.txt || fail "--measure message: $(cat err.txt)"
# Every preset against PyTorch modules of the same architecture.
/usr/bin/python3 "$here/plan/torch_param_count.py" 50257 > torch.json
for preset in tiny open1b-style gpt2-small; do
  printf '[model]\npreset = "%s"\n' $preset > $preset.toml
  "$trail" plan cost --recipe $preset.toml --vocab 50257 --json > $preset.json
done
python3 - <<'PY' || fail "preset counts vs PyTorch"
import json
torch = json.load(open('torch.json'))
for preset in ['tiny', 'open1b-style', 'gpt2-small']:
    ours = json.load(open(preset + '.json'))['parameters']['total']
    assert ours == torch[preset], (preset, ours, torch[preset])
# GPT-2 as published adds 1024x768 position embeddings, 12 x 6,912 linear biases, 25 x 768
# LayerNorm biases.
assert torch['gpt2-published'] == 124439808
assert torch['gpt2-published'] - torch['gpt2-small'] == 786432 + 82944 + 19200
PY
"$trail" plan cost --recipe tiny.toml 2> err.txt && fail "cost without a vocabulary"
grep -q "vocab" err.txt || fail "vocabulary message: $(cat err.txt)"
"$trail" plan cost --recipe tiny.toml --vocab 100 --processes 2 2> err.txt && fail "2 processes on 1 rank"
grep -q "give 1..1" err.txt || fail "processes message: $(cat err.txt)"

"$trail" plan fit run 2> err.txt && fail "one run fitted"
grep -q "at least 5 runs; got 1" err.txt || fail "too few runs: $(cat err.txt)"
# The point of the run: N from run.json, D and L from the last metrics line with "val".
python3 - <<'PY' > expected.csv
import json
info = json.load(open('run/run.json'))
last = [json.loads(l) for l in open('run/metrics.jsonl') if '"val"' in l][-1]
val = last['val']
assert len(val) == 2, val
print('params,tokens,loss')
print('%r,%r,%r' % (float(info['parameters']), float(last['tokens']), sum(val.values()) / len(val)))
PY
# Four more points of other sizes, so the fit runs; only the run's own point is compared.
{ cat expected.csv; printf '%s\n' 1e7,1e9,3.1 1e8,1e9,2.9 1e7,1e10,2.8 1e8,1e10,2.5; } > mixed.csv
"$trail" plan fit run --points mixed.csv --bootstrap 0 --json > mixed.json
python3 - <<'PY' || fail "run point"
import json
got = json.load(open('mixed.json'))['points']
want = open('expected.csv').read().split('\n')[1].split(',')
run = [p for p in got if p['source'] == 'run'][0]
assert [run['params'], run['tokens'], run['loss']] == [float(x) for x in want], (run, want)
PY

# Losses from L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28 on a 5 x 5 grid: the fit gives it back.
python3 - <<'PY' > law.csv
print('# a comment line\nloss,tokens,params')
for i in range(5):
    for j in range(5):
        n, d = 10 ** (7 + i * 1.25), 10 ** (8 + j * 1.25)
        print('%r,%r,%r' % (1.69 + 406.4 / n ** 0.34 + 410.7 / d ** 0.28, d, n))
PY
"$trail" plan fit --points law.csv --budget 1e21 --bootstrap 20 --json > law.json
python3 - <<'PY' || fail "law not recovered"
import json
j = json.load(open('law.json'))
law = j['law']
for k, v in {'E': 1.69, 'A': 406.4, 'B': 410.7, 'alpha': 0.34, 'beta': 0.28}.items():
    assert abs(law[k]['value'] - v) < 1e-3 * max(1, v), (k, law[k], v)
b = j['budgets'][0]
assert b['flops'] == 1e21 and abs(b['params']['value'] * b['tokens']['value'] * 6 / 1e21 - 1) < 1e-9
assert j['bootstrap_fits'] == 20 and j['format'] == 'trail.plan.fit.v1'
PY
"$trail" plan fit --points law.csv --bootstrap 0 | grep -q "N\* ~ C^0.452, D\* ~ C^0.548" || fail "exponents line"

# Bad tables.
printf 'params,tokens\n1,2\n' > nohead.csv
"$trail" plan fit --points nohead.csv 2> err.txt && fail "table without loss accepted"
grep -q "params, tokens and loss" err.txt || fail "header message: $(cat err.txt)"
printf 'params,tokens,loss\n1e7,1e9,abc\n' > nan.csv
"$trail" plan fit --points nan.csv 2> err.txt && fail "non-number accepted"
grep -q "nan.csv:2: 'abc' is not a number" err.txt || fail "number message: $(cat err.txt)"
{ head -6 law.csv; echo '1e7,1e9,-1'; } > negative.csv
"$trail" plan fit --points negative.csv 2> err.txt && fail "negative loss accepted"
grep -q "positive finite" err.txt || fail "negative message: $(cat err.txt)"
mkdir empty && "$trail" plan fit empty 2> err.txt && fail "empty run directory accepted"
grep -q "run.json" err.txt || fail "empty run message: $(cat err.txt)"
# An IsoFLOP sweep on the same data, trained and fitted.
"$trail" plan sweep --recipe recipe.toml --data manifest.json --budget 3e8 --budget 1e9 \
  --budget 3e9 --widths 16,32,48 --out sweep > sweep.out
TRAIL=$trail sh sweep/run.sh > sweep-fit.txt
python3 - <<'PY' || fail "sweep runs"
import json
sweep = json.load(open('sweep/sweep.json'))
assert len(sweep['runs']) == 9, sweep
for r in sweep['runs']:
    last = [json.loads(l) for l in open('sweep/%s/run/metrics.jsonl' % r['name'])][-1]
    assert last['step'] + 1 == r['steps'] and last['tokens'] == r['tokens'], (r, last)
    assert r['flops'] >= r['budget'], r
PY
grep -q "rms error of ln L" sweep-fit.txt || fail "sweep fit: $(cat sweep-fit.txt)"
echo "sweep of 9 tiny runs fitted: $(grep -o 'rms error of ln L [0-9.e-]*' sweep-fit.txt)"
echo "plan cost: run and presets agree; plan fit: run point, law recovered, bad input refused"
