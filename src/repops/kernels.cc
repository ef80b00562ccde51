// SIMD kernels, compiled once per Highway target (foreach_target) and picked at run time.
// Each kernel follows the canonical order of kernels.h exactly; SIMD lanes only ever hold
// independent outputs or the fixed 16 reduction partials.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "repops/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

#include "core/thread_pool.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "repops/gemm_i8-inl.h"
#include "repops/hwy_ops-inl.h"
#include "repops/kernels.h"
#include "repops/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D16 = hn::CappedTag<float, 16>;
constexpr size_t kCanonicalLanes = 16;

// ---------------------------------------------------------------------------------------------
// Canonical reductions. The 16 partials live in 16/N vectors of N lanes (N = 16, 8, 4 or 1).

enum class RedOp { kSum, kSumSq, kDot, kMax };

template <RedOp kOp>
HWY_INLINE float Reduce(const float* HWY_RESTRICT x, const float* HWY_RESTRICT y, size_t n) {
  const D16 d;
  constexpr size_t N = hn::MaxLanes(D16());
  constexpr size_t NA = kCanonicalLanes / N;
  static_assert(kCanonicalLanes % N == 0, "lane count must divide 16");
  using V = hn::Vec<D16>;
  const float init = kOp == RedOp::kMax ? -HUGE_VALF : 0.0f;
  V acc[NA];
  for (size_t a = 0; a < NA; ++a) acc[a] = hn::Set(d, init);
  auto step = [&](const float* xp, const float* yp) HWY_ATTR {
    HWY_UNROLL(16)
    for (size_t a = 0; a < NA; ++a) {
      const V vx = hn::LoadU(d, xp + a * N);
      if constexpr (kOp == RedOp::kSum) {
        acc[a] = hn::Add(acc[a], vx);
      } else if constexpr (kOp == RedOp::kSumSq) {
        acc[a] = FusedMulAdd(d, vx, vx, acc[a]);
      } else if constexpr (kOp == RedOp::kDot) {
        acc[a] = FusedMulAdd(d, vx, hn::LoadU(d, yp + a * N), acc[a]);
      } else {
        const auto take = hn::Or(hn::Gt(vx, acc[a]), hn::IsNaN(vx));
        acc[a] = hn::IfThenElse(take, vx, acc[a]);
      }
    }
  };
  size_t i = 0;
  for (; i + kCanonicalLanes <= n; i += kCanonicalLanes) step(x + i, y ? y + i : nullptr);
  if (i < n) {
    // The tail is padded with values that leave a partial unchanged: +0 for sums (a partial is
    // never -0, as it starts at +0 and rounding to nearest never yields -0 from +0), -inf for max.
    HWY_ALIGN float tx[kCanonicalLanes], ty[kCanonicalLanes];
    std::fill(tx, tx + kCanonicalLanes, kOp == RedOp::kMax ? -HUGE_VALF : 0.0f);
    std::fill(ty, ty + kCanonicalLanes, 0.0f);
    std::memcpy(tx, x + i, (n - i) * sizeof(float));
    if (y) std::memcpy(ty, y + i, (n - i) * sizeof(float));
    step(tx, ty);
  }
  HWY_ALIGN float p[kCanonicalLanes];
  for (size_t a = 0; a < NA; ++a) hn::Store(acc[a], d, p + a * N);
  for (size_t w = kCanonicalLanes / 2; w >= 1; w /= 2) {
    for (size_t l = 0; l < w; ++l)
      p[l] = kOp == RedOp::kMax ? Max2(p[l], p[l + w]) : p[l] + p[l + w];
  }
  return p[0];
}

float SumImpl(const float* x, size_t n) { return Reduce<RedOp::kSum>(x, nullptr, n); }
float SumSqImpl(const float* x, size_t n) { return Reduce<RedOp::kSumSq>(x, nullptr, n); }
float DotImpl(const float* x, const float* y, size_t n) { return Reduce<RedOp::kDot>(x, y, n); }
float MaxImpl(const float* x, size_t n) { return Reduce<RedOp::kMax>(x, nullptr, n); }

