# Shared by the remote and adversarial audit tests: a loopback server for a bundle, and the run
# they publish. Sourced with $trail, $here and $assets set; the caller's EXIT trap calls
# stop_server, and the functions run in the test's working directory.
fail() { echo "FAIL: $*" >&2; exit 1; }
# json FILE EXPR: EXPR (Python) evaluated with j = the file's JSON.
json() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }

server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}

# serve ROOT [FAULTS...]: starts tests/range_server.py on an ephemeral port; sets $url.
serve() {
  stop_server
  rm -f port
  python3 "$here/range_server.py" "$1" port "${@:2}" > server.log 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
  [ -s port ] || { cat server.log; fail "the test server did not start"; }
  url="http://127.0.0.1:$(cat port)"
}

# trained_run [TRAIN_FLAGS...]: the King James data (tests/kjv_train_data.sh), a 60-step run in
# ./run with a checkpoint every 10 steps, signed by ./trainer.key.
trained_run() {
  . "$here/kjv_train_data.sh"
  kjv_train_data
  recipe 60 | sed 's/^keep_checkpoints = 2/keep_checkpoints = 10/; s/^checkpoint_every = 25/checkpoint_every = 10/' \
    > recipe.toml
  "$trail" audit keygen --out trainer > /dev/null
  "$trail" train --recipe recipe.toml --data manifest.json --run run --threads 2 --quiet \
    --key trainer.key "$@" > train.out 2>&1 || { cat train.out; fail "training"; }
}
