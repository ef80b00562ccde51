// Row ops of the CUDA backend: every row's canonical reductions (docs/repops.md §2) run on one
// half-warp (device_math.cuh), so a row's bits never depend on the other rows or the launch.
#include "repops/cuda/device_math.cuh"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

constexpr int kRowThreads = 256;  // 16 rows a block
constexpr int kRowsPerBlock = kRowThreads / 16;

unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}
// This thread's row; rows past the end still run (with n = 0) so whole warps reduce together.
__device__ int64_t MyRow() { return blockIdx.x * int64_t{kRowsPerBlock} + threadIdx.x / 16; }

__global__ void RmsNormForwardKernel(const float* x, const float* gain, float eps, float inv_d,
                                     int64_t rows, int64_t d, float* y, float* rstd) {
  const int64_t r = MyRow();
  const bool live = r < rows;
  const float* xr = x + (live ? r : 0) * d;
  const float ss = HalfWarpSumSq(xr, live ? d : 0);
  if (!live) return;
  const float s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fmul_rn(ss, inv_d), eps)));
  const unsigned lane = threadIdx.x & 15u;
  if (lane == 0) rstd[r] = s;
  float* yr = y + r * d;
  for (int64_t i = lane; i < d; i += 16)
    yr[i] = gain ? __fmul_rn(__fmul_rn(xr[i], s), gain[i]) : __fmul_rn(xr[i], s);
}

// dx = (g − xhat·c)·rstd with g = dy·gain, xhat = x·rstd, c = Dot(g, xhat)·(1/d).
__global__ void RmsNormBackwardKernel(const float* dy, const float* x, const float* gain,
                                      const float* rstd, float inv_d, int64_t rows, int64_t d,
                                      float* dx) {
  const int64_t r = MyRow();
  const bool live = r < rows;
  const int64_t rr = live ? r : 0;
  const float* dyr = dy + rr * d;
  const float* xr = x + rr * d;
  const float s = rstd[rr];
  const float dot = HalfWarpReduce(
      live ? d : 0, 0.0f,
      [&](float p, int64_t i) {
        const float g = gain ? __fmul_rn(dyr[i], gain[i]) : dyr[i];
        return __fmaf_rn(g, __fmul_rn(xr[i], s), p);
      },
      false);
  if (!live) return;
  const float c = __fmul_rn(dot, inv_d);
  float* dxr = dx + r * d;
  for (int64_t i = threadIdx.x & 15u; i < d; i += 16) {
    const float g = gain ? __fmul_rn(dyr[i], gain[i]) : dyr[i];
    dxr[i] = __fmul_rn(__fsub_rn(g, __fmul_rn(__fmul_rn(xr[i], s), c)), s);
  }
}

// dgain[i] = fma(dy[r, i], x[r, i]·rstd[r], dgain[i]) for rows r ascending: a thread a column.
__global__ void RmsNormGainKernel(const float* dy, const float* x, const float* rstd, int64_t rows,
                                  int64_t d, float* dgain) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= d) return;
  float acc = dgain[i];
  for (int64_t r = 0; r < rows; ++r)
    acc = __fmaf_rn(dy[r * d + i], __fmul_rn(x[r * d + i], rstd[r]), acc);
  dgain[i] = acc;
}

__global__ void CrossEntropyRowsKernel(const float* logits, const int32_t* targets, int64_t rows,
                                       int64_t vocab, int32_t ignore_index, float* lse, float* nll,
                                       float* lse_sq) {
  const int64_t r = MyRow();
  const bool live = r < rows;
  const float* x = logits + (live ? r : 0) * vocab;
  const int64_t n = live ? vocab : 0;
  const float m = HalfWarpMax(x, n);
  const float sum = HalfWarpReduce(
      n, 0.0f, [&](float p, int64_t i) { return __fadd_rn(p, DevExp(__fsub_rn(x[i], m))); }, false);
  if (!live || (threadIdx.x & 15u) != 0) return;
  const float l = __fadd_rn(m, DevLog(sum));
  lse[r] = l;
  const bool ignored = targets[r] == ignore_index;
  nll[r] = ignored ? 0.0f : __fsub_rn(l, x[targets[r]]);
  lse_sq[r] = ignored ? 0.0f : __fmul_rn(l, l);
}

// dlogit_j = (Exp(logit_j − lse)·coef − [j == target])·grad_scale; the non-target terms are
// (e·coef)·g exactly (subtracting +0 changes nothing), as cross_entropy.cc computes them.
__global__ void CrossEntropyBackwardKernel(const float* logits, const int32_t* targets,
                                           const float* lse, int64_t rows, int64_t vocab,
                                           int32_t ignore_index, float grad_scale, float z2,
                                           float* dlogits) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= vocab) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float* d = dlogits + r * vocab;
    if (targets[r] == ignore_index) {
      d[j] = 0.0f;
      continue;
    }
    const float coef = __fadd_rn(1.0f, __fmul_rn(z2, lse[r]));
    const float e = DevExp(__fsub_rn(logits[r * vocab + j], lse[r]));
    d[j] = j == targets[r] ? __fmul_rn(__fsub_rn(__fmul_rn(e, coef), 1.0f), grad_scale)
                           : __fmul_rn(__fmul_rn(e, coef), grad_scale);
  }
}

