// The portable scalar reference path: each primitive written plainly, in the canonical order of
// kernels.h, one IEEE binary32 operation at a time. It defines the bits every SIMD target must
// reproduce, and it is a backend in its own right (TRAIL_SIMD_TARGET=reference).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "repops/kernels.h"
#include "repops/math.h"

namespace trail::repops {
namespace {

constexpr size_t kLanes = 16;

template <class Step>
float Reduce(size_t n, float init, Step step, bool is_max) {
  float p[kLanes];
  std::fill(p, p + kLanes, init);
  for (size_t i = 0; i < n; ++i) p[i % kLanes] = step(p[i % kLanes], i);
  for (size_t w = kLanes / 2; w >= 1; w /= 2)
    for (size_t l = 0; l < w; ++l) p[l] = is_max ? Max2(p[l], p[l + w]) : p[l] + p[l + w];
  return p[0];
}

float Sum(const float* x, size_t n) {
  return Reduce(
      n, 0.0f, [&](float p, size_t i) { return p + x[i]; }, false);
}
float SumSq(const float* x, size_t n) {
  return Reduce(
      n, 0.0f, [&](float p, size_t i) { return std::fma(x[i], x[i], p); }, false);
}
float Dot(const float* x, const float* y, size_t n) {
  return Reduce(
      n, 0.0f, [&](float p, size_t i) { return std::fma(x[i], y[i], p); }, false);
}
float Max(const float* x, size_t n) {
  return Reduce(
      n, -HUGE_VALF, [&](float p, size_t i) { return Max2(p, x[i]); }, true);
}
void Axpy(float a, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

float Apply(MathFn fn, float v) {
  switch (fn) {
    case MathFn::kExp:
      return Exp(v);
    case MathFn::kLog:
      return Log(v);
    case MathFn::kTanh:
      return Tanh(v);
    case MathFn::kSigmoid:
      return Sigmoid(v);
    case MathFn::kSin:
      return Sin(v);
    case MathFn::kCos:
      return Cos(v);
  }
  return NAN;
}
void MapAll(MathFn fn, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Apply(fn, x[i]);
}
void ExpSub(const float* x, float shift, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Exp(x[i] - shift);
}

void Gemm(const GemmArgs& g) {
  KernelPool().ParallelFor(static_cast<size_t>(g.M), [&](size_t i) {
    float* c = g.c + i * g.ldc;
    if (!g.accumulate) std::fill(c, c + g.N, 0.0f);
    for (int64_t p = 0; p < g.K; ++p) {
      const float a = g.a[i * g.a_rs + p * g.a_cs];
      for (int64_t j = 0; j < g.N; ++j) c[j] = std::fma(a, g.b[p * g.b_rs + j * g.b_cs], c[j]);
    }
  });
}

void GemmI8(const GemmI8Args& g) {
  if (g.out != nullptr) return GemmI8ThroughScratch(g, &GemmI8);
  for (int64_t i = 0; i < g.M; ++i)
    for (int64_t j = 0; j < g.N; ++j) {
      int32_t acc = 0;
      for (int64_t p = 0; p < g.K; ++p) acc += int32_t{g.a[i * g.K + p]} * int32_t{g.B(p, j)};
      g.c[i * g.N + j] = acc;
    }
}

float AbsMax(const float* x, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return std::numeric_limits<float>::quiet_NaN();
    m = std::max(m, std::fabs(x[i]));
  }
  return m;
}

void QuantizeI8(const float* x, const float* scale, const float* /*inv_scale*/, size_t scale_step,
                size_t n, int8_t* q) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i] / scale[i * scale_step];
    q[i] = v != v ? 0 : static_cast<int8_t>(std::nearbyint(std::clamp(v, -127.0f, 127.0f)));
  }
}

void MulAdd(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::fma(a[i], b[i], y[i]);
}
void AbsMaxUpdate(const float* x, float r, float* m, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float a = std::fabs(r * x[i]);
    if (a > m[i] || a != a) m[i] = a;
  }
}
void Mul(const float* a, const float* b, size_t b_step, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i * b_step];
}
void GeluAll(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Gelu(x[i]);
}
void GeluBackwardAll(const float* dy, const float* x, float* dx, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * GeluGrad(x[i]);
}

}  // namespace

const Kernels& ReferenceKernels() {
  static const Kernels k = {.name = "reference",
                            .sum = &Sum,
                            .sum_sq = &SumSq,
                            .dot = &Dot,
                            .max = &Max,
                            .axpy = &Axpy,
                            .map = &MapAll,
                            .exp_sub = &ExpSub,
                            .gemm = &Gemm,
                            .gemm_i8 = &GemmI8,
                            .gemm_i8_kernel = [] { return "scalar"; },
                            .abs_max = &AbsMax,
                            .quantize_i8 = &QuantizeI8,
                            .gelu = &GeluAll,
                            .gelu_backward = &GeluBackwardAll,
                            .mul_add = &MulAdd,
                            .abs_max_update = &AbsMaxUpdate,
                            .mul = &Mul};
  return k;
}

}  // namespace trail::repops
