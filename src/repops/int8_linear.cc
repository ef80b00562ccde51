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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace trail::repops {
namespace {

// float(√127), rounded once; the divisor of the step-size rule.
const float kSqrtQMax = static_cast<float>(std::sqrt(static_cast<double>(kInt8QMax)));

template <class T, class A>
T* Grow(std::vector<T, A>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// A row of n floats for the calling thread: a row quantized while it is in L1.
float* RowBuffer(int64_t n) {
  thread_local std::vector<float> row;
  return Grow(row, n);
}

// Weights are quantized in blocks of this many columns, each block by one task: its step
// sizes, then its stretch of every row, while the block (K × 64 floats) is still in L2.
constexpr int64_t kWeightBlockCols = 64;

// s[j] for the columns [j0, j0 + n) (n <= 64) of w [K, N]: the canonical Sum of |w[:, j]| (16
// lane-strided partials, then the fixed tree; docs/repops.md §2), computed for the block at
// once so every read is a contiguous stretch of a row.
void BlockStepSizes(const float* w, int64_t K, int64_t N, int64_t j0, int64_t n, float* step) {
  constexpr int64_t kCols = kWeightBlockCols, kLanes = 16;
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
}

void ColumnStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  ForEachRow((N + kWeightBlockCols - 1) / kWeightBlockCols, [&](int64_t b) {
    const int64_t j0 = b * kWeightBlockCols;
    BlockStepSizes(w, K, N, j0, std::min(kWeightBlockCols, N - j0), step);
  });
}

// One row: *scale = AbsMax(x) / 127, q = Q(x, *scale).
void QuantizeRowAbsmax(const Kernels& k, const float* x, int64_t n, int8_t* q, float* scale) {
  *scale = k.abs_max(x, static_cast<size_t>(n)) / static_cast<float>(kInt8QMax);
  k.quantize_i8(x, scale, nullptr, 0, static_cast<size_t>(n), q);
}

// One row's share of the int8 dX: g = dy_row·diag(s), quantized by its absmax (qg_row, *u).
void QuantizeGradientRow(const Kernels& k, const float* dy_row, const float* step, int64_t N,
                         int8_t* qg_row, float* u) {
  float* g = RowBuffer(N);
  k.mul(dy_row, step, 1, g, static_cast<size_t>(N));
  QuantizeRowAbsmax(k, g, N, qg_row, u);
}

// One row's share of the int8 dW: h = r·dy_row, quantized with the column scales v (inv_v
// their reciprocals).
void QuantizeScaledRow(const Kernels& k, const float* dy_row, float r, const float* v,
                       const float* inv_v, int64_t N, int8_t* qh_row) {
  float* h = RowBuffer(N);
  k.mul(dy_row, &r, 0, h, static_cast<size_t>(N));
  k.quantize_i8(h, v, inv_v, 1, static_cast<size_t>(N), qh_row);
}

// inv[j] = 1 / s[j] rounded: what quantize_i8 may multiply by instead of dividing.
std::vector<float>& Reciprocals(const float* s, int64_t n) {
  thread_local std::vector<float> inv;
  inv.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) inv[j] = 1.0f / s[j];
  return inv;
}

// Returns v, v[j] = AbsMax over t of r[t]·dy[t, j] / 127 (the default quiet NaN when any
// product is NaN), in partial's first N floats. Each task keeps running maxima over a
// contiguous stretch of rows (partial: tasks × N floats), merged in task order; a maximum is
// exact, so the split does not change the result. With qg and u, each row's dX share is
// quantized in the same pass (QuantizeGradientRow).
const float* ColumnScalesOfScaledRows(const Kernels& k, const float* dy, const float* r, int64_t M,
                                      int64_t N, std::vector<float>& partial,
                                      const float* step = nullptr, int8_t* qg = nullptr,
                                      float* u = nullptr) {
  ThreadPool& pool = KernelPool();
  const int64_t tasks = std::clamp<int64_t>(2 * static_cast<int64_t>(pool.num_threads()), 1, M);
  partial.assign(static_cast<size_t>(tasks * N), 0.0f);
  float* parts = partial.data();
  pool.ParallelFor(static_cast<size_t>(tasks), [&](size_t task) {
    float* mx = parts + static_cast<int64_t>(task) * N;
    const int64_t t0 = M * static_cast<int64_t>(task) / tasks;
    const int64_t t1 = M * (static_cast<int64_t>(task) + 1) / tasks;
    for (int64_t t = t0; t < t1; ++t) {
      if (qg != nullptr) QuantizeGradientRow(k, dy + t * N, step, N, qg + t * N, u + t);
      k.abs_max_update(dy + t * N, r[t], mx, static_cast<size_t>(N));
    }
  });
  for (int64_t task = 1; task < tasks; ++task)
    k.abs_max_update(parts + task * N, 1.0f, parts, static_cast<size_t>(N));  // |1·m| = m
  for (int64_t j = 0; j < N; ++j) {
    const float m = parts[j] != parts[j] ? std::numeric_limits<float>::quiet_NaN() : parts[j];
    parts[j] = m / static_cast<float>(kInt8QMax);
  }
  return parts;
}

// Whether W[p,j] lies outside the quantizer's range (the STE passes no gradient there).
bool Clipped(float w, float step) {
  const float v = w / step;
  return std::fabs(v) > static_cast<float>(kInt8QMax);  // false for NaN
}

#if defined(__SSE2__)
// The 16 × 16 bytes at in transposed to out: four rounds of unpacking interleave row pairs
// bytewise, then in 2-, 4- and 8-byte units (SSE2, on every x86-64).
inline void Transpose16x16(const int8_t* in, int64_t in_rs, int8_t* out, int64_t out_rs) {
  __m128i a[16], b[16], c[16], d[16];
  for (int i = 0; i < 16; ++i)
    a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * in_rs));
  for (int i = 0; i < 8; ++i) {  // b[2i], b[2i+1]: rows 2i and 2i+1 paired, columns 0-7, 8-15
    b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // c[4g + q]: rows 4g..4g+3 of columns 4q..4q+3
    const __m128i* p = b + 4 * g;
    c[4 * g + 0] = _mm_unpacklo_epi16(p[0], p[2]);
    c[4 * g + 1] = _mm_unpackhi_epi16(p[0], p[2]);
    c[4 * g + 2] = _mm_unpacklo_epi16(p[1], p[3]);
    c[4 * g + 3] = _mm_unpackhi_epi16(p[1], p[3]);
  }
  for (int h = 0; h < 2; ++h) {  // d[8h + m]: rows 8h..8h+7 of columns 2m, 2m+1
    for (int q = 0; q < 4; ++q) {
      d[8 * h + 2 * q] = _mm_unpacklo_epi32(c[8 * h + q], c[8 * h + 4 + q]);
      d[8 * h + 2 * q + 1] = _mm_unpackhi_epi32(c[8 * h + q], c[8 * h + 4 + q]);
    }
  }
  for (int m = 0; m < 8; ++m) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * m * out_rs),
                     _mm_unpacklo_epi64(d[m], d[8 + m]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * m + 1) * out_rs),
                     _mm_unpackhi_epi64(d[m], d[8 + m]));
  }
}
constexpr int64_t kTile = 16;
inline void TransposeTile(const int8_t* in, int64_t in_rs, int8_t* out, int64_t out_rs) {
  Transpose16x16(in, in_rs, out, out_rs);
}
#else
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

