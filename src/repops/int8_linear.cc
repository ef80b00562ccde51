#include "repops/int8_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

// m[j] = AbsMax over t of r[t]·dy[t, j] (the largest magnitude, or the default quiet NaN when
// any product is NaN), for 256 columns at a time over contiguous stretches of the rows.
void ColumnAbsMaxOfScaledRows(const float* dy, const float* r, int64_t M, int64_t N, float* m) {
  constexpr int64_t kCols = 256;
  const Kernels& k = ActiveKernels();
  ForEachRow((N + kCols - 1) / kCols, [&](int64_t b) {
    const int64_t j0 = b * kCols, n = std::min(kCols, N - j0);
    float mx[kCols] = {};
    for (int64_t t = 0; t < M; ++t) k.abs_max_update(dy + t * N + j0, r[t], mx, n);
    for (int64_t j = 0; j < n; ++j)
      m[j0 + j] = mx[j] != mx[j] ? std::numeric_limits<float>::quiet_NaN() : mx[j];
  });
}

// s[j] for the columns of w [K, N]: the canonical Sum of |w[:, j]| (16 lane-strided partials,
// then the fixed tree; docs/repops.md §2), computed for 64 columns at once so every read is a
// contiguous stretch of a row.
void ColumnStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  constexpr int64_t kCols = 64, kLanes = 16;
  ForEachRow((N + kCols - 1) / kCols, [&](int64_t b) {
    const int64_t j0 = b * kCols, n = std::min(kCols, N - j0);
    float part[kLanes][kCols] = {};
    for (int64_t i = 0; i < K; ++i) {
      float* pr = part[i % kLanes];
      const float* row = w + i * N + j0;
      if (n == kCols) {  // a constant trip count: vectorized
        for (int64_t j = 0; j < kCols; ++j) pr[j] = pr[j] + std::fabs(row[j]);
      } else {
        for (int64_t j = 0; j < n; ++j) pr[j] = pr[j] + std::fabs(row[j]);
      }
    }
    for (int64_t width = kLanes / 2; width >= 1; width /= 2)
      for (int64_t l = 0; l < width; ++l)
        for (int64_t j = 0; j < n; ++j) part[l][j] = part[l][j] + part[l + width][j];
    for (int64_t j = 0; j < n; ++j) {
      const float mean = part[0][j] / static_cast<float>(K);
      step[j0 + j] = (mean + mean) / kSqrtQMax;
    }
  });
}

// One row: *scale = AbsMax(x) / 127, q = Q(x, *scale).
void QuantizeRowAbsmax(const float* x, int64_t n, int8_t* q, float* scale) {
  const Kernels& k = ActiveKernels();
  *scale = k.abs_max(x, static_cast<size_t>(n)) / static_cast<float>(kInt8QMax);
  k.quantize_i8(x, scale, 0, static_cast<size_t>(n), q);
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

// The 8 × 8 bytes at in (row stride in_rs) transposed to out (row stride out_rs): eight rows as
// 64-bit words, then three rounds that swap 1-, 2- and 4-byte blocks between row pairs.
inline void Transpose8x8(const int8_t* in, int64_t in_rs, int8_t* out, int64_t out_rs) {
  uint64_t r[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], in + i * in_rs, 8);
  constexpr uint64_t kMask[3] = {0x00FF00FF00FF00FFull, 0x0000FFFF0000FFFFull,
                                 0x00000000FFFFFFFFull};
  for (int round = 0, step = 1; round < 3; ++round, step *= 2) {
    const int shift = 8 * step;
    for (int i = 0; i < 8; ++i) {
      if (i & step) continue;
      uint64_t& a = r[i];
      uint64_t& b = r[i + step];
      const uint64_t t = ((a >> shift) ^ b) & kMask[round];
      b ^= t;
      a ^= t << shift;
    }
  }
  for (int i = 0; i < 8; ++i) std::memcpy(out + i * out_rs, &r[i], 8);
}

