#!/usr/bin/env bash
# Prepares what scripts/check-cuda.sh needs on a GPU machine that has CUDA's driver, nvcc and
# python3 with PyTorch, but none of trail's Debian packages and no network:
#   .gpu/bundle.tar.xz  trail, train_bench and cuda_gemm_bench built here (CUDA backend in),
#                       the shared libraries they load that such a machine lacks, the KJV
#                       training data (tokenizer, shards, manifest), three recipes, and the
#                       runs those recipes trained here on the CPU (the reference bits);
# Then, on the GPU machine, in the repository root:  scripts/check-cuda.sh .gpu OUT_DIR
#   scripts/pack-cuda.sh [BUILD] [STEPS] [DEST]   (DEST: default .gpu)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
steps=${2:-30}
dest=${3:-$here/.gpu}
cd "$here"
grep -q '^TRAIL_HAVE_CUDA:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null \
  || grep -q 'TRAIL_HAVE_CUDA=1' "$build/build.ninja" \
  || { echo "pack-cuda: $build was configured without the CUDA backend (nvcc not found)" >&2; exit 1; }
# PACK_BUILD=0: use the binaries as they are (the test that runs this script inside ctest must
# not rebuild what other tests are running).
if [ "${PACK_BUILD:-1}" != 0 ]; then
  cmake --build "$build" --target trail train_bench cuda_gemm_bench > /dev/null
fi
for b in src/cli/trail bench/train_bench bench/cuda_gemm_bench; do
  [ -x "$build/$b" ] || { echo "pack-cuda: $build/$b is not built" >&2; exit 1; }
done
stage=$(mktemp -d "${TMPDIR:-/tmp}/trail-gpu-XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/data" "$stage/runs"
cp "$build/src/cli/trail" "$build/bench/train_bench" "$build/bench/cuda_gemm_bench" "$stage/bin/"
# Every library the binaries load except the C runtime (newer on the GPU machine) and CUDA's
# own (the driver's libcuda, and cuBLAS from the machine's CUDA or PyTorch install).
for b in "$stage"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcublas[^/]*|libcublasLt[^/]*|libcudart[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done

# The training data of tests/train_cli_test.sh (KJV, 1024-token BPE) and the recipes: between
# them every model feature (SwiGLU and GELU, qk-norm, embedding norm, tied and untied heads,
# z-loss, sliding windows with full layers, gains and gain-free norms) and every int8 mode.
assets=$build/assets
[ -f "$assets/text/kjv.txt" ] || { echo "pack-cuda: $assets/text/kjv.txt missing (make test fetches it)" >&2; exit 1; }
trail=$stage/bin/trail
fail() { echo "pack-cuda: $*" >&2; exit 1; }
(cd "$stage/data" && . "$here/tests/kjv_train_data.sh" && kjv_train_data \
  && rm -f train.jsonl val.jsonl && recipe "$steps" > base.toml)
python3 - "$stage/data" <<'PY'
import sys, re
d = sys.argv[1]
base = open(f"{d}/base.toml").read()
base = base.replace("checkpoint_every = 25", "checkpoint_every = 10")
def with_model(extra, quant=""):
    return base.replace("[model]\n", "[model]\n" + extra, 1) + quant
open(f"{d}/fp32.toml", "w").write(with_model(
    'mlp = "swiglu"\nqk_norm = true\nembed_norm = true\ntied_embeddings = true\nz_loss = 1e-4\n'
    'attention_window = 16\nfull_attention_every = 2\n'))
open(f"{d}/int8.toml", "w").write(with_model(
    'mlp = "gelu"\ntied_embeddings = false\nnorm_gain = false\n',
    '[quant]\nlinear = "int8-lsq"\nbackward = "int8"\n'))
open(f"{d}/int8-learned.toml", "w").write(with_model(
    'mlp = "swiglu"\nattention_window = 24\n',
    '[quant]\nlinear = "int8-lsq"\nbackward = "fp32"\nstep_size = "learned"\n'))
PY
rm -f "$stage/data/base.toml"
for r in fp32 int8 int8-learned; do
  "$trail" train --recipe "$stage/data/$r.toml" --data "$stage/data/manifest.json" \
    --run "$stage/runs/$r-cpu" --device cpu --threads 2 --quiet > /dev/null \
    || fail "training $r on the cpu"
done
mkdir -p "$dest"
tar -C "$stage" -cJf "$dest/bundle.tar.xz" bin lib data runs
echo "pack-cuda: $dest/bundle.tar.xz $(du -h "$dest/bundle.tar.xz" | cut -f1) ($(ls "$stage/lib" | wc -l) libraries; CPU runs of $steps steps)"