void AxpyImpl(float a, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto va = hn::Set(d, a);
  size_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(FusedMulAdd(d, va, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

void MulAddImpl(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, float* HWY_RESTRICT y,
                size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(FusedMulAdd(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, y + i)), d,
               y + i);
  for (; i < n; ++i) y[i] = std::fma(a[i], b[i], y[i]);
}

void MulImpl(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t b_step,
             float* HWY_RESTRICT y, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if (b_step == 0) {
    const auto vb = hn::Set(d, b[0]);
    for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, a + i), vb), d, y + i);
  } else {
    for (; i + N <= n; i += N)
      hn::StoreU(hn::Mul(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, y + i);
  }
  for (; i < n; ++i) y[i] = a[i] * b[i * b_step];
}

void AbsMaxUpdateImpl(const float* HWY_RESTRICT x, float r, float* HWY_RESTRICT m, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vr = hn::Set(d, r);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto a = hn::Abs(hn::Mul(vr, hn::LoadU(d, x + i)));
    const auto mi = hn::LoadU(d, m + i);
    hn::StoreU(hn::IfThenElse(hn::Or(hn::Gt(a, mi), hn::IsNaN(a)), a, mi), d, m + i);
  }
  for (; i < n; ++i) {
    const float a = std::fabs(r * x[i]);
    if (a > m[i] || a != a) m[i] = a;
  }
}

// ---------------------------------------------------------------------------------------------
// Elementwise math: the same template as the scalar reference, on full vectors; the tail runs
// on a zero-padded vector so that every element goes through identical operations.

template <class F>
HWY_INLINE void MapVectors(const float* HWY_RESTRICT x, float* HWY_RESTRICT y, size_t n, F f) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(f(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float t[hn::MaxLanes(d)] = {};
    std::memcpy(t, x + i, (n - i) * sizeof(float));
    hn::Store(f(d, hn::Load(d, t)), d, t);
    std::memcpy(y + i, t, (n - i) * sizeof(float));
  }
}

void MapImpl(MathFn fn, const float* x, float* y, size_t n) {
  using DF = hn::ScalableTag<float>;
  const HwyOps<DF> o{};
  switch (fn) {
    case MathFn::kExp:
      return MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return ExpT(o, v); });
    case MathFn::kLog:
      return MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return LogT(o, v); });
    case MathFn::kTanh:
      return MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return TanhT(o, v); });
    case MathFn::kSigmoid:
      return MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return SigmoidT(o, v); });
    case MathFn::kSin:
    case MathFn::kCos: {
      const bool want_sin = fn == MathFn::kSin;
      return MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR {
        hn::Vec<DF> s, c;
        SinCosT(o, v, &s, &c);
        return want_sin ? s : c;
      });
    }
  }
}

void ExpSubImpl(const float* x, float shift, float* y, size_t n) {
  using DF = hn::ScalableTag<float>;
  const HwyOps<DF> o{};
  const auto vs = hn::Set(DF(), shift);
  MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return ExpT(o, hn::Sub(v, vs)); });
}

void GeluImpl(const float* x, float* y, size_t n) {
  using DF = hn::ScalableTag<float>;
  const HwyOps<DF> o{};
  MapVectors(x, y, n, [&](DF, hn::Vec<DF> v) HWY_ATTR { return GeluT(o, v); });
}

void GeluBackwardImpl(const float* HWY_RESTRICT dy, const float* HWY_RESTRICT x,
                      float* HWY_RESTRICT dx, size_t n) {
  using DF = hn::ScalableTag<float>;
  const DF d;
  const HwyOps<DF> o{};
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(hn::Mul(hn::LoadU(d, dy + i), GeluGradT(o, hn::LoadU(d, x + i))), d, dx + i);
  if (i < n) {  // the tail on zero-padded vectors, as MapVectors does
    HWY_ALIGN float tx[hn::MaxLanes(d)] = {}, tdy[hn::MaxLanes(d)] = {};
    std::memcpy(tx, x + i, (n - i) * sizeof(float));
    std::memcpy(tdy, dy + i, (n - i) * sizeof(float));
    hn::Store(hn::Mul(hn::Load(d, tdy), GeluGradT(o, hn::Load(d, tx))), d, tx);
    std::memcpy(dx + i, tx, (n - i) * sizeof(float));
  }
}

