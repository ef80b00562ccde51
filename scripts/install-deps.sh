#!/usr/bin/env bash
# Installs the Debian packages trail needs to build, test and run its demo.
# Idempotent: only missing packages are installed. Needs root (apt-get).
set -euo pipefail

native_pkgs=(
  build-essential cmake ninja-build pkg-config
  libhwy-dev libssl-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libpcre2-dev libzstd-dev zlib1g-dev libicu-dev libfasttext-dev libtomlplusplus-dev libsqlite3-dev
  libgumbo-dev libsimdjson-dev
  libopenmpi-dev openmpi-bin
  librust-blake3-dev
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14
  python3-dev pybind11-dev python3-pytest libcurl4-openssl-dev
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
