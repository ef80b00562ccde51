// trail's binary32 elementary functions, written once over an arithmetic policy `O` (ScalarOps
// for the reference path, HwyOps<D> for each SIMD target) so that every path performs exactly the
// same sequence of correctly rounded operations. docs/repops.md gives each algorithm in prose;
// math_test.cc measures the maximum error in ULP against a float64 reference.
//
// Per-target include (Highway's pattern): no include guard of the usual kind.
#if defined(TRAIL_REPOPS_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAIL_REPOPS_MATH_INL_H_
#undef TRAIL_REPOPS_MATH_INL_H_
#else
#define TRAIL_REPOPS_MATH_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace trail::repops::HWY_NAMESPACE {

// Exp: x = k*ln2 + r with k = rne(x*log2(e)), r by a two-part Cody-Waite ln2; exp(r) by a degree-7
// polynomial (Cephes' minimax coefficients, Horner with FMA); scaled by 2^(k>>1) then 2^(k-(k>>1))
// so that k = 128 does not overflow the scale factor. x < kExpMin -> +0 (never a subnormal),
// x > kExpMax -> +inf, NaN -> NaN.
template <class O>
HWY_INLINE typename O::V ExpT(const O& o, typename O::V x) {
  using V = typename O::V;
  const V kExpMax = o.Set(88.72283935546875f);
  const V kExpMin = o.Set(-87.33654022216796875f);
  V xc = o.Select(o.Gt(x, kExpMax), kExpMax, x);
  xc = o.Select(o.Lt(xc, kExpMin), kExpMin, xc);
  xc = o.Select(o.IsNaN(x), o.Set(0.0f), xc);
  const V magic = o.Set(12582912.0f);  // 1.5 * 2^23: adding then subtracting rounds to integer
  const V kf = o.Sub(o.Add(o.Mul(xc, o.Set(1.44269502162933349609375f)), magic), magic);
  V r = o.Fma(kf, o.Set(-0.693359375f), xc);
  r = o.Fma(kf, o.Set(2.12194440e-4f), r);
  V p = o.Set(1.9875691500e-4f);
  p = o.Fma(p, r, o.Set(1.3981999507e-3f));
  p = o.Fma(p, r, o.Set(8.3334519073e-3f));
  p = o.Fma(p, r, o.Set(4.1665795894e-2f));
  p = o.Fma(p, r, o.Set(1.6666665459e-1f));
  p = o.Fma(p, r, o.Set(5.0000001201e-1f));
  const V y = o.Add(o.Fma(p, o.Mul(r, r), r), o.Set(1.0f));
  const auto k = o.ToInt(kf);
  const auto k1 = o.template SarI<1>(k);
  const auto k2 = o.SubI(k, k1);
  const auto bias = o.SetI(127);
  const V s1 = o.AsFloat(o.template ShlI<23>(o.AddI(k1, bias)));
  const V s2 = o.AsFloat(o.template ShlI<23>(o.AddI(k2, bias)));
  V out = o.Mul(o.Mul(y, s1), s2);
  out = o.Select(o.Gt(x, kExpMax), o.Set(HUGE_VALF), out);
  out = o.Select(o.Lt(x, kExpMin), o.Set(0.0f), out);
  return o.Select(o.IsNaN(x), x, out);
}

