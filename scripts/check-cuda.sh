#!/usr/bin/env bash
# The CUDA backend's device check, run on a machine with an NVIDIA GPU in one command of under
# 8 minutes, from what scripts/pack-cuda.sh prepared (BUNDLE: its .gpu folder). Writes one JSON
# report, cuda-check.json, and the logs of each part to OUT_DIR:
#   1. the golden suite and training goldens on the GPU (trail selftest --device cuda), per op;
#   2. three recipes (fp32; int8 QAT with int8 backward; int8 with learned step sizes and fp32
#      backward) trained on the GPU, their trajectories compared with the CPU's byte for byte;
#      on a mismatch, traces of the first differing step on both devices and `trail audit
#      bisect`, which names the first diverging op, tensor, element and both values;
#   3. the CPU-trained fp32 run's steps replayed on the GPU (trail audit replay --device cuda);
#   4. benchmarks: the GEMMs against cuBLAS (cuda_gemm_bench), the training step of the
#      gpt2-small preset at T = 1024 (fp32 and int8 QAT) against PyTorch fp32 (TF32 off) and
#      bf16 autocast on the same GPU, and the state hash's share of the step.
# Commit the report under docs/gpu/ with its date.
#   scripts/check-cuda.sh BUNDLE OUT_DIR
# CHECK_DEVICE (default cuda) and CHECK_BENCH=0 (no benchmarks) let the script itself be tried
# on a machine without a GPU, e.g. CHECK_DEVICE=guarded.
set -uo pipefail
bundle=${1:?usage: check-cuda.sh BUNDLE OUT_DIR}
out=${2:?usage: check-cuda.sh BUNDLE OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/trail-cuda-check-XXXXXX")
start=$(date +%s)
note() { echo "[$(($(date +%s) - start))s] $*"; }
tar -C "$work" -xJf "$bundle/bundle.tar.xz" || { echo "cannot unpack $bundle/bundle.tar.xz"; exit 1; }
# cuBLAS for the GEMM benchmark: the machine's CUDA, else the one PyTorch ships.
cublas_dirs=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
# The carried libraries for trail's binaries only: python3 (PyTorch) keeps the machine's own.
libs="$work/lib:/usr/local/cuda/lib64:${cublas_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
carried="env LD_LIBRARY_PATH=$libs"
trail="$carried $work/bin/trail"
device=${CHECK_DEVICE:-cuda}
data=$work/data
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } \
  > "$out/nvidia-smi.txt" 2>&1
$trail --version > "$out/trail-version.txt" 2>&1 || true

note "1/4 golden suite on $device"
timeout 180 $trail selftest --device "$device" --simd-target AVX2 --threads 1 --json > "$out/selftest.json" 2> "$out/selftest.err"
echo $? > "$out/selftest.rc"
# The same with the int8 GEMMs on tensor cores (WMMA), the kernel not yet the default.
TRAIL_CUDA_INT8_TENSOR_CORES=1 timeout 180 $trail selftest --device "$device" --simd-target AVX2 \
  --threads 1 --json > "$out/selftest-int8-tc.json" 2> "$out/selftest-int8-tc.err"

note "2/4 training on $device against the cpu runs"
for r in fp32 int8 int8-learned; do
  timeout 120 $trail train --recipe "$data/$r.toml" --data "$data/manifest.json" \
    --run "$work/runs/$r-cuda" --device "$device" --quiet > "$out/train-$r.log" 2>&1
  echo $? > "$out/train-$r.rc"
  a=$work/runs/$r-cpu/trajectory.jsonl b=$work/runs/$r-cuda/trajectory.jsonl
  if [ -f "$b" ] && cmp -s "$a" "$b"; then
    echo same > "$out/train-$r.verdict"
    continue
  fi
  echo differ > "$out/train-$r.verdict"
  # The first step whose line differs: trace it on both devices and bisect.
  step=$(python3 - "$a" "$b" <<'PY'
import json, sys
a = open(sys.argv[1]).read().splitlines()
b = open(sys.argv[2]).read().splitlines() if len(sys.argv) > 2 else []
for i, line in enumerate(a):
    if i >= len(b) or line != b[i]:
        print(json.loads(line).get("step", i)); break
PY
)
  [ -n "$step" ] || step=0
  echo "$step" > "$out/train-$r.first-step"
  timeout 60 $trail audit trace --run "$work/runs/$r-cpu" --data "$data/manifest.json" \
    --step "$step" --device cpu --out "$work/$r-cpu.trace" > /dev/null 2>&1
  timeout 60 $trail audit trace --run "$work/runs/$r-cpu" --data "$data/manifest.json" \
    --step "$step" --device "$device" --out "$work/$r-cuda.trace" > "$out/trace-$r-cuda.log" 2>&1
  timeout 60 $trail audit bisect "$work/$r-cpu.trace" "$work/$r-cuda.trace" \
    --run "$work/runs/$r-cpu" --data "$data/manifest.json" --json > "$out/bisect-$r.json" 2>&1
done

note "3/4 replaying the cpu-trained fp32 run on $device"
steps=$(wc -l < "$work/runs/fp32-cpu/trajectory.jsonl")  # a line a step
timeout 120 $trail audit replay --run "$work/runs/fp32-cpu" --data "$data/manifest.json" \
  --steps "0:$steps" --device "$device" --json --quiet > "$out/replay.json" 2> "$out/replay.err"
echo $? > "$out/replay.rc"

note "4/4 benchmarks"
if [ "${CHECK_BENCH:-1}" != 0 ]; then
bench="$carried $work/bin/cuda_gemm_bench"
if ! $bench 1 > /dev/null 2>&1; then  # built elsewhere and not runnable here: build it here
  "${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" -O3 -std=c++17 -arch=sm_90 --fmad=false -ftz=false -prec-div=true -prec-sqrt=true \
    --extended-lambda -I"$here/src" "$here/bench/cuda_gemm_bench.cu" "$here"/src/repops/cuda/{gemm,gemm_i8,blake3}.cu \
    -lcublas -o "$work/cuda_gemm_bench" > "$out/gemm-bench-build.log" 2>&1 \
    && bench="$carried $work/cuda_gemm_bench"
fi
timeout 150 $bench 20 > "$out/gemm-bench.json" 2> "$out/gemm-bench.err"
for mode in fp32 int8; do
  timeout 150 $carried "$work/bin/train_bench" 5 16 $mode - gpt2-1024 cuda > "$out/step-trail-$mode.json" \
    2> "$out/step-trail-$mode.err"
done
for precision in fp32 bf16; do
  timeout 120 python3 "$here/bench/train_bench_torch.py" 5 16 gpt2-1024 cuda $precision \
    > "$out/step-torch-$precision.json" 2> "$out/step-torch-$precision.err"
done
fi

note "report"
python3 "$here/scripts/cuda_check_report.py" "$out" "$(($(date +%s) - start))" > "$out/cuda-check.json"
python3 - "$out/cuda-check.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps(r["summary"], indent=1))
PY
rm -rf "$work"
