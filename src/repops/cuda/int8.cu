// The int8 QAT layers' elementwise and row kernels (docs/repops.md, "int8 linear layers"):
// quantization, scales, dequantization and the step-size gradient. Maxima are exact, so their
// order is free; every other value is the spec's expression, one rounded operation at a time.
#include "repops/cuda/device_math.cuh"
#include "repops/cuda/for_each.cuh"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

constexpr float kQMax = 127.0f;

// Q(x, s) = clamp(RoundHalfEven(x / s), -127, 127) with the float32 quotient; 0 when it is NaN.
__device__ __forceinline__ int8_t Quantize(float x, float s) {
  const float v = __fdiv_rn(x, s);
  if (v != v) return 0;
  return static_cast<int8_t>(__float2int_rn(fminf(fmaxf(v, -kQMax), kQMax)));
}
// AbsMax's ⊕: the larger magnitude, a NaN taken and kept.
__device__ __forceinline__ float AbsMaxStep(float m, float x) { return Max2(m, fabsf(x)); }
// AbsMax's result: the default quiet NaN when any element was NaN.
__device__ __forceinline__ float AbsMaxResult(float m) {
  return m != m ? __int_as_float(0x7FC00000) : m;
}

// Row t (one half-warp): g = x[t, :]·col_mul (or x itself), scale[t] = AbsMax(g) / 127,
// q[t, :] = Q(g, scale[t]); g is recomputed for the second pass (the same rounded product).
__global__ void QuantizeRowsKernel(const float* x, int64_t M, int64_t K, const float* col_mul,
                                   int8_t* q, float* scale) {
  const int64_t t = blockIdx.x * int64_t{16} + threadIdx.x / 16;
  const bool live = t < M;
  const float* xr = x + (live ? t : 0) * K;
  auto g = [&](int64_t j) { return col_mul ? __fmul_rn(xr[j], col_mul[j]) : xr[j]; };
  const float m = HalfWarpReduce(
      live ? K : 0, 0.0f, [&](float p, int64_t j) { return AbsMaxStep(p, g(j)); }, true);
  if (!live) return;
  const float s = __fdiv_rn(AbsMaxResult(m), kQMax);
  if ((threadIdx.x & 15u) == 0) scale[t] = s;
  for (int64_t j = threadIdx.x & 15u; j < K; j += 16) q[t * K + j] = Quantize(g(j), s);
}

// v[j] = AbsMax over t of (r[t]·dy[t, j]), over 127: one thread a column.
__global__ void ColumnScalesKernel(const float* dy, const float* r, int64_t M, int64_t N,
                                   float* v) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= N) return;
  float m = 0.0f;
  for (int64_t t = 0; t < M; ++t) m = AbsMaxStep(m, __fmul_rn(dy[t * N + j], r[t]));
  v[j] = __fdiv_rn(AbsMaxResult(m), kQMax);
}

// dstep[j] = (Σ_p dŴ[p,j]·e[p,j])·g over p ascending, e = q − w/s inside the range, q where
// clipped, 0 where w/s is NaN; one rounded product and one rounded addition a term.
__global__ void LsqStepKernel(const float* dw, const float* w, const int8_t* q, const float* step,
                              int64_t K, int64_t N, float g, float* dstep) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= N) return;
  const float s = step[j];
  float acc = 0.0f;
  for (int64_t p = 0; p < K; ++p) {
    const float qf = static_cast<float>(q[p * N + j]);
    const float v = __fdiv_rn(w[p * N + j], s);
    const float e = fabsf(v) > kQMax ? qf : (v != v ? 0.0f : __fsub_rn(qf, v));
    acc = __fadd_rn(acc, __fmul_rn(dw[p * N + j], e));
  }
  dstep[j] = __fmul_rn(acc, g);
}

unsigned Blocks(int64_t n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

void LaunchQuantizeWeight(const float* w, int64_t K, int64_t N, const float* step, int8_t* q,
                          float* dequant, uint8_t* clip_mask) {
  LaunchForEach(K * N, [=] __device__(int64_t i) {
    const float s = step[i % N];
    const int8_t qi = Quantize(w[i], s);
    q[i] = qi;
    // Clipped: only a ±127 can be, and then when |w/s| > 127 (false for NaN).
    clip_mask[i] = (qi == 127 || qi == -127) && fabsf(__fdiv_rn(w[i], s)) > kQMax;
    if (dequant) dequant[i] = __fmul_rn(static_cast<float>(qi), s);
  });
}

void LaunchQuantizeRows(const float* x, int64_t M, int64_t K, const float* col_mul, int8_t* q,
                        float* scale) {
  if (M > 0) QuantizeRowsKernel<<<Blocks(M, 16), 256>>>(x, M, K, col_mul, q, scale);
}

void LaunchColumnAbsMaxScales(const float* dy, const float* r, int64_t M, int64_t N, float* v) {
  if (N > 0) ColumnScalesKernel<<<Blocks(N, 128), 128>>>(dy, r, M, N, v);
}

void LaunchQuantizeScaledRows(const float* dy, const float* r, const float* v, int64_t M, int64_t N,
                              int8_t* qh) {
  LaunchForEach(
      M * N, [=] __device__(int64_t i) { qh[i] = Quantize(__fmul_rn(dy[i], r[i / N]), v[i % N]); });
}

void LaunchDequantizeRows(const int8_t* q, const float* r, int64_t M, int64_t K, float* out) {
  LaunchForEach(
      M * K, [=] __device__(int64_t i) { out[i] = __fmul_rn(static_cast<float>(q[i]), r[i / K]); });
}

void LaunchLsqStepGradient(const float* dw, const float* w, const int8_t* q, const float* step,
                           int64_t K, int64_t N, float g, float* dstep) {
  if (N > 0) LsqStepKernel<<<Blocks(N, 128), 128>>>(dw, w, q, step, K, N, g, dstep);
}

void LaunchZeroMasked(float* x, const uint8_t* mask, int64_t n) {
  LaunchForEach(n, [=] __device__(int64_t i) {
    if (mask[i]) x[i] = 0.0f;
  });
}

}  // namespace trail::repops::cuda
