#include "repops/int8_linear.h"

#include <algorithm>
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

// out [cols, rows] = in [rows, cols] transposed, in 64 × 64 blocks (each task a band of out).
void TransposeI8(const int8_t* in, int64_t rows, int64_t cols, int8_t* out) {
  constexpr int64_t kB = 64;
  ForEachRow((cols + kB - 1) / kB, [&](int64_t cb) {
    const int64_t c0 = cb * kB, c1 = std::min(cols, c0 + kB);
    for (int64_t r0 = 0; r0 < rows; r0 += kB) {
      const int64_t r1 = std::min(rows, r0 + kB);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
    }
  });
}

// The weights whose quotient was clamped: only a ±127 can be one, so the division is
// repeated for those alone.
std::vector<int64_t> ClippedWeights(const float* w, const QuantizedWeight& q) {
  std::vector<int64_t> out;
  for (int64_t p = 0; p < q.K; ++p)
    for (int64_t j = 0; j < q.N; ++j) {
      const int8_t v = q.qt[j * q.K + p];
      if ((v == kInt8QMax || v == -kInt8QMax) && Clipped(w[p * q.N + j], q.step[j]))
        out.push_back(p * q.N + j);
    }
  return out;
}

// dstep[j] = (Σ_p dŴ[p,j]·e[p,j]) · (1/√(K·127)), p ascending (int8_linear.h).
void LsqStepGradient(const float* dw, const float* w, const QuantizedWeight& qw, float* dstep) {
  const int64_t K = qw.K, N = qw.N;
  const float lim = static_cast<float>(kInt8QMax);
  const float g = static_cast<float>(1.0 / std::sqrt(static_cast<double>(K) * kInt8QMax));
  ForEachRow(N, [&](int64_t j) {
    const float s = qw.step[j];
    float acc = 0.0f;
    for (int64_t p = 0; p < K; ++p) {
      const float q = static_cast<float>(qw.qt[j * K + p]);
      const float v = w[p * N + j] / s;
      const float e = std::fabs(v) > lim ? q : (v != v ? 0.0f : q - v);
      acc = acc + dw[p * N + j] * e;
    }
    dstep[j] = acc * g;
  });
}

}  // namespace

int8_t QuantizeValue(float x, float scale) {
  int8_t q;
  ActiveKernels().quantize_i8(&x, 1, scale, &q);
  return q;
}

void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
  ForEachRow(N, [&](int64_t j) {
    thread_local std::vector<float> col, abs_col;
    step[j] = GatherColumnStep(w, K, N, j, Grow(col, K), Grow(abs_col, K));
  });
}

void QuantizeRowsAbsmax(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  const Kernels& k = ActiveKernels();
  ForEachRow(M, [&](int64_t i) {
    const float s = k.abs_max(x + i * K, static_cast<size_t>(K)) / static_cast<float>(kInt8QMax);
    scale[i] = s;
    k.quantize_i8(x + i * K, static_cast<size_t>(K), s, q + i * K);
  });
}

void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                    QuantizedWeight& out, const float* learned_step) {
  TRAIL_CHECK(K > 0 && N > 0, "int8 quantization of a ", K, "x", N, " weight");
  out.K = K, out.N = N;
  out.step.resize(N), out.qt.resize(K * N);
  ForEachRow(N, [&](int64_t j) {
    thread_local std::vector<float> col, abs_col;
    float* c = Grow(col, K);
    const float formula = GatherColumnStep(w, K, N, j, c, Grow(abs_col, K));
    const float s = learned_step != nullptr ? learned_step[j] : formula;
    out.step[j] = s;
    ActiveKernels().quantize_i8(c, static_cast<size_t>(K), s, out.qt.data() + j * K);
  });
  out.clipped = ClippedWeights(w, out);
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
  out.M = M, out.K = K, out.qt_ready = false;
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

void Int8LinearBackwardWeight(QuantizedInput& x, const float* dy, const QuantizedWeight& qw,
                              Int8Backward backward, Int8Scratch& s, float* dw, const float* w,
                              float* dstep) {
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
    constexpr int64_t kB = 64;  // 64 × 64 blocks: both sides stay in cache
    ForEachRow((N + kB - 1) / kB, [&](int64_t jb) {
      const int64_t j0 = jb * kB, j1 = std::min(N, j0 + kB);
      for (int64_t t0 = 0; t0 < M; t0 += kB) {
        const int64_t t1 = std::min(M, t0 + kB);
        for (int64_t j = j0; j < j1; ++j)
          for (int64_t t = t0; t < t1; ++t) ht[j * M + t] = x.scale[t] * dy[t * N + j];
      }
    });
    int8_t* qh = Grow(s.a, N * M);
    float* v = Grow(s.scale, N);
    QuantizeRowsAbsmax(ht, N, M, qh, v);
    if (!x.qt_ready) {  // the layers that share this input (q, k, v; gate, up) reuse it
      TransposeI8(x.q.data(), M, K, Grow(x.qt, K * M));
      x.qt_ready = true;
    }
    int32_t* acc = Grow(s.acc, K * N);
    ActiveKernels().gemm_i8({K, N, M, x.qt.data(), qh, acc});
    ForEachRow(K, [&](int64_t p) {
      for (int64_t j = 0; j < N; ++j) dw[p * N + j] = static_cast<float>(acc[p * N + j]) * v[j];
    });
  }
  if (dstep != nullptr) {
    TRAIL_CHECK(w != nullptr, "int8 linear: the step-size gradient needs the weight");
    LsqStepGradient(dw, w, qw, dstep);
  }
  for (int64_t i : qw.clipped) dw[i] = 0.0f;
}

}  // namespace trail::repops
