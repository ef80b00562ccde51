#!/usr/bin/env bash
# Installs the real peers the tests and benchmarks compare trail with — PyTorch 2.x,
# Hugging Face transformers, lm-eval, datatrove (scripts/requirements/peers.in) — into the virtual
# environment BUILD/peers, every package at the version and SHA-256 of
# scripts/requirements/peers.lock, with uv from BUILD/venv (scripts/install-deps.sh installs it).
# A separate environment: PyTorch's CUDA 13.2 runtime wheels must not meet BUILD/venv's CUDA 13.0
# compiler. Idempotent: a stamp holding the lock's SHA-256 makes a rerun a no-op.
#   scripts/install-peers.sh [BUILD]   (default build)
# Exits non-zero when a peer cannot be installed: the tests that need one then fail, never skip.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/requirements/peers.lock
peers=$build/peers
uv=$build/venv/bin/uv

if [ "$(uname -m)" != x86_64 ]; then
  # The lock is resolved for manylinux x86-64 (PyTorch's wheels differ by platform).
  echo "trail setup: the peers are locked for x86-64 only; not installed on $(uname -m)" >&2
  exit 0
fi
[ -x "$uv" ] || { echo "trail setup: no $uv (run scripts/install-deps.sh $build first)" >&2; exit 1; }
want_stamp=$(sha256sum "$lock" | cut -d' ' -f1)
[ "$(cat "$peers/.trail-lock" 2>/dev/null)" = "$want_stamp" ] && exit 0

echo "trail setup: installing the peers of ${lock##*/} into $peers (about 6 GB)"
[ -x "$peers/bin/python" ] || "$uv" venv --quiet --python /usr/bin/python3 "$peers"
# --require-hashes: a file whose SHA-256 is not in the lock is refused; --no-deps would hide a
# lock that misses a dependency, so uv resolves and must find every one pinned.
VIRTUAL_ENV=$peers "$uv" pip install --quiet --require-hashes --link-mode copy -r "$lock"
"$peers/bin/python" -c "import torch, transformers, lm_eval, datatrove" \
  || { echo "trail setup: the peers installed but do not import" >&2; exit 1; }
echo "$want_stamp" > "$peers/.trail-lock"