// ---------------------------------------------------------------------------------------------
// int8 quantization (kernels.h): elementwise, so any lane layout gives the reference's bits.

float AbsMaxImpl(const float* HWY_RESTRICT x, size_t n) {
  const D16 d;
  constexpr size_t N = hn::MaxLanes(D16());
  auto m = hn::Zero(d);
  auto nan = hn::Lt(m, m);  // all false
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    nan = hn::Or(nan, hn::IsNaN(v));
    m = hn::Max(m, hn::Abs(v));
  }
  float r = hn::GetLane(hn::MaxOfLanes(d, m));
  bool any_nan = !hn::AllFalse(d, nan);
  for (; i < n; ++i) {
    any_nan |= x[i] != x[i];
    r = std::max(r, std::fabs(x[i]));
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

// Lanes of x / s rounded to an integer and clamped to [-127, 127] (a NaN quotient to 0), exactly
// as the division defines them.
template <class D, class V>
HWY_INLINE V QuantizeByDivision(D d, V vx, V vs) {
  const auto v = hn::Div(vx, vs);
  const auto r = hn::Round(hn::Min(hn::Max(v, hn::Set(d, -127.0f)), hn::Set(d, 127.0f)));
  return hn::IfThenZeroElse(hn::IsNaN(v), r);  // nearest, ties to even; NaN -> 0
}

// The same lanes, decided where possible by y = x·inv (inv = 1/s rounded): a multiply instead
// of a division. With inv within half an ulp of 1/s and normal, |y - x/s| <= |x/s|·2^-22: for
// |x/s| < 256 the rounded quotient and y lie within 2^-13 of each other, so they round to the
// same integer unless y is within 2^-12 of a half-integer; beyond, both clamp to the same ±127
// (rounding and clamping to integer bounds commute). A vector with a lane near a half-integer or
// a y that is not finite (|y - Round(y)| is then NaN, which fails the test) is divided instead;
// so is one whose inv lies below 2^-125 (a subnormal 1/s has fewer bits), which the caller
// checks once for one scale (check_inv false) and this for per-element scales.
template <bool kCheckInv, class D, class V>
HWY_INLINE V QuantizeByInverse(D d, V vx, V vs, V inv) {
  const auto y = hn::Mul(vx, inv);
  const auto r = hn::Round(y);
  auto slow = hn::Not(hn::Le(hn::Abs(hn::Sub(y, r)), hn::Set(d, 0.5f - 0x1p-12f)));
  if (kCheckInv) slow = hn::Or(slow, hn::Lt(hn::Abs(inv), hn::Set(d, 0x1p-125f)));
  if (!hn::AllFalse(d, slow)) return QuantizeByDivision(d, vx, vs);
  return hn::Min(hn::Max(r, hn::Set(d, -127.0f)), hn::Set(d, 127.0f));
}

// Stores the integral lanes z (in [-127, 127]) as int8.
template <class D, class V>
HWY_INLINE void StoreI8(D d, V z, int8_t* HWY_RESTRICT q) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  (void)d;  // one narrowing instruction instead of the generic demotion's packs and permute
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(z.raw)));
#else
  const hn::Rebind<int32_t, D> di;
  const hn::Rebind<int8_t, D> d8;
  hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, z)), d8, q);
#endif
}

template <bool kPerElement>
HWY_INLINE void QuantizeI8T(const float* HWY_RESTRICT x, const float* HWY_RESTRICT scale,
                            const float* HWY_RESTRICT inv_scale, size_t n, int8_t* HWY_RESTRICT q) {
  const D16 d;
  constexpr size_t N = hn::MaxLanes(D16());
  const float inv0 = 1.0f / scale[0];
  const auto one = hn::Set(d, scale[0]), inv_one = hn::Set(d, inv0);
  const bool by_inverse =
      kPerElement ? inv_scale != nullptr : std::fabs(inv0) >= 0x1p-125f;  // false for NaN
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto vx = hn::LoadU(d, x + i);
    const auto vs = kPerElement ? hn::LoadU(d, scale + i) : one;
    if (!by_inverse) {
      StoreI8(d, QuantizeByDivision(d, vx, vs), q + i);
    } else if (kPerElement) {
      StoreI8(d, QuantizeByInverse<true>(d, vx, vs, hn::LoadU(d, inv_scale + i)), q + i);
    } else {
      StoreI8(d, QuantizeByInverse<false>(d, vx, vs, inv_one), q + i);
    }
  }
  for (; i < n; ++i) {
    const float v = x[i] / scale[kPerElement ? i : 0];
    q[i] = v != v ? 0 : static_cast<int8_t>(std::nearbyint(std::clamp(v, -127.0f, 127.0f)));
  }
}

