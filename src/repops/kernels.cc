// SIMD kernels, compiled once per Highway target (foreach_target) and picked at run time.
// Each kernel follows the canonical order of kernels.h exactly; SIMD lanes only ever hold
// independent outputs or the fixed 16 reduction partials.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "repops/kernels.cc"
#include "repops/x86_intrinsics.h"  // before Highway includes <immintrin.h>
#include "hwy/foreach_target.h"     // IWYU pragma: keep

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
#include "repops/gemm-inl.h"
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
  (void)d;  // unused on the AVX-512 targets
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // one narrowing instruction instead of the generic demotion's packs and permute
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
                            .gemm_i8_kernel = &GemmI8KernelName,
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
