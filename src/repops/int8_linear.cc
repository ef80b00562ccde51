#include "repops/int8_linear.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "repops/gemm.h"
#include "repops/kernels.h"
#include "repops/parallel.h"
#include "repops/quantize.h"

namespace trail::repops {
namespace {

// float(√127), rounded once; the divisor of the step-size rule.
const float kSqrtQMax = static_cast<float>(std::sqrt(static_cast<double>(kInt8QMax)));

template <class T>
T* Grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// Column j of w [K, N] into col [K], and its step size.
float GatherColumnStep(const float* w, int64_t K, int64_t N, int64_t j, float* col,
                       float* abs_col) {
  for (int64_t p = 0; p < K; ++p) {
    col[p] = w[p * N + j];
    abs_col[p] = std::fabs(col[p]);
  }
  const float mean = ActiveKernels().sum(abs_col, static_cast<size_t>(K)) / static_cast<float>(K);
  return (mean + mean) / kSqrtQMax;
}

// An int8 GEMM's int32 sums cannot overflow: |Σ| <= n·127².
void CheckReduction(int64_t n) {
  TRAIL_CHECK(n <= (int64_t{1} << 31) / (kInt8QMax * kInt8QMax), "int8 linear: a reduction over ",
              n, " elements could overflow its int32 sum; at most 133144 are supported");
}

// Whether W[p,j] lies outside the quantizer's range (the STE passes no gradient there).
bool Clipped(float w, float step) {
  const float v = w / step;
  return std::fabs(v) > static_cast<float>(kInt8QMax);  // false for NaN
}

// out [cols, rows] = in [rows, cols] transposed.
void TransposeI8(const int8_t* in, int64_t rows, int64_t cols, int8_t* out) {
  ForEachRow(cols, [&](int64_t c) {
    for (int64_t r = 0; r < rows; ++r) out[c * rows + r] = in[r * cols + c];
  });
}

}  // namespace

int8_t QuantizeValue(float x, float scale) {
  const float v = x / scale;
  if (v != v) return 0;
  const float r = std::nearbyint(v);  // the contract's rounding mode: nearest, ties to even
  const float lim = static_cast<float>(kInt8QMax);
  return static_cast<int8_t>(r > lim ? lim : (r < -lim ? -lim : r));
}

void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
  ForEachRow(N, [&](int64_t j) {
    thread_local std::vector<float> col, abs_col;
    step[j] = GatherColumnStep(w, K, N, j, Grow(col, K), Grow(abs_col, K));
  });
}

void QuantizeRowsAbsmax(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  ForEachRow(M, [&](int64_t i) {
    const float* xi = x + i * K;
    float m = 0.0f;
    for (int64_t p = 0; p < K; ++p) m = Max2(m, std::fabs(xi[p]));
    const float s = m / static_cast<float>(kInt8QMax);
    scale[i] = s;
    for (int64_t p = 0; p < K; ++p) q[i * K + p] = QuantizeValue(xi[p], s);
  });
}

void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                    QuantizedWeight& out) {
  TRAIL_CHECK(K > 0 && N > 0, "int8 quantization of a ", K, "x", N, " weight");
  out.K = K, out.N = N;
  out.step.resize(N), out.qt.resize(K * N);
  ForEachRow(N, [&](int64_t j) {
    thread_local std::vector<float> col, abs_col;
    float* c = Grow(col, K);
    const float s = GatherColumnStep(w, K, N, j, c, Grow(abs_col, K));
    out.step[j] = s;
    for (int64_t p = 0; p < K; ++p) out.qt[j * K + p] = QuantizeValue(c[p], s);
  });
  if (backward == Int8Backward::kInt8) {
    out.q.resize(K * N);
    TransposeI8(out.qt.data(), N, K, out.q.data());
  } else {
    out.dequant.resize(K * N);
    ForEachRow(K, [&](int64_t p) {
      for (int64_t j = 0; j < N; ++j)
        out.dequant[p * N + j] = static_cast<float>(out.qt[j * K + p]) * out.step[j];
    });
  }
}