// out [cols, rows] = in [rows, cols] transposed, in 64 × 64 blocks of 8 × 8 tiles (each task a
// band of out); the edges that do not fill a tile element by element.
void TransposeI8(const int8_t* in, int64_t rows, int64_t cols, int8_t* out) {
  constexpr int64_t kB = 64;
  ForEachRow((cols + kB - 1) / kB, [&](int64_t cb) {
    const int64_t c0 = cb * kB, c1 = std::min(cols, c0 + kB);
    for (int64_t r0 = 0; r0 < rows; r0 += kB) {
      const int64_t r1 = std::min(rows, r0 + kB);
      int64_t c = c0;
      for (; c + 8 <= c1; c += 8) {
        int64_t r = r0;
        for (; r + 8 <= r1; r += 8) Transpose8x8(in + r * cols + c, cols, out + c * rows + r, rows);
        for (; r < r1; ++r)
          for (int64_t cc = c; cc < c + 8; ++cc) out[cc * rows + r] = in[r * cols + cc];
      }
      for (; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
    }
  });
}

// The weights whose quotient was clamped: only a ±127 can be one, so the division is
// repeated for those alone.
// Whether any of the 8 bytes at q is +127 (0x7F) or -127 (0x81): a byte of x ^ pattern is zero
// exactly there, and (v - 0x01..) & ~v & 0x80.. is non-zero iff some byte of v is zero.
bool HasByte127(const int8_t* q) {
  uint64_t x;
  std::memcpy(&x, q, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [&](uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
  return has_zero(x ^ (kOnes * 0x7F)) || has_zero(x ^ (kOnes * 0x81));
}

std::vector<int64_t> ClippedWeights(const float* w, const QuantizedWeight& q) {
  // Rows in parallel (a clipped weight is rare: most rows list none), joined in row order.
  std::vector<std::vector<int64_t>> per_row(static_cast<size_t>(q.K));
  ForEachRow(q.K, [&](int64_t p) {
    const int8_t* row = q.q.data() + p * q.N;
    for (int64_t j0 = 0; j0 < q.N; j0 += 8) {
      const int64_t n = std::min<int64_t>(8, q.N - j0);
      if (n == 8 && !HasByte127(row + j0)) continue;  // most words: no ±127 at all
      for (int64_t j = j0; j < j0 + n; ++j)
        if ((row[j] == kInt8QMax || row[j] == -kInt8QMax) && Clipped(w[p * q.N + j], q.step[j]))
          per_row[p].push_back(p * q.N + j);
    }
  });
  std::vector<int64_t> out;
  for (const auto& r : per_row) out.insert(out.end(), r.begin(), r.end());
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
      const float q = static_cast<float>(qw.q[p * N + j]);
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
  ActiveKernels().quantize_i8(&x, &scale, 0, 1, &q);
  return q;
}

void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
  ColumnStepSizes(w, K, N, step);
}

void QuantizeRowsAbsmax(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  ForEachRow(M, [&](int64_t i) { QuantizeRowAbsmax(x + i * K, K, q + i * K, scale + i); });
}

void QuantizeWeight(const float* w, int64_t K, int64_t N, Int8Backward backward,
                    QuantizedWeight& out, const float* learned_step) {
  TRAIL_CHECK(K > 0 && N > 0, "int8 quantization of a ", K, "x", N, " weight");
  out.K = K, out.N = N;
  out.step.resize(N), out.q.resize(K * N);
  if (learned_step != nullptr) {
    std::copy(learned_step, learned_step + N, out.step.begin());
  } else {
    ColumnStepSizes(w, K, N, out.step.data());
  }
  // Row by row into q [K, N], the layout every product reads it in.
  const float* s = out.step.data();
  const Kernels& k = ActiveKernels();
  ForEachRow(K, [&](int64_t p) {
    k.quantize_i8(w + p * N, s, 1, static_cast<size_t>(N), out.q.data() + p * N);
  });
  out.clipped = ClippedWeights(w, out);
  if (backward == Int8Backward::kFp32) {
    out.dequant.resize(K * N);
    ForEachRow(K, [&](int64_t p) {
      for (int64_t j = 0; j < N; ++j)
        out.dequant[p * N + j] = static_cast<float>(out.q[p * N + j]) * s[j];
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
  // y = (float(acc)·r_t)·s_j, applied by the GEMM as each output tile is finished.
  ActiveKernels().gemm_i8({.M = x.M, .N = w.N, .K = w.K, .a = x.q.data(),
                           .c = Grow(s.acc, x.M * w.N), .b = w.q.data(), .out = y,
                           .row_scale = x.scale.data(), .col_scale = w.step.data()});
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
  int8_t* qg = Grow(s.a, M * N);
  float* u = Grow(s.scale, M);
  ForEachRow(M, [&](int64_t t) {  // each row quantized while it is still in cache
    float* gt = g + t * N;
    for (int64_t j = 0; j < N; ++j) gt[j] = dy[t * N + j] * w.step[j];
    QuantizeRowAbsmax(gt, N, qg + t * N, u + t);
  });
  // dx = float(acc)·u_t (added to dx with accumulate), applied by the GEMM per output tile.
  ActiveKernels().gemm_i8({.M = M, .N = K, .K = N, .a = qg, .bt = w.q.data(),
                           .c = Grow(s.acc, M * K), .out = dx, .row_scale = u,
                           .accumulate = accumulate});
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
    // h = diag(r)·dY, quantized per column: the scales from column maxima taken over whole
    // rows, then h row by row. (Computed twice, h[t, j] is the same rounded product.)
    CheckReduction(M);
    float* v = Grow(s.scale, N);
    ColumnAbsMaxOfScaledRows(dy, x.scale.data(), M, N, v);
    for (int64_t j = 0; j < N; ++j) v[j] = v[j] / static_cast<float>(kInt8QMax);
    int8_t* qh = Grow(s.a, M * N);  // [M, N]: the GEMM reads B as is
    const Kernels& k = ActiveKernels();
    ForEachRow(M, [&](int64_t t) {
      thread_local std::vector<float> h;
      float* ht = Grow(h, N);
      for (int64_t j = 0; j < N; ++j) ht[j] = x.scale[t] * dy[t * N + j];
      k.quantize_i8(ht, v, 1, static_cast<size_t>(N), qh + t * N);
    });
    if (!x.qt_ready) {  // the layers that share this input (q, k, v; gate, up) reuse it
      TransposeI8(x.q.data(), M, K, Grow(x.qt, K * M));
      x.qt_ready = true;
    }
    // dw = float(acc)·v_j, applied by the GEMM per output tile.
    ActiveKernels().gemm_i8({.M = K, .N = N, .K = M, .a = x.qt.data(), .c = Grow(s.acc, K * N),
                             .b = qh, .out = dw, .col_scale = v});
  }
  if (dstep != nullptr) {
    TRAIL_CHECK(w != nullptr, "int8 linear: the step-size gradient needs the weight");
    LsqStepGradient(dw, w, qw, dstep);
  }
  for (int64_t i : qw.clipped) dw[i] = 0.0f;
}

}  // namespace trail::repops
