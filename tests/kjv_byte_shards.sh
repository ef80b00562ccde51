#!/usr/bin/env bash
# Token shards of KJV text as bytes, for tests that train tiny runs on real text. In the current
# directory, for each NAME=FIRST:LAST: NAME.jsonl (the non-empty lines FIRST..LAST-1 of the KJV,
# one document each, tokens = UTF-8 bytes), NAME.tshard (vocabulary 258: bytes, EOS 256, PAD
# 257) and NAME.entry (its manifest entry). The contract is 64 × 'ab' (a test contract).
#   kjv_byte_shards.sh TRAIL KJV_TXT NAME=FIRST:LAST...
set -euo pipefail
trail=$1; kjv=$2; shift 2
python3 - "$kjv" "$@" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1], encoding='utf-8') if l.strip()]
for spec in sys.argv[2:]:
    name, span = spec.split('=')
    first, last = (int(x) for x in span.split(':'))
    with open(name + '.jsonl', 'w') as f:
        for i, d in enumerate(lines[first:last]):
            f.write(json.dumps({'key': '%s-%04d' % (name, i), 'tokens': list(d.encode()), 'domain': 0}) + '\n')
PY
contract=$(printf 'ab%.0s' $(seq 32))
for spec in "$@"; do
  name=${spec%%=*}
  "$trail" data shard --input $name.jsonl --output $name.tshard --vocab-size 258 --contract "$contract" > $name.entry
done