// Log: subnormals scaled by 2^23 first; x = 2^k * m with m in [sqrt(2)/2, sqrt(2)); f = m - 1,
// s = f/(2+f), log(m) by fdlibm's logf reduction (Lg1..Lg4), log(x) = k*ln2_hi + (log(m) +
// k*ln2_lo). x = 0 -> -inf, x < 0 or NaN -> NaN, +inf -> +inf.
template <class O>
HWY_INLINE typename O::V LogT(const O& o, typename O::V x) {
  using V = typename O::V;
  const V kMinNormal = o.Set(1.17549435082228750797e-38f);
  const auto is_sub = o.Lt(x, kMinNormal);
  const V xs = o.Select(is_sub, o.Mul(x, o.Set(8388608.0f)), x);
  auto ix = o.AsInt(xs);
  ix = o.AddI(ix, o.SetI(0x3F800000 - 0x3F3504F3));
  const auto k = o.SubI(o.SubI(o.template SarI<23>(ix), o.SetI(127)),
                        o.SelectI(is_sub, o.SetI(23), o.SetI(0)));
  ix = o.AddI(o.AndI(ix, o.SetI(0x007FFFFF)), o.SetI(0x3F3504F3));
  const V f = o.Sub(o.AsFloat(ix), o.Set(1.0f));
  const V s = o.Div(f, o.Add(o.Set(2.0f), f));
  const V z = o.Mul(s, s);
  const V w = o.Mul(z, z);
  const V t1 = o.Mul(w, o.Add(o.Set(0.40000972152f), o.Mul(w, o.Set(0.24279078841f))));
  const V t2 = o.Mul(z, o.Add(o.Set(0.66666662693f), o.Mul(w, o.Set(0.28498786688f))));
  const V R = o.Add(t2, t1);
  const V hfsq = o.Mul(o.Mul(o.Set(0.5f), f), f);
  const V dk = o.ToFloat(k);
  const V lo = o.Add(o.Mul(s, o.Add(hfsq, R)), o.Mul(dk, o.Set(9.0580006145e-06f)));
  V out = o.Sub(o.Mul(dk, o.Set(6.9313812256e-01f)), o.Sub(o.Sub(hfsq, lo), f));
  out = o.Select(o.Eq(x, o.Set(HUGE_VALF)), x, out);
  out = o.Select(o.Eq(x, o.Set(0.0f)), o.Set(-HUGE_VALF), out);
  return o.Select(o.Or(o.Lt(x, o.Set(0.0f)), o.IsNaN(x)), o.Set(NAN), out);
}

// Tanh: |x| < 0.5625 -> odd Taylor polynomial to x^21 (Horner in z = x^2 with FMA);
// otherwise sign(x) * (1 - 2/(exp(2|x|) + 1)). NaN -> NaN.
template <class O>
HWY_INLINE typename O::V TanhT(const O& o, typename O::V x) {
  using V = typename O::V;
  const V a = o.Abs(x);
  const V z = o.Mul(x, x);
  // Taylor coefficients of tanh (Bernoulli numbers), highest degree first: 2^-24 relative
  // truncation error is reached at |x| = 0.5625 with the x^21 term.
  V p = o.Set(9.691537956929451e-05f);
  p = o.Fma(p, z, o.Set(-2.3912911424355248e-04f));
  p = o.Fma(p, z, o.Set(5.90027440945586e-04f));
  p = o.Fma(p, z, o.Set(-1.4558343870513183e-03f));
  p = o.Fma(p, z, o.Set(3.592128036572481e-03f));
  p = o.Fma(p, z, o.Set(-8.863235529902197e-03f));
  p = o.Fma(p, z, o.Set(2.1869488536155203e-02f));
  p = o.Fma(p, z, o.Set(-5.396825396825397e-02f));
  p = o.Fma(p, z, o.Set(1.3333333333333333e-01f));
  p = o.Fma(p, z, o.Set(-3.3333333333333333e-01f));
  const V small = o.Fma(o.Mul(x, z), p, x);
  const V e = ExpT(o, o.Add(a, a));
  const V big = o.Sub(o.Set(1.0f), o.Div(o.Set(2.0f), o.Add(e, o.Set(1.0f))));
  const V out = o.Select(o.Lt(a, o.Set(0.5625f)), small, o.CopySignFrom(big, x));
  return o.Select(o.IsNaN(x), x, out);
}

// Sigmoid: 1 / (1 + exp(-x)).
template <class O>
HWY_INLINE typename O::V SigmoidT(const O& o, typename O::V x) {
  return o.Div(o.Set(1.0f), o.Add(o.Set(1.0f), ExpT(o, o.Neg(x))));
}