void QuantizeInput(const float* x, int64_t M, int64_t K, QuantizedInput& out) {
  out.M = M, out.K = K;
  Grow(out.q, M * K), Grow(out.scale, M);
  QuantizeRowsAbsmax(x, M, K, out.q.data(), out.scale.data());
}

void Int8LinearForward(const QuantizedInput& x, const QuantizedWeight& w, Int8Scratch& s,
                       float* y) {
  TRAIL_CHECK(x.K == w.K, "int8 linear: input width ", x.K, " against weight rows ", w.K);
  CheckReduction(w.K);
  int32_t* acc = Grow(s.acc, x.M * w.N);
  ActiveKernels().gemm_i8({x.M, w.N, w.K, x.q.data(), w.qt.data(), acc});
  DequantizeI32(acc, x.scale.data(), w.step.data(), x.M, w.N, y);
}

void Int8LinearBackwardInput(const float* dy, int64_t M, const QuantizedWeight& w,
                             Int8Backward backward, Int8Scratch& s, float* dx, bool accumulate) {
  const int64_t K = w.K, N = w.N;
  if (backward == Int8Backward::kFp32) {
    MatMulBT(dy, w.dequant.data(), dx, M, N, K, accumulate);
    return;
  }
  // g = dY·diag(s), quantized per token; dX = u ⊙ (qg·qwᵀ).
  CheckReduction(N);
  float* g = Grow(s.f, M * N);
  ForEachRow(M, [&](int64_t t) {
    for (int64_t j = 0; j < N; ++j) g[t * N + j] = dy[t * N + j] * w.step[j];
  });
  int8_t* qg = Grow(s.a, M * N);
  float* u = Grow(s.scale, M);
  QuantizeRowsAbsmax(g, M, N, qg, u);
  int32_t* acc = Grow(s.acc, M * K);
  ActiveKernels().gemm_i8({M, K, N, qg, w.q.data(), acc});
  ForEachRow(M, [&](int64_t t) {
    for (int64_t p = 0; p < K; ++p) {
      const float v = static_cast<float>(acc[t * K + p]) * u[t];
      dx[t * K + p] = accumulate ? dx[t * K + p] + v : v;
    }
  });
}

void Int8LinearBackwardWeight(const QuantizedInput& x, const float* dy, const float* w,
                              const QuantizedWeight& qw, Int8Backward backward, Int8Scratch& s,
                              float* dw) {
  const int64_t M = x.M, K = qw.K, N = qw.N;
  TRAIL_CHECK(x.K == K, "int8 linear: input width ", x.K, " against weight rows ", K);
  if (backward == Int8Backward::kFp32) {
    float* xd = Grow(s.f, M * K);  // Q(X)
    ForEachRow(M, [&](int64_t t) {
      for (int64_t p = 0; p < K; ++p)
        xd[t * K + p] = static_cast<float>(x.q[t * K + p]) * x.scale[t];
    });
    MatMulAT(xd, dy, dw, K, M, N);
  } else {
    // hᵀ [N, M] = (diag(r)·dY)ᵀ, quantized per row (= per column of h); qxᵀ [K, M].
    CheckReduction(M);
    float* ht = Grow(s.f, N * M);
    ForEachRow(N, [&](int64_t j) {
      for (int64_t t = 0; t < M; ++t) ht[j * M + t] = x.scale[t] * dy[t * N + j];
    });
    int8_t* qh = Grow(s.a, N * M);
    float* v = Grow(s.scale, N);
    QuantizeRowsAbsmax(ht, N, M, qh, v);
    int8_t* qxt = Grow(s.b, K * M);
    TransposeI8(x.q.data(), M, K, qxt);
    int32_t* acc = Grow(s.acc, K * N);
    ActiveKernels().gemm_i8({K, N, M, qxt, qh, acc});
    ForEachRow(K, [&](int64_t p) {
      for (int64_t j = 0; j < N; ++j) dw[p * N + j] = static_cast<float>(acc[p * N + j]) * v[j];
    });
  }
  ForEachRow(K, [&](int64_t p) {
    for (int64_t j = 0; j < N; ++j)
      if (Clipped(w[p * N + j], qw.step[j])) dw[p * N + j] = 0.0f;
  });
}

}  // namespace trail::repops