void QuantizeI8Impl(const float* HWY_RESTRICT x, const float* HWY_RESTRICT scale,
                    const float* HWY_RESTRICT inv_scale, size_t scale_step, size_t n,
                    int8_t* HWY_RESTRICT q) {
  if (scale_step == 0) {
    QuantizeI8T<false>(x, scale, nullptr, n, q);
  } else {
    QuantizeI8T<true>(x, scale, inv_scale, n, q);
  }
}

// ---------------------------------------------------------------------------------------------
// GEMM: packed panels and an MR x (NV*N) register tile. Blocking over K reloads the partial
// accumulators from C, which continues each output's single FMA chain unchanged.

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kMR = 6, kNV = 4;
#elif HWY_TARGET == HWY_AVX2 || HWY_ARCH_ARM_A64
constexpr size_t kMR = 6, kNV = 2 + 2 * HWY_ARCH_ARM_A64;
#else
constexpr size_t kMR = 4, kNV = 2;
#endif
// Measured on transformer shapes against OpenBLAS (bench/gemm_bench.cc): a long K block keeps
// the A micro-panel in L1 and streams B from L2; fewer K blocks mean fewer C reloads. 96 rows a
// task use each B panel twice as often as 48 did before it leaves L2 (5% on the training shapes).
constexpr size_t kKC = 768;
constexpr size_t kMC = kMR * 16;
constexpr size_t kNC = 3072;

template <class D>
HWY_INLINE void MicroKernel(D d, size_t kc, const float* HWY_RESTRICT ap,
                            const float* HWY_RESTRICT bp, float* HWY_RESTRICT c, size_t ldc,
                            bool load) {
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(D());
  V acc[kMR][kNV];
  HWY_UNROLL(8)
  for (size_t r = 0; r < kMR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v)
      acc[r][v] = load ? hn::LoadU(d, c + r * ldc + v * N) : hn::Zero(d);
  }
  for (size_t p = 0; p < kc; ++p) {
    V b[kNV];
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v) b[v] = hn::Load(d, bp + v * N);
    HWY_UNROLL(8)
    for (size_t r = 0; r < kMR; ++r) {
      const V a = hn::Set(d, ap[r]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
    }
    ap += kMR;
    bp += kNV * N;
  }
  HWY_UNROLL(8)
  for (size_t r = 0; r < kMR; ++r) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < kNV; ++v) hn::StoreU(acc[r][v], d, c + r * ldc + v * N);
  }
}

