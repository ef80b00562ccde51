#!/usr/bin/env bash
# Auditing 3 steps of the demo run from a loopback HTTP server (tests/range_server.py): bytes
# and seconds with a cold cache, then a warm one, against fetching the whole bundle first
# (`trail publish verify` reads every byte) and replaying locally. Needs `make demo` first.
#   bench/run_remote_audit_bench.sh BUILD [STEPS]   (STEPS default 200:203)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd); steps=${2:-200:203}
trail=$build/src/cli/trail; run=$build/demo/run
[ -f "$run/run.json" ] || { echo "no demo run at $run: run 'make demo' first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/trail-remote-bench-XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
# Published with the demo trainer's key: an audit refuses a publication signed by another key
# than the one that signed the run's attestation (docs/audit.md, "Who published it").
"$trail" publish --run "$run" --out "$work/bundle" --key "$build/demo/trainer.key" --checkpoint-every 100 \
  --quiet | head -1
python3 "$here/../tests/range_server.py" "$work/bundle" "$work/port" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$work/port")"
seconds() { python3 -c 'import sys, time; t = time.time(); import subprocess; \
  subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print(f"{time.time() - t:.2f}")' "$@"; }
fetched() { python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fetch"]; \
  print("%.2f MB of %.2f MB" % (f["fetched_bytes"] / 1e6, f["bundle_bytes"] / 1e6))' "$1"; }
replay() { "$trail" audit replay --run "$url" --steps "$steps" --cache "$work/cache" --json --quiet; }
t=$(seconds bash -c "$(declare -f replay); trail=$trail url=$url steps=$steps work=$work replay > $work/cold.json")
echo "cold cache: $t s, fetched $(fetched "$work/cold.json")"
t=$(seconds bash -c "$(declare -f replay); trail=$trail url=$url steps=$steps work=$work replay > $work/warm.json")
echo "warm cache: $t s, fetched $(fetched "$work/warm.json")"
t1=$(seconds "$trail" publish verify --bundle "$url")
t2=$(seconds "$trail" audit replay --run "$work/bundle/run" --data "$work/bundle/data/manifest.json" \
  --steps "$steps" --quiet)
echo "whole bundle: $t1 s to fetch and check every byte + $t2 s to replay locally"
