#!/usr/bin/env bash
# Installs what trail needs to build, test and run its demo: Debian packages (as root), then the
# PyPI packages pinned with hashes in scripts/requirements/*.txt into the project's virtual
# environment BUILD/venv (CUDA 13 from PyPI: the CUDA backend compiles without /usr/local/cuda).
# Idempotent: only what is missing is installed.
#   scripts/install-deps.sh [BUILD]   (default build)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)

native_pkgs=(
  build-essential cmake ninja-build pkg-config
  libhwy-dev libssl-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libpcre2-dev libzstd-dev zlib1g-dev libicu-dev libfasttext-dev libtomlplusplus-dev libsqlite3-dev
  libgumbo-dev libsimdjson-dev
  libopenmpi-dev openmpi-bin
  librust-blake3-dev
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14
  python3-dev python3-venv pybind11-dev python3-pytest libcurl4-openssl-dev
)
# clang-14: the second compiler whose build must reproduce the golden hashes; libclang-rt-14-dev
# and llvm-14: libFuzzer, the sanitizer runtimes and llvm-symbolizer (make fuzz, make test-sanitize).
# clang-format-14: the format test checks every C++ file against .clang-format.
# python3-dev, pybind11-dev and python3-pytest: the Python package (python/) and its tests.
# libcurl4-openssl-dev: remote audits fetch published bundles over HTTP(S) (src/fetch).
# librust-blake3-dev: BLAKE3's official C sources (built by cmake/blake3.cmake) for the state hash.
# b3sum and python3-cryptography: independent BLAKE3 and Ed25519 for the audit tests' forgeries.
# python3-torch (Debian's) is the float64 reference for the model's gradients and the training benchmark.
# chromium (headless) opens the HTML run report in the tests: rendering, console, DOM numbers.
# slurm-wlm and munge: a one-node Slurm that the tests start to run the corpus build's job arrays.
# Real text for the tokenizer's differential tests and benchmarks, and the reference encoder's
# runtime (node; the npm packages are pinned in assets/ and fetched by scripts/fetch-assets.sh).
data_pkgs=(
  bible-kjv fortunes fortunes-min fortunes-de fortunes-es fortunes-it fortunes-pl fortunes-ru
  fortunes-cs fortunes-bg fortunes-br fortunes-ga fortunes-zh fortunes-eo vim-runtime
  zstd gzip bc time bsdgames fortunes-eo-ascii fortunes-eo-iso3 b3sum python3-cryptography
  python3-torch python3-numpy libopenblas0-openmp
  golang-1.19-src golang-golang-x-net-dev golang-golang-x-crypto-dev
  chromium slurm-wlm munge
)
# A machine that already has node and npm (e.g. from NodeSource) keeps them.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then data_pkgs+=(nodejs npm); fi
# The aarch64 cross build runs the golden-hash suite under qemu-user.
cross_pkgs=(g++-aarch64-linux-gnu qemu-user libssl-dev:arm64 libhwy-dev:arm64 libpcre2-dev:arm64
            libzstd-dev:arm64 zlib1g-dev:arm64 libicu-dev:arm64)

missing() {
  local out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  echo "${out[@]:-}"
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

want=("${native_pkgs[@]}" "${data_pkgs[@]}")
if [ "${TRAIL_SKIP_CROSS:-0}" != 1 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64
  fi
  want+=("${cross_pkgs[@]}")
fi

todo=$(missing "${want[@]}")
if [ -n "$todo" ]; then
  echo "trail setup: installing $todo"
  as_root apt-get update -qq
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $todo
fi

# The project's virtual environment, on Debian's python3 (the one python3-dev builds the module
# for). A stamp holding the lock files' SHA-256 makes a rerun with unchanged locks a no-op.
venv=$build/venv
locks=()
for lock in "$here"/requirements/*.txt; do
  # The CUDA wheels are built for x86-64 (manylinux); elsewhere the backend needs a local CUDA.
  [[ $lock == */cuda.txt && $(uname -m) != x86_64 ]] && continue
  locks+=("$lock")
done
want_stamp=$(cat /dev/null "${locks[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.trail-locks" 2>/dev/null)" != "$want_stamp" ]; then
  echo "trail setup: installing the PyPI packages of ${locks[*]##*/} into $venv"
  mkdir -p "$build"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  for lock in "${locks[@]}"; do
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
      -r "$lock"
  done
  # CUDA from wheels: the layout CMake's FindCUDAToolkit and nvcc's own profile expect (lib64,
  # and the unversioned names of the shared libraries the wheels ship as .so.N).
  for cu in "$venv"/lib/python3*/site-packages/nvidia/cu13; do
    [ -d "$cu" ] || continue
    ln -sfn lib "$cu/lib64"
    for so in "$cu"/lib/lib*.so.[0-9]*; do ln -sfn "$(basename "$so")" "${so%.so.*}.so"; done
  done
  echo "$want_stamp" > "$venv/.trail-locks"
fi