// Rows [ic, ic + mc) and depths [pc, pc + kc) of A into kMR-row panels, each [kc][kMR], with zero
// rows past mc. Both stored layouts are read in contiguous runs, with the operand's pointer and
// strides held locally (through g they were reloaded for every value: the stores may alias it).
void PackA(const GemmArgs& g, size_t ic, size_t mc, size_t pc, size_t kc,
           float* HWY_RESTRICT apack) {
  const size_t mpanels = (mc + kMR - 1) / kMR, full = mc / kMR;
  const float* const a = g.a;
  const size_t a_rs = g.a_rs, a_cs = g.a_cs;
  if (a_rs == 1) {  // Aᵀ stored [K, M]: each depth's mc values are one run
    // kMR straight-line copies: as a loop, the compiler made each 24-byte copy a memmove call.
    const auto copy_panel = [&]<size_t... R>(float* d, const float* s, std::index_sequence<R...>) {
      ((d[R] = s[R]), ...);
    };
    for (size_t p = 0; p < kc; ++p) {
      const float* src = a + (pc + p) * a_cs + ic;
      // Each depth is a far-apart row (dE's dLogitsᵀ: 64 KB apart), beyond the hardware
      // prefetcher's reach: ask for the row 8 depths ahead.
      if (p + 8 < kc)
        for (size_t i = 0; i < mc; i += 16) __builtin_prefetch(src + 8 * a_cs + i);
      for (size_t ip = 0; ip < full; ++ip)
        copy_panel(apack + (ip * kc + p) * kMR, src + ip * kMR, std::make_index_sequence<kMR>());
      for (size_t r = 0; full < mpanels && r < kMR; ++r) {
        const size_t i = full * kMR + r;
        apack[(full * kc + p) * kMR + r] = i < mc ? src[i] : 0.0f;
      }
    }
    return;
  }
  static const float kZeros[kKC] = {};
  for (size_t ip = 0; ip < mpanels; ++ip) {
    float* dst = apack + ip * kc * kMR;
    const float* rows[kMR];  // A[i, pc + p] = rows[r][p * a_cs]
    for (size_t r = 0; r < kMR; ++r) {
      const size_t i = ip * kMR + r;
      rows[r] = i < mc ? a + (ic + i) * a_rs + pc * a_cs : kZeros;
    }
    if (a_cs == 1) {  // A stored [M, K]: kMR rows interleaved depth by depth, straight-line
      [&]<size_t... R>(std::index_sequence<R...>) {
        const float* const row[kMR] = {rows[R]...};
        for (size_t p = 0; p < kc; ++p) ((dst[p * kMR + R] = row[R][p]), ...);
      }
      (std::make_index_sequence<kMR>());
    } else {
      for (size_t p = 0; p < kc; ++p)
        for (size_t r = 0; r < kMR; ++r)
          dst[p * kMR + r] = ip * kMR + r < mc ? rows[r][p * a_cs] : 0.0f;
    }
  }
}

// Columns [j0, j0 + NR) and depths [pc, pc + kc) of B into one NR-wide panel [kc][NR], zero at
// and past column j_end. Each stored layout is read in contiguous runs.
void PackBPanel(const GemmArgs& g, size_t j0, size_t j_end, size_t pc, size_t kc,
                float* HWY_RESTRICT dst) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t cols = std::min(NR, j_end - j0);
  if (g.b_rs == 1) {
    // Bᵀ stored [N, K] (scores, logits): each column is a contiguous run of depths, so 16
    // depths of every column go at once; reads and writes both stay within a few lines.
    for (size_t p0 = 0; p0 < kc; p0 += 16) {
      const size_t pn = std::min<size_t>(16, kc - p0);
      for (size_t r = 0; r < cols; ++r) {
        const float* src = g.b + (j0 + r) * g.b_cs + pc + p0;
        for (size_t p = 0; p < pn; ++p) dst[(p0 + p) * NR + r] = src[p];
      }
      for (size_t r = cols; r < NR; ++r)  // zero padding at the right edge
        for (size_t p = 0; p < pn; ++p) dst[(p0 + p) * NR + r] = 0.0f;
    }
    return;
  }
  if (g.b_cs == 1) {  // B stored [K, N]: each depth's NR columns are one contiguous run
    const float* src = g.b + pc * g.b_rs + j0;
    const size_t b_rs = g.b_rs;
    if (cols == NR) {  // whole panels as vectors (a memcpy call per depth cost as much)
      for (size_t p = 0; p < kc; ++p)
        for (size_t v = 0; v < kNV; ++v)
          hn::Store(hn::LoadU(d, src + p * b_rs + v * N), d, dst + p * NR + v * N);
      return;
    }
    for (size_t p = 0; p < kc; ++p) {
      std::memcpy(dst + p * NR, src + p * b_rs, cols * sizeof(float));
      std::fill(dst + p * NR + cols, dst + (p + 1) * NR, 0.0f);
    }
    return;
  }
  for (size_t p = 0; p < kc; ++p) {
    const float* src = g.b + (pc + p) * g.b_rs;
    for (size_t r = 0; r < NR; ++r) dst[p * NR + r] = r < cols ? src[(j0 + r) * g.b_cs] : 0.0f;
  }
}

