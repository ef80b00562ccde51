// The arithmetic policy for SIMD targets: the same operations as ScalarOps, lane-wise.
// Fma is a true fused multiply-add on every target: targets without native FMA (SSSE3, SSE4,
// EMU128, SCALAR) compute it lane by lane with std::fma, never as a rounded multiply and add.
#if defined(TRAIL_REPOPS_HWY_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_HWY_OPS_INL_H_
#undef TRAIL_REPOPS_HWY_OPS_INL_H_
#else
#define TRAIL_REPOPS_HWY_OPS_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE V FusedMulAdd(D d, V a, V b, V c) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulAdd(a, b, c);
#else
  HWY_ALIGN float la[hn::MaxLanes(d)], lb[hn::MaxLanes(d)], lc[hn::MaxLanes(d)];
  hn::Store(a, d, la);
  hn::Store(b, d, lb);
  hn::Store(c, d, lc);
  for (size_t i = 0; i < hn::Lanes(d); ++i) lc[i] = std::fma(la[i], lb[i], lc[i]);
  return hn::Load(d, lc);
#endif
}

template <class D>
struct HwyOps {
  using V = hn::Vec<D>;
  using DI = hn::RebindToSigned<D>;
  using I = hn::Vec<DI>;
  using M = hn::Mask<D>;
  D d;
  DI di;
  V Set(float c) const { return hn::Set(d, c); }
  I SetI(int32_t c) const { return hn::Set(di, c); }
  V Add(V a, V b) const { return hn::Add(a, b); }
  V Sub(V a, V b) const { return hn::Sub(a, b); }
  V Mul(V a, V b) const { return hn::Mul(a, b); }
  V Div(V a, V b) const { return hn::Div(a, b); }
  V Fma(V a, V b, V c) const { return FusedMulAdd(d, a, b, c); }
  V Sqrt(V a) const { return hn::Sqrt(a); }
  V Abs(V a) const { return hn::Abs(a); }
  V Neg(V a) const { return hn::Neg(a); }
  M Lt(V a, V b) const { return hn::Lt(a, b); }
  M Gt(V a, V b) const { return hn::Gt(a, b); }
  M Eq(V a, V b) const { return hn::Eq(a, b); }
  M IsNaN(V a) const { return hn::IsNaN(a); }
  M Or(M a, M b) const { return hn::Or(a, b); }
  V Select(M m, V a, V b) const { return hn::IfThenElse(m, a, b); }
  I SelectI(M m, I a, I b) const { return hn::IfThenElse(hn::RebindMask(di, m), a, b); }
  V CopySignFrom(V magnitude, V sign) const { return hn::CopySign(magnitude, sign); }
  I ToInt(V a) const { return hn::ConvertTo(di, a); }
  V ToFloat(I a) const { return hn::ConvertTo(d, a); }
  I AsInt(V a) const { return hn::BitCast(di, a); }
  V AsFloat(I i) const { return hn::BitCast(d, i); }
  I AddI(I a, I b) const { return hn::Add(a, b); }
  I SubI(I a, I b) const { return hn::Sub(a, b); }
  I AndI(I a, I b) const { return hn::And(a, b); }
  template <int kBits>
  I ShlI(I a) const {
    return hn::ShiftLeft<kBits>(a);
  }
  template <int kBits>
  I SarI(I a) const {
    return hn::ShiftRight<kBits>(a);
  }
  hn::Mask<D> EqI(I a, I b) const { return hn::RebindMask(d, hn::Eq(a, b)); }
};

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_HWY_OPS_INL_H_