constexpr int64_t kTile = 8;
inline void TransposeTile(const int8_t* in, int64_t in_rs, int8_t* out, int64_t out_rs) {
  Transpose8x8(in, in_rs, out, out_rs);
}
#endif

// out [cols, rows] = in [rows, cols] transposed, in 64 × 64 blocks of square tiles (each task a
// band of out); the edges that do not fill a tile element by element.
void TransposeI8(const int8_t* in, int64_t rows, int64_t cols, int8_t* out) {
  constexpr int64_t kB = 64;
  ForEachRow((cols + kB - 1) / kB, [&](int64_t cb) {
    const int64_t c0 = cb * kB, c1 = std::min(cols, c0 + kB);
    for (int64_t r0 = 0; r0 < rows; r0 += kB) {
      const int64_t r1 = std::min(rows, r0 + kB);
      int64_t c = c0;
      for (; c + kTile <= c1; c += kTile) {
        int64_t r = r0;
        for (; r + kTile <= r1; r += kTile)
          TransposeTile(in + r * cols + c, cols, out + c * rows + r, rows);
        for (; r < r1; ++r)
          for (int64_t cc = c; cc < c + kTile; ++cc) out[cc * rows + r] = in[r * cols + cc];
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

// Marks columns [j0, j0 + n) of row p in the clip mask: 1 where the weight is clipped, else 0 (a
// clipped weight is rare: most 8-byte words of q hold no ±127 at all).
void MarkClippedInRow(const float* w, QuantizedWeight& q, int64_t p, int64_t j0, int64_t n) {
  const int8_t* row = q.q.data() + p * q.N;
  uint8_t* mask = q.clip_mask.data() + p * q.N;
  std::memset(mask + j0, 0, static_cast<size_t>(n));
  for (int64_t c = j0; c < j0 + n; c += 8) {
    const int64_t m = std::min<int64_t>(8, j0 + n - c);
    if (m == 8 && !HasByte127(row + c)) continue;
    for (int64_t j = c; j < c + m; ++j) {
      mask[j] = (row[j] == kInt8QMax || row[j] == -kInt8QMax) && Clipped(w[p * q.N + j], q.step[j]);
    }
  }
}

// dw = +0 where the mask marks a clipped weight, rows in parallel (a mask word of eight zero
// bytes is skipped whole).
void ZeroClipped(const QuantizedWeight& qw, float* dw) {
  const int64_t N = qw.N;
  ForEachRow(qw.K, [&](int64_t p) {
    const uint8_t* mask = qw.clip_mask.data() + p * N;
    for (int64_t c = 0; c < N; c += 8) {
      const int64_t m = std::min<int64_t>(8, N - c);
      uint64_t word = 1;
      if (m == 8) std::memcpy(&word, mask + c, 8);
      if (word == 0) continue;
      for (int64_t j = c; j < c + m; ++j) {
        if (mask[j]) dw[p * N + j] = 0.0f;
      }
    }
  });
}

// acc[j] += dŴ[j]·e[j] over one row's n columns (w, dw, q, s at the block's first column), with
// e = q where |w/s| > 127, 0 where w/s is NaN, else q - w/s. Each column on its own; a constant
// n lets the compiler keep it in vectors.
template <int64_t kN>
void LsqRowTerms(const float* dw, const float* w, const int8_t* q, const float* s, int64_t n,
                 float* acc) {
  const float lim = static_cast<float>(kInt8QMax);
  const int64_t count = kN > 0 ? kN : n;
  for (int64_t j = 0; j < count; ++j) {
    const float qf = static_cast<float>(q[j]);
    const float v = w[j] / s[j];
    const float e = std::fabs(v) > lim ? qf : (v != v ? 0.0f : qf - v);
    acc[j] = acc[j] + dw[j] * e;
  }
}

// dstep[j] = (Σ_p dŴ[p,j]·e[p,j]) · (1/√(K·127)), p ascending (int8_linear.h). Walked a row of a
// 64-column block at a time (each column's sum still adds p in ascending order), so every read
// is a contiguous stretch of a row.
void LsqStepGradient(const float* dw, const float* w, const QuantizedWeight& qw, float* dstep) {
  const int64_t K = qw.K, N = qw.N;
  const float g = static_cast<float>(1.0 / std::sqrt(static_cast<double>(K) * kInt8QMax));
  ForEachRow((N + kWeightBlockCols - 1) / kWeightBlockCols, [&](int64_t b) {
    const int64_t j0 = b * kWeightBlockCols, n = std::min(kWeightBlockCols, N - j0);
    float acc[kWeightBlockCols] = {};
    const float* s = qw.step.data() + j0;
    for (int64_t p = 0; p < K; ++p) {
      const int64_t o = p * N + j0;
      if (n == kWeightBlockCols) {
        LsqRowTerms<kWeightBlockCols>(dw + o, w + o, qw.q.data() + o, s, n, acc);
      } else {
        LsqRowTerms<0>(dw + o, w + o, qw.q.data() + o, s, n, acc);
      }
    }
    for (int64_t j = 0; j < n; ++j) dstep[j0 + j] = acc[j] * g;
  });
}

}  // namespace

void CheckInt8Reduction(int64_t n) {
  TRAIL_CHECK(n <= (int64_t{1} << 31) / (kInt8QMax * kInt8QMax), "int8 linear: a reduction over ",
              n, " elements could overflow its int32 sum; at most 133144 are supported");
}

int8_t QuantizeValue(const Kernels& kernels, float x, float scale) {
  int8_t q;
  kernels.quantize_i8(&x, &scale, nullptr, 0, 1, &q);
  return q;
}

void WeightStepSizes(const float* w, int64_t K, int64_t N, float* step) {
  TRAIL_CHECK(K > 0 && N >= 0, "int8 step sizes of a ", K, "x", N, " weight");
  ColumnStepSizes(w, K, N, step);
}

void QuantizeRowsAbsmax(const Kernels& kernels, const float* x, int64_t M, int64_t K, int8_t* q,
                        float* scale) {
  ForEachRow(M, [&](int64_t i) { QuantizeRowAbsmax(kernels, x + i * K, K, q + i * K, scale + i); });
}

void QuantizeWeight(const Kernels& kernels, const float* w, int64_t K, int64_t N,
                    Int8Backward backward, QuantizedWeight& out, const float* learned_step) {
  TRAIL_CHECK(K > 0 && N > 0, "int8 quantization of a ", K, "x", N, " weight");
  out.K = K, out.N = N;
  out.step.resize(N), out.q.resize(K * N);
  if (backward == Int8Backward::kFp32) out.dequant.resize(K * N);
  // One task per block of columns: its step sizes, then its stretch of every row into q [K, N]
  // (the layout every product reads it in), its stretch of the clip mask and, for the fp32
  // backward, the dequantized copy. The weights are read from memory once.
  const int64_t blocks = (N + kWeightBlockCols - 1) / kWeightBlockCols;
  out.clip_mask.resize(K * N);
  const Kernels& k = kernels;
  ForEachRow(blocks, [&](int64_t b) {
    const int64_t j0 = b * kWeightBlockCols, n = std::min(kWeightBlockCols, N - j0);
    float* s = out.step.data();
    if (learned_step != nullptr) {
      std::copy(learned_step + j0, learned_step + j0 + n, s + j0);
    } else {
      BlockStepSizes(w, K, N, j0, n, s);
    }
    float inv[kWeightBlockCols];
    for (int64_t j = 0; j < n; ++j) inv[j] = 1.0f / s[j0 + j];
    for (int64_t p = 0; p < K; ++p) {
      k.quantize_i8(w + p * N + j0, s + j0, inv, 1, static_cast<size_t>(n),
                    out.q.data() + p * N + j0);
      MarkClippedInRow(w, out, p, j0, n);
      if (backward == Int8Backward::kFp32) {
        for (int64_t j = j0; j < j0 + n; ++j)
          out.dequant[p * N + j] = static_cast<float>(out.q[p * N + j]) * s[j];
      }
    }
  });
}

void QuantizeInput(const Kernels& kernels, const float* x, int64_t M, int64_t K,
                   QuantizedInput& out) {
  out.M = M, out.K = K, out.qt_ready = false;
  Grow(out.q, M * K), Grow(out.scale, M);
  QuantizeRowsAbsmax(kernels, x, M, K, out.q.data(), out.scale.data());
}

void Int8LinearForward(const Kernels& kernels, const QuantizedInput& x, const QuantizedWeight& w,
                       Int8Scratch& s, float* y) {
  TRAIL_CHECK(x.K == w.K, "int8 linear: input width ", x.K, " against weight rows ", w.K);
  CheckInt8Reduction(w.K);
  // y = (float(acc)·r_t)·s_j, applied by the GEMM as each output tile is finished.
  kernels.gemm_i8({.M = x.M,
                   .N = w.N,
                   .K = w.K,
                   .a = x.q.data(),
                   .c = Grow(s.acc, x.M * w.N),
                   .b = w.q.data(),
                   .out = y,
                   .row_scale = x.scale.data(),
                   .col_scale = w.step.data()});
}

// The int8 products of the backward, their operands quantized (int8_linear.h).
namespace {

// dx = float(qg·qwᵀ)·u_t (added to dx with accumulate), applied by the GEMM per output tile.
void GradientInputProduct(const Kernels& k, const int8_t* qg, const float* u, int64_t M,
                          const QuantizedWeight& w, Int8Scratch& s, float* dx, bool accumulate) {
  k.gemm_i8({.M = M,
             .N = w.K,
             .K = w.N,
             .a = qg,
             .bt = w.q.data(),
             .c = Grow(s.acc, M * w.K),
             .out = dx,
             .row_scale = u,
             .accumulate = accumulate});
}

// qh [M, N] = every row's QuantizeScaledRow, then dw = float(qxᵀ·qh)·v_j, applied by the GEMM
// per output tile. The input's transpose is made once for the layers that share it. The scales
// stay in s.scale (and qh in s.a) after the call.
void GradientWeightProduct(const Kernels& k, QuantizedInput& x, const float* dy,
                           const float* column_scales, int64_t N, Int8Scratch& s, float* dw) {
  const int64_t M = x.M, K = x.K;
  float* v = Grow(s.scale, N);
  std::copy(column_scales, column_scales + N, v);
  int8_t* qh = Grow(s.a, M * N);  // [M, N]: the GEMM reads B as is
  const float* inv_v = Reciprocals(v, N).data();
  ForEachRow(
      M, [&](int64_t t) { QuantizeScaledRow(k, dy + t * N, x.scale[t], v, inv_v, N, qh + t * N); });
  if (!x.qt_ready) {  // the layers that share this input (q, k, v; gate, up) reuse it
    TransposeI8(x.q.data(), M, K, Grow(x.qt, K * M));
    x.qt_ready = true;
  }
  k.gemm_i8({.M = K,
             .N = N,
             .K = M,
             .a = x.qt.data(),
             .c = Grow(s.acc, K * N),
             .b = qh,
             .out = dw,
             .col_scale = v});
}

// The fp32 backward's dW = Q(X)ᵀ·dY.
void Fp32WeightGradient(const Kernels& k, const QuantizedInput& x, const float* dy, int64_t N,
                        Int8Scratch& s, float* dw) {
  const int64_t M = x.M, K = x.K;
  float* xd = Grow(s.f, M * K);  // Q(X)
  ForEachRow(M, [&](int64_t t) {
    for (int64_t p = 0; p < K; ++p) xd[t * K + p] = static_cast<float>(x.q[t * K + p]) * x.scale[t];
  });
  MatMulAT(k, xd, dy, dw, K, M, N);
}

// The step-size gradient where learned, then +0 where W was clipped.
void FinishWeightGradient(const QuantizedWeight& qw, float* dw, const float* w, float* dstep) {
  if (dstep != nullptr) {
    TRAIL_CHECK(w != nullptr, "int8 linear: the step-size gradient needs the weight");
    LsqStepGradient(dw, w, qw, dstep);
  }
  ZeroClipped(qw, dw);
}

}  // namespace

void Int8LinearBackwardInput(const Kernels& kernels, const float* dy, int64_t M,
                             const QuantizedWeight& w, Int8Backward backward, Int8Scratch& s,
                             float* dx, bool accumulate) {
  const int64_t K = w.K, N = w.N;
  if (backward == Int8Backward::kFp32) {
    MatMulBT(kernels, dy, w.dequant.data(), dx, M, N, K, accumulate);
    return;
  }
  // g = dY·diag(s), quantized per token, each row while it is in cache; dX = u ⊙ (qg·qwᵀ).
  CheckInt8Reduction(N);
  int8_t* qg = Grow(s.a, M * N);
  float* u = Grow(s.scale, M);
  ForEachRow(M, [&](int64_t t) {
    QuantizeGradientRow(kernels, dy + t * N, w.step.data(), N, qg + t * N, u + t);
  });
  GradientInputProduct(kernels, qg, u, M, w, s, dx, accumulate);
}

void Int8LinearBackwardWeight(const Kernels& kernels, QuantizedInput& x, const float* dy,
                              const QuantizedWeight& qw, Int8Backward backward, Int8Scratch& s,
                              float* dw, const float* w, float* dstep) {
  const int64_t M = x.M, K = qw.K, N = qw.N;
  TRAIL_CHECK(x.K == K, "int8 linear: input width ", x.K, " against weight rows ", K);
  if (backward == Int8Backward::kFp32) {
    Fp32WeightGradient(kernels, x, dy, N, s, dw);
  } else {
    // h = diag(r)·dY, quantized per column: the scales from column maxima taken over whole
    // rows, then h row by row. (Computed twice, h[t, j] is the same rounded product.)
    CheckInt8Reduction(M);
    thread_local std::vector<float> partial;
    const float* v = ColumnScalesOfScaledRows(kernels, dy, x.scale.data(), M, N, partial);
    GradientWeightProduct(kernels, x, dy, v, N, s, dw);
  }
  FinishWeightGradient(qw, dw, w, dstep);
}

void Int8LinearBackward(const Kernels& kernels, QuantizedInput& x, const float* dy,
                        const QuantizedWeight& qw, Int8Backward backward, Int8Scratch& s, float* dx,
                        bool accumulate, float* dw, const float* w, float* dstep) {
  const int64_t M = x.M, K = qw.K, N = qw.N;
  TRAIL_CHECK(x.K == K, "int8 linear: input width ", x.K, " against weight rows ", K);
  if (backward == Int8Backward::kFp32) {
    Int8LinearBackwardInput(kernels, dy, M, qw, backward, s, dx, accumulate);
    Int8LinearBackwardWeight(kernels, x, dy, qw, backward, s, dw, w, dstep);
    return;
  }
  CheckInt8Reduction(N);
  CheckInt8Reduction(M);
  // One pass over dY quantizes every row's g and takes the column maxima of diag(r)·dY; the dX
  // product runs before qh takes qg's buffer.
  int8_t* qg = Grow(s.a, M * N);
  float* u = Grow(s.scale, M);
  thread_local std::vector<float> partial;
  const float* v =
      ColumnScalesOfScaledRows(kernels, dy, x.scale.data(), M, N, partial, qw.step.data(), qg, u);
  GradientInputProduct(kernels, qg, u, M, qw, s, dx, accumulate);
  GradientWeightProduct(kernels, x, dy, v, N, s, dw);
  FinishWeightGradient(qw, dw, w, dstep);
}

}  // namespace trail::repops
