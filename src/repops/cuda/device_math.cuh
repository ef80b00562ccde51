// Device-side arithmetic of the CUDA backend: the policy that runs math_body.inc's elementary
// functions on a GPU, the canonical reductions (docs/repops.md §2) on a half-warp, and Philox.
//
// Every operation is one correctly rounded IEEE operation, written as the intrinsic that says so
// (__fadd_rn, __fmul_rn, __fdiv_rn, __fsqrt_rn, __fmaf_rn), so the bits do not depend on the
// compiler's contraction or fast-math settings (cmake/cuda.cmake turns both off as well).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/philox_rounds.h"

namespace trail::repops::cuda {

struct DeviceOps {
  using V = float;
  using I = int32_t;
  using M = bool;
  __device__ V Set(float c) const { return c; }
  __device__ I SetI(int32_t c) const { return c; }
  __device__ V Add(V a, V b) const { return __fadd_rn(a, b); }
  __device__ V Sub(V a, V b) const { return __fsub_rn(a, b); }
  __device__ V Mul(V a, V b) const { return __fmul_rn(a, b); }
  __device__ V Div(V a, V b) const { return __fdiv_rn(a, b); }
  __device__ V Fma(V a, V b, V c) const { return __fmaf_rn(a, b, c); }
  __device__ V Sqrt(V a) const { return __fsqrt_rn(a); }
  __device__ V Abs(V a) const { return fabsf(a); }
  __device__ V Neg(V a) const { return -a; }
  __device__ M Lt(V a, V b) const { return a < b; }
  __device__ M Gt(V a, V b) const { return a > b; }
  __device__ M Eq(V a, V b) const { return a == b; }
  __device__ M IsNaN(V a) const { return a != a; }
  __device__ M Or(M a, M b) const { return a || b; }
  __device__ V Select(M m, V a, V b) const { return m ? a : b; }
  __device__ I SelectI(M m, I a, I b) const { return m ? a : b; }
  __device__ V CopySignFrom(V magnitude, V sign) const { return copysignf(magnitude, sign); }
  __device__ I ToInt(V a) const { return __float2int_rz(a); }  // integral values: exact
  __device__ V ToFloat(I a) const { return __int2float_rn(a); }
  __device__ I AsInt(V a) const { return __float_as_int(a); }
  __device__ V AsFloat(I i) const { return __int_as_float(i); }
  __device__ I AddI(I a, I b) const {
    return static_cast<I>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  }
  __device__ I SubI(I a, I b) const {
    return static_cast<I>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
  }
  __device__ I AndI(I a, I b) const { return a & b; }
  template <int kBits>
  __device__ I ShlI(I a) const {
    return static_cast<I>(static_cast<uint32_t>(a) << kBits);
  }
  template <int kBits>
  __device__ I SarI(I a) const {
    return a >> kBits;
  }
  __device__ M EqI(I a, I b) const { return a == b; }
};

#define TRAIL_MATH_FN __device__ __forceinline__
#include "repops/math_body.inc"
#undef TRAIL_MATH_FN

__device__ __forceinline__ float DevExp(float x) { return ExpT(DeviceOps{}, x); }
__device__ __forceinline__ float DevLog(float x) { return LogT(DeviceOps{}, x); }
__device__ __forceinline__ float DevSigmoid(float x) { return SigmoidT(DeviceOps{}, x); }
__device__ __forceinline__ float DevGelu(float x) { return GeluT(DeviceOps{}, x); }
__device__ __forceinline__ float DevGeluGrad(float x) { return GeluGradT(DeviceOps{}, x); }
__device__ __forceinline__ float DevCos(float x) {
  float s, c;
  SinCosT(DeviceOps{}, x, &s, &c);
  return c;
}

// Max2 of the spec: (b > a or b is NaN) ? b : a.
__device__ __forceinline__ float Max2(float a, float b) { return (b > a || b != b) ? b : a; }

// The canonical reductions over x[0..n) run by the 16 lanes of a half-warp (lane = threadIdx.x
// mod 16; all 32 lanes of the warp call it together, each half-warp with its own row): lane l
// accumulates p[l] over i ≡ l (mod 16) in ascending order, then the fixed tree p[l] = p[l] ⊕ p[l +
// w] for w = 8, 4, 2, 1. Every lane returns p[0]. `load(i)` gives element i; `step(p, i)` is the
// per-element ⊕.
template <class Step>
__device__ __forceinline__ float HalfWarpReduce(int64_t n, float init, Step step, bool max) {
  const unsigned lane = threadIdx.x & 15u;
  float p = init;
  for (int64_t i = lane; i < n; i += 16) p = step(p, i);
  constexpr unsigned mask = 0xFFFFFFFFu;
  for (int w = 8; w >= 1; w /= 2) {
    const float other = __shfl_down_sync(mask, p, w, 16);
    if (lane < static_cast<unsigned>(w)) p = max ? Max2(p, other) : __fadd_rn(p, other);
  }
  return __shfl_sync(mask, p, 0, 16);
}
__device__ __forceinline__ float HalfWarpSum(const float* x, int64_t n) {
  return HalfWarpReduce(
      n, 0.0f, [&](float p, int64_t i) { return __fadd_rn(p, x[i]); }, false);
}
__device__ __forceinline__ float HalfWarpMax(const float* x, int64_t n) {
  return HalfWarpReduce(
      n, -HUGE_VALF, [&](float p, int64_t i) { return Max2(p, x[i]); }, true);
}
__device__ __forceinline__ float HalfWarpSumSq(const float* x, int64_t n) {
  return HalfWarpReduce(
      n, 0.0f, [&](float p, int64_t i) { return __fmaf_rn(x[i], x[i], p); }, false);
}

// Philox4x32-10: the CPU's rounds (core/philox_rounds.h).
struct PhiloxOut {
  uint32_t w[4];
};
__device__ __forceinline__ PhiloxOut DevPhilox(uint64_t seed, uint64_t stream, uint64_t index) {
  PhiloxOut out;
  PhiloxRounds(seed, stream, index, out.w);
  return out;
}

}  // namespace trail::repops::cuda