// One warp: the first half-warp reduces, the second idles through the shuffles.
__global__ void SumKernel(const float* x, int64_t n, float* out, bool squares) {
  const int64_t len = threadIdx.x < 16 ? n : 0;
  const float s = squares ? HalfWarpSumSq(x, len) : HalfWarpSum(x, len);
  if (threadIdx.x == 0) out[0] = s;
}

// s[j] = (mean + mean) / √127 with mean = Sum(|w[:, j]|) / K: one thread a column, its 16
// partials in registers in the spec's lane order.
__global__ void WeightStepKernel(const float* w, int64_t K, int64_t N, float sqrt_qmax,
                                 float* step) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= N) return;
  float p[16];
#pragma unroll
  for (int l = 0; l < 16; ++l) p[l] = 0.0f;
  int64_t i = 0;
  for (; i + 16 <= K; i += 16)
#pragma unroll
    for (int l = 0; l < 16; ++l) p[l] = __fadd_rn(p[l], fabsf(w[(i + l) * N + j]));
#pragma unroll
  for (int l = 0; l < 16; ++l)
    if (i + l < K) p[l] = __fadd_rn(p[l], fabsf(w[(i + l) * N + j]));
#pragma unroll
  for (int width = 8; width >= 1; width /= 2)
#pragma unroll
    for (int l = 0; l < width; ++l) p[l] = __fadd_rn(p[l], p[l + width]);
  const float mean = __fdiv_rn(p[0], static_cast<float>(K));
  step[j] = __fdiv_rn(__fadd_rn(mean, mean), sqrt_qmax);
}

__global__ void ChunkSumSqKernel(const DeviceLeafChunk* chunks, int64_t n, float* sums) {
  const int64_t c = MyRow();
  const bool live = c < n;
  const DeviceLeafChunk ch = chunks[live ? c : 0];
  const float s = HalfWarpSumSq(ch.data, live ? ch.count : 0);
  if (live && (threadIdx.x & 15u) == 0) sums[c] = s;
}

}  // namespace

void LaunchChunkSumSqs(const DeviceLeafChunk* chunks, int64_t n, float* sums) {
  if (n > 0) ChunkSumSqKernel<<<RowBlocks(n), kRowThreads>>>(chunks, n, sums);
}

void LaunchRmsNormForward(const float* x, const float* gain, float eps, float inv_d, int64_t rows,
                          int64_t d, float* y, float* rstd) {
  if (rows > 0)
    RmsNormForwardKernel<<<RowBlocks(rows), kRowThreads>>>(x, gain, eps, inv_d, rows, d, y, rstd);
}
void LaunchRmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                           float inv_d, int64_t rows, int64_t d, float* dx) {
  if (rows > 0)
    RmsNormBackwardKernel<<<RowBlocks(rows), kRowThreads>>>(dy, x, gain, rstd, inv_d, rows, d, dx);
}
void LaunchRmsNormGain(const float* dy, const float* x, const float* rstd, int64_t rows, int64_t d,
                       float* dgain) {
  if (d > 0)
    RmsNormGainKernel<<<static_cast<unsigned>((d + 127) / 128), 128>>>(dy, x, rstd, rows, d, dgain);
}
void LaunchCrossEntropyRows(const float* logits, const int32_t* targets, int64_t rows,
                            int64_t vocab, int32_t ignore_index, float* lse, float* nll,
                            float* lse_sq) {
  if (rows > 0)
    CrossEntropyRowsKernel<<<RowBlocks(rows), kRowThreads>>>(logits, targets, rows, vocab,
                                                             ignore_index, lse, nll, lse_sq);
}
void LaunchCrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                                int64_t rows, int64_t vocab, int32_t ignore_index, float grad_scale,
                                float z2, float* dlogits) {
  if (rows == 0 || vocab == 0) return;
  const dim3 grid(static_cast<unsigned>((vocab + 255) / 256),
                  static_cast<unsigned>(rows < 65535 ? rows : 65535));
  CrossEntropyBackwardKernel<<<grid, 256>>>(logits, targets, lse, rows, vocab, ignore_index,
                                            grad_scale, z2, dlogits);
}
void LaunchSum(const float* x, int64_t n, float* out) { SumKernel<<<1, 32>>>(x, n, out, false); }
void LaunchSumSq(const float* x, int64_t n, float* out) { SumKernel<<<1, 32>>>(x, n, out, true); }
void LaunchWeightStepSizes(const float* w, int64_t K, int64_t N, float sqrt_qmax, float* step) {
  if (N > 0)
    WeightStepKernel<<<static_cast<unsigned>((N + 127) / 128), 128>>>(w, K, N, sqrt_qmax, step);
}

}  // namespace trail::repops::cuda