// GELU, tanh form: t = Tanh(c·(x + a·((x·x)·x))), y = (0.5·x)·(1 + t), with c = 0.7978845608
// (√(2/π) in binary32) and a = 0.044715, each operation rounded on its own.
template <class O>
HWY_INLINE typename O::V GeluTanhArgT(const O& o, typename O::V x) {
  const auto x3 = o.Mul(o.Mul(x, x), x);
  return o.Mul(o.Set(0.7978845608f), o.Add(x, o.Mul(o.Set(0.044715f), x3)));
}
template <class O>
HWY_INLINE typename O::V GeluT(const O& o, typename O::V x) {
  const auto t = TanhT(o, GeluTanhArgT(o, x));
  return o.Mul(o.Mul(o.Set(0.5f), x), o.Add(o.Set(1.0f), t));
}
// Its derivative: 0.5·(1 + t) + (0.5·x)·((1 − t·t)·(c·(1 + 3a·(x·x)))), 3a = 0.134145.
template <class O>
HWY_INLINE typename O::V GeluGradT(const O& o, typename O::V x) {
  const auto t = TanhT(o, GeluTanhArgT(o, x));
  const auto one = o.Set(1.0f), half = o.Set(0.5f);
  const auto inner = o.Mul(o.Set(0.7978845608f), o.Add(one, o.Mul(o.Set(0.134145f), o.Mul(x, x))));
  return o.Add(o.Mul(half, o.Add(one, t)),
               o.Mul(o.Mul(half, x), o.Mul(o.Sub(one, o.Mul(t, t)), inner)));
}

// Sin and cos share the reduction x = q*pi/2 + r, q = rne(x * 2/pi), with a four-part pi/2
// (the first two parts have short significands, so q*p1 and q*p2 are exact for |q| < 2^13 and
// the subtractions exact by Sterbenz where r is small; the last two enter through FMAs);
// then Cephes' minimax kernels on [-pi/4, pi/4] picked and signed by q mod 4.
// |x| > 2^20 or non-finite -> NaN.
template <class O>
HWY_INLINE void SinCosT(const O& o, typename O::V x, typename O::V* sin_out,
                        typename O::V* cos_out) {
  using V = typename O::V;
  const V kMaxArg = o.Set(1048576.0f);
  const auto bad = o.Or(o.IsNaN(x), o.Gt(o.Abs(x), kMaxArg));
  const V xc = o.Select(bad, o.Set(0.0f), x);
  const V magic = o.Set(12582912.0f);
  const V q = o.Sub(o.Add(o.Mul(xc, o.Set(0.636619746685028076171875f)), magic), magic);
  V r = o.Sub(xc, o.Mul(q, o.Set(1.5703125f)));
  r = o.Sub(r, o.Mul(q, o.Set(4.837512969970703125e-4f)));
  r = o.Fma(q, o.Set(-7.549790126404332e-08f), r);
  r = o.Fma(q, o.Set(1.7151245100058819e-15f), r);  // 4th part: near multiples of pi/2 it matters
  const V z = o.Mul(r, r);
  V ps = o.Set(-1.9515295891e-4f);
  ps = o.Fma(ps, z, o.Set(8.3321608736e-3f));
  ps = o.Fma(ps, z, o.Set(-1.6666654611e-1f));
  const V sr = o.Fma(o.Mul(r, z), ps, r);
  V pc = o.Set(2.443315711809948e-5f);
  pc = o.Fma(pc, z, o.Set(-1.388731625493765e-3f));
  pc = o.Fma(pc, z, o.Set(4.166664568298827e-2f));
  const V cr = o.Fma(o.Mul(z, z), pc, o.Fma(o.Set(-0.5f), z, o.Set(1.0f)));
  const auto n = o.AndI(o.ToInt(q), o.SetI(3));
  const auto swap = o.EqI(o.AndI(n, o.SetI(1)), o.SetI(1));
  const V s_base = o.Select(swap, cr, sr);
  const V c_base = o.Select(swap, sr, cr);
  // sin is negated for n in {2, 3}; cos for n in {1, 2}.
  const auto neg_s = o.EqI(o.AndI(n, o.SetI(2)), o.SetI(2));
  const auto neg_c = o.EqI(o.AndI(o.AddI(n, o.SetI(1)), o.SetI(2)), o.SetI(2));
  const V nan = o.Set(NAN);
  *sin_out = o.Select(bad, nan, o.Select(neg_s, o.Neg(s_base), s_base));
  *cos_out = o.Select(bad, nan, o.Select(neg_c, o.Neg(c_base), c_base));
}

}  // namespace trail::repops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TRAIL_REPOPS_MATH_INL_H_