// Fewer rows than a register tile (a decoder's step: one token) — the full tile would multiply
// kMR rows, all but R of them zero, after copying B into panels. With B stored [K, N] its rows
// stream through SmallRowsDirect; otherwise each NR-wide column panel keeps R × kNV accumulators
// in registers over the whole of K, through a K block's packed panel. Every output is still the
// one FMA chain over p = 0..K-1 from C or +0: the same bits as the tiled path.
template <size_t R>
void SmallPanel(const GemmArgs& g, size_t j0, float* HWY_RESTRICT bpanel) {
  using D = hn::ScalableTag<float>;
  const D d;
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t nr = std::min(NR, g.N - j0), K = g.K;
  size_t K0 = 0;  // depths the gathered path below has done
  V acc[R][kNV];
  HWY_ALIGN float edge[R * NR] = {};
  for (size_t r = 0; r < R; ++r) {
    if (g.accumulate) std::memcpy(edge + r * NR, g.c + r * g.ldc + j0, nr * sizeof(float));
    for (size_t v = 0; v < kNV; ++v) acc[r][v] = hn::Load(d, edge + r * NR + v * N);
  }
  if (g.b_rs == 1) {  // Bᵀ stored [N, K] (logits, scores): each depth's columns gathered
    const hn::RebindToSigned<D> di;
    HWY_ALIGN int32_t index[NR];
    for (size_t j = 0; j < NR; ++j) {  // lanes past the edge repeat its last column
      index[j] = static_cast<int32_t>(std::min(j, nr - 1) * g.b_cs);
    }
    decltype(hn::Load(di, index)) idx[kNV];
    for (size_t v = 0; v < kNV; ++v) idx[v] = hn::Load(di, index + v * N);
    const float* bcol = g.b + j0 * g.b_cs;
    for (size_t p = 0; p < K; ++p) {
      V b[kNV];
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) b[v] = hn::GatherIndex(d, bcol + p, idx[v]);
      HWY_UNROLL(8)
      for (size_t r = 0; r < R; ++r) {
        const V a = hn::Set(d, g.a[r * g.a_rs + p * g.a_cs]);
        HWY_UNROLL(4)
        for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
      }
    }
    K0 = K;  // done
  }
  const bool direct = g.b_cs == 1 && nr == NR;
  for (size_t pc = K0; pc < K; pc += kKC) {
    const size_t kc = std::min(kKC, K - pc);
    const float* bp = g.b + pc * g.b_rs + j0;
    size_t stride = g.b_rs;
    if (!direct) {
      PackBPanel(g, j0, g.N, pc, kc, bpanel);
      bp = bpanel, stride = NR;
    }
    for (size_t p = 0; p < kc; ++p) {
      V b[kNV];
      HWY_UNROLL(4)
      for (size_t v = 0; v < kNV; ++v) b[v] = hn::LoadU(d, bp + p * stride + v * N);
      HWY_UNROLL(8)
      for (size_t r = 0; r < R; ++r) {
        const V a = hn::Set(d, g.a[r * g.a_rs + (pc + p) * g.a_cs]);
        HWY_UNROLL(4)
        for (size_t v = 0; v < kNV; ++v) acc[r][v] = FusedMulAdd(d, a, b[v], acc[r][v]);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    for (size_t v = 0; v < kNV; ++v) hn::Store(acc[r][v], d, edge + r * NR + v * N);
    std::memcpy(g.c + r * g.ldc + j0, edge + r * NR, nr * sizeof(float));
  }
}

// B stored [K, N]: columns [j0, j1) (whole vectors) of R rows accumulated in a row buffer
// while B's rows stream by in order, each read once in one contiguous run (a panel at a time
// would jump a whole row between reads). acc[r][j] is output (r, j)'s chain over p ascending.
template <size_t R>
void SmallRowsDirect(const GemmArgs& g, size_t j0, size_t j1) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  const size_t w = j1 - j0;
  thread_local hwy::AlignedFreeUniquePtr<float[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < R * w) buffer = hwy::AllocateAligned<float>(R * w), capacity = R * w;
  float* HWY_RESTRICT acc = buffer.get();
  for (size_t r = 0; r < R; ++r) {
    if (g.accumulate) {
      std::memcpy(acc + r * w, g.c + r * g.ldc + j0, w * sizeof(float));
    } else {
      std::fill(acc + r * w, acc + (r + 1) * w, 0.0f);
    }
  }
  for (size_t p = 0; p < g.K; ++p) {
    const float* HWY_RESTRICT b = g.b + p * g.b_rs + j0;
    for (size_t r = 0; r < R; ++r) {
      const auto a = hn::Set(d, g.a[r * g.a_rs + p * g.a_cs]);
      float* HWY_RESTRICT c = acc + r * w;
      for (size_t j = 0; j < w; j += N) {
        hn::Store(FusedMulAdd(d, a, hn::LoadU(d, b + j), hn::Load(d, c + j)), d, c + j);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) std::memcpy(g.c + r * g.ldc + j0, acc + r * w, w * sizeof(float));
}

template <size_t R>
void GemmSmallM(const GemmArgs& g) {
  constexpr size_t N = hn::MaxLanes(hn::ScalableTag<float>());
  constexpr size_t NR = kNV * N;
  ThreadPool& pool = KernelPool();
  if (g.b_cs == 1 && g.N >= N) {
    // Whole vectors in up to 4 tasks a thread (at least 4 vectors each: a thread that wakes
    // late finds work left rather than a half it must wait for); the last partial vector's
    // columns go through a zero-padded panel.
    const size_t vecs = g.N / N;
    const size_t tasks = std::min(pool.num_threads(), std::max<size_t>(1, vecs / 4));
    pool.ParallelFor(tasks + 1, [&](size_t t) {
      if (t < tasks) return SmallRowsDirect<R>(g, vecs * t / tasks * N, vecs * (t + 1) / tasks * N);
      if (vecs * N == g.N) return;
      thread_local hwy::AlignedFreeUniquePtr<float[]> bpanel;
      if (!bpanel) bpanel = hwy::AllocateAligned<float>(kKC * NR);
      SmallPanel<R>(g, vecs * N, bpanel.get());
    });
    return;
  }
  const size_t panels = (g.N + NR - 1) / NR;
  const size_t tasks = std::min(panels, 4 * pool.num_threads());
  pool.ParallelFor(tasks, [&](size_t t) {
    thread_local hwy::AlignedFreeUniquePtr<float[]> bpanel;
    if (!bpanel) bpanel = hwy::AllocateAligned<float>(kKC * NR);
    for (size_t jp = panels * t / tasks; jp < panels * (t + 1) / tasks; ++jp) {
      SmallPanel<R>(g, jp * NR, bpanel.get());
    }
  });
}

void GemmImpl(const GemmArgs& g) {
  using D = hn::ScalableTag<float>;
  const D d;
  constexpr size_t N = hn::MaxLanes(D());
  constexpr size_t NR = kNV * N;
  const size_t M = g.M, Ncols = g.N, K = g.K;
  if (M == 0 || Ncols == 0) return;
  if (K == 0) {
    if (!g.accumulate)
      for (size_t i = 0; i < M; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + Ncols, 0.0f);
    return;
  }
  static_assert(kMR >= 4 && kMR <= 6);
  switch (M) {
    case 1:
      return GemmSmallM<1>(g);
    case 2:
      return GemmSmallM<2>(g);
    case 3:
      return GemmSmallM<3>(g);
    case 4:
      if constexpr (kMR > 4) return GemmSmallM<4>(g);
      break;
    case 5:
      if constexpr (kMR > 5) return GemmSmallM<5>(g);
      break;
    default:
      break;
  }
  ThreadPool& pool = KernelPool();
  const size_t nc_max = std::min(kNC, (Ncols + NR - 1) / NR * NR);
  // The calling thread's buffer (nested calls run inline on their own thread): attention makes
  // thousands of small products a step, and a fresh allocation each was a visible share.
  // (The tasks below run on other threads: they see the buffer through `bpack`, a plain pointer,
  // never through the thread_local itself.)
  thread_local hwy::AlignedFreeUniquePtr<float[]> bpack_storage;
  thread_local size_t bpack_size = 0;
  if (bpack_size < std::min(kKC, K) * nc_max) {
    bpack_size = std::min(kKC, K) * nc_max;
    bpack_storage = hwy::AllocateAligned<float>(bpack_size);
  }
  float* const bpack = bpack_storage.get();

  for (size_t jc = 0; jc < Ncols; jc += kNC) {
    const size_t nc = std::min(kNC, Ncols - jc);
    const size_t panels = (nc + NR - 1) / NR;
    for (size_t pc = 0; pc < K; pc += kKC) {
      const size_t kc = std::min(kKC, K - pc);
      const bool load = g.accumulate || pc > 0;
      // Pack B(pc:pc+kc, jc:jc+nc) into NR-wide panels, zero-padded at the right edge.
      pool.ParallelFor(panels, [&](size_t jp) {
        PackBPanel(g, jc + jp * NR, jc + nc, pc, kc, bpack + jp * kc * NR);
      });
      const size_t mblocks = (M + kMC - 1) / kMC;
      const size_t splits =
          std::max<size_t>(1, std::min(panels, (2 * pool.num_threads() + mblocks - 1) / mblocks));
      pool.ParallelFor(mblocks * splits, [&](size_t task) {
        const size_t ic = (task / splits) * kMC;
        const size_t mc = std::min(kMC, M - ic);
        const size_t jp_begin = panels * (task % splits) / splits;
        const size_t jp_end = panels * (task % splits + 1) / splits;
        thread_local std::vector<float> apack_storage;
        apack_storage.resize(kMC * kKC + 16);
        float* apack = apack_storage.data();
        const size_t mpanels = (mc + kMR - 1) / kMR;
        PackA(g, ic, mc, pc, kc, apack);
        for (size_t jp = jp_begin; jp < jp_end; ++jp) {
          const size_t j0 = jc + jp * NR;
          const size_t nr = std::min(NR, jc + nc - j0);
          for (size_t ip = 0; ip < mpanels; ++ip) {
            const size_t i0 = ic + ip * kMR;
            const size_t mr = std::min(kMR, ic + mc - i0);
            float* cp = g.c + i0 * g.ldc + j0;
            const float* ap = apack + ip * kc * kMR;
            const float* bp = bpack + jp * kc * NR;
            if (mr == kMR && nr == NR) {
              MicroKernel(d, kc, ap, bp, cp, g.ldc, load);
            } else {
              HWY_ALIGN float tile[kMR * NR] = {};
              if (load)
                for (size_t r = 0; r < mr; ++r) std::memcpy(tile + r * NR, cp + r * g.ldc, nr * 4);
              MicroKernel(d, kc, ap, bp, tile, NR, true);
              for (size_t r = 0; r < mr; ++r) std::memcpy(cp + r * g.ldc, tile + r * NR, nr * 4);
            }
          }
        }
      });
    }
  }
}

const Kernels* GetKernelTable() {
  static const Kernels k = {.name = hwy::TargetName(HWY_TARGET),
                            .sum = &SumImpl,
                            .sum_sq = &SumSqImpl,
                            .dot = &DotImpl,
                            .max = &MaxImpl,
                            .axpy = &AxpyImpl,
                            .map = &MapImpl,
                            .exp_sub = &ExpSubImpl,
                            .gemm = &GemmImpl,
                            .gemm_i8 = &GemmI8Impl,
                            .abs_max = &AbsMaxImpl,
                            .quantize_i8 = &QuantizeI8Impl,
                            .gelu = &GeluImpl,
                            .gelu_backward = &GeluBackwardImpl,
                            .mul_add = &MulAddImpl,
                            .abs_max_update = &AbsMaxUpdateImpl,
                            .mul = &MulImpl};
  return &k;
}

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trail::repops {
HWY_EXPORT(GetKernelTable);

const Kernels* SimdKernelsForChosenTarget() { return HWY_DYNAMIC_DISPATCH(GetKernelTable)(); }
}  // namespace trail::repops
#endif
