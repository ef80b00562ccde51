// Layer ops against float64 references (repops/layer_test_util.h says how backward ops are
// compared).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "core/philox.h"
#include "repops/activation.h"
#include "repops/attention.h"
#include "repops/cross_entropy.h"
#include "repops/embedding.h"
#include "repops/kernels.h"
#include "repops/math.h"
#include "repops/norm.h"
#include "repops/optim.h"
#include "repops/quantize.h"
#include "repops/rope.h"
#include "repops/softmax.h"
#include "repops/layer_test_util.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::ExpectClose;
using testing::ExpectDirectional;
using testing::F64;
using testing::Rand;
using testing::ToDouble;
std::vector<double> RmsNorm64(const std::vector<double>& x, const std::vector<double>* g, int64_t R,
                              int64_t D) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < D; ++i) ss += x[r * D + i] * x[r * D + i];
    const double s = 1 / std::sqrt(ss / D + 1e-5);
    for (int64_t i = 0; i < D; ++i) y[r * D + i] = x[r * D + i] * s * (g ? (*g)[i] : 1.0);
  }
  return y;
}

TEST(RmsNorm, ForwardAndBackward) {
  for (int64_t D : {1, 3, 17, 255, 1000}) {
    const int64_t R = 3;
    const auto x = Rand(R * D, 1, 2.0f), gain = Rand(D, 2), w = Rand(R * D, 3);
    const auto g64 = ToDouble(gain);
    std::vector<float> y(R * D), rstd(R), dx(R * D), dg(D, 0.0f);
    RmsNormForward(x.data(), gain.data(), 1e-5f, R, D, y.data(), rstd.data());
    // Each output is x·rstd·g with rstd from a D-term sum: relative error ~ (D/2 + 4)·2^-24.
    ExpectClose(y, RmsNorm64(ToDouble(x), &g64, R, D), 1e-4, 1e-6, "rmsnorm y");
    RmsNormBackward(w.data(), x.data(), gain.data(), rstd.data(), R, D, dx.data(), dg.data());
    ExpectDirectional([&](const std::vector<double>& xx) { return RmsNorm64(xx, &g64, R, D); }, x,
                      w, dx, 4, "rmsnorm dx");
    ExpectDirectional(
        [&](const std::vector<double>& gg) { return RmsNorm64(ToDouble(x), &gg, R, D); }, gain, w,
        dg, 5, "rmsnorm dgain");
  }
}

std::vector<double> Softmax64(const std::vector<double>& x, int64_t R, int64_t N) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < R; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < N; ++i) m = std::max(m, x[r * N + i]);
    for (int64_t i = 0; i < N; ++i) s += std::exp(x[r * N + i] - m);
    for (int64_t i = 0; i < N; ++i) y[r * N + i] = std::exp(x[r * N + i] - m) / s;
  }
  return y;
}

TEST(Softmax, ForwardAndBackward) {
  for (int64_t N : {1, 3, 17, 255, 1000}) {
    const int64_t R = 4;
    const auto x = Rand(R * N, 10, 5.0f), w = Rand(R * N, 11);
    std::vector<float> y(R * N), dx(R * N);
    SoftmaxForward(x.data(), R, N, y.data());
    // exp within 1.5 ULP, a sum of N terms, one reciprocal and one multiply.
    ExpectClose(y, Softmax64(ToDouble(x), R, N), 2e-6 + N * 1e-7, 1e-12, "softmax");
    SoftmaxBackward(y.data(), w.data(), R, N, dx.data());
    ExpectDirectional([&](const std::vector<double>& xx) { return Softmax64(xx, R, N); }, x, w, dx,
                      12, "softmax dx");
  }
}

double Sig(double a) { return 1 / (1 + std::exp(-a)); }

// The elementwise primitives gelu, gelu_backward, mul_add and mul give the scalar reference's bits
// on every backend, for edge inputs (±0, ±inf, NaN, subnormals, huge values) and an odd tail, and
// mul_add is one fused operation: (1 + 2^-12)·(1 - 2^-12) + (-1) is -2^-24 fused, +0 rounded.
TEST(Activations, ElementwisePrimitivesGiveTheReferenceBitsOnEveryBackend) {
  std::vector<float> x = Rand(517, 95, 8.0f);
  const float edge[] = {0.0f,  -0.0f,  INFINITY, -INFINITY, NAN,     1e-40f,  -1e-40f,
                        1e30f, -1e30f, 9.0f,     -9.0f,     0.5625f, -0.5625f};
  std::copy(std::begin(edge), std::end(edge), x.begin() + 3);
  const std::vector<float> dy = Rand(x.size(), 96), b = Rand(x.size(), 97);
  const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
    const Kernels& k = ActiveKernels();
    std::vector<float> y(x.size()), dx(x.size()), acc = dy;
    k.gelu(x.data(), y.data(), x.size());
    k.gelu_backward(dy.data(), x.data(), dx.data(), x.size());
    k.mul_add(x.data(), b.data(), acc.data(), x.size());
    std::vector<float> fused(1, -1.0f);
    const float u = 1.0f + 0x1p-12f, v = 1.0f - 0x1p-12f;
    k.mul_add(&u, &v, fused.data(), 1);
    std::vector<float> prod(x.size()), scaled(x.size());
    k.mul(x.data(), b.data(), 1, prod.data(), x.size());
    k.mul(x.data(), &b[5], 0, scaled.data(), x.size());
    for (const auto* part : {&dx, &acc, &fused, &prod, &scaled})
      y.insert(y.end(), part->begin(), part->end());
    return y;
  });
  const std::vector<float>& ref = results[0].second;
  const size_t n = x.size();
  for (size_t i = 0; i < n; ++i) {  // the reference backend is the scalar forms
    const auto same = [](float a, float e) { return std::memcmp(&a, &e, 4) == 0; };
    ASSERT_TRUE(same(ref[i], Gelu(x[i]))) << "gelu at " << x[i];
    ASSERT_TRUE(same(ref[n + i], dy[i] * GeluGrad(x[i]))) << "gelu_backward at " << x[i];
    ASSERT_TRUE(same(ref[2 * n + i], std::fma(x[i], b[i], dy[i]))) << "mul_add at " << i;
  }
  EXPECT_EQ(ref[3 * n], -0x1p-24f);
  for (size_t i = 0; i < n; ++i) {
    const auto same = [](float a, float e) { return std::memcmp(&a, &e, 4) == 0; };
    ASSERT_TRUE(same(ref[3 * n + 1 + i], x[i] * b[i])) << "mul at " << i;
    ASSERT_TRUE(same(ref[4 * n + 1 + i], x[i] * b[5])) << "mul by one value at " << i;
  }
  for (const auto& [label, v] : results)
    EXPECT_EQ(testing::HashOf(v), testing::HashOf(ref)) << label;
}

TEST(Activations, SwiGluAndGelu) {
  for (int64_t n : {1, 3, 17, 255, 1000, 10007}) {  // 10007 spans several parallel chunks
    const auto a = Rand(n, 20, 6.0f), b = Rand(n, 21, 2.0f), w = Rand(n, 22);
    std::vector<float> h(n), da(n), db(n);
    auto swiglu = [&](const std::vector<double>& aa, const std::vector<double>& bb) {
      std::vector<double> o(n);
      for (int64_t i = 0; i < n; ++i) o[i] = aa[i] * Sig(aa[i]) * bb[i];
      return o;
    };
    SwiGluForward(a.data(), b.data(), n, h.data());
    ExpectClose(h, swiglu(ToDouble(a), ToDouble(b)), 1e-6, 1e-7, "swiglu");
    SwiGluBackward(w.data(), a.data(), b.data(), n, da.data(), db.data());
    ExpectDirectional([&](const std::vector<double>& aa) { return swiglu(aa, ToDouble(b)); }, a, w,
                      da, 23, "swiglu da");
    ExpectDirectional([&](const std::vector<double>& bb) { return swiglu(ToDouble(a), bb); }, b, w,
                      db, 24, "swiglu db");
    auto gelu = [&](const std::vector<double>& xx) {
      std::vector<double> o(n);
      for (int64_t i = 0; i < n; ++i)
        o[i] = 0.5 * xx[i] *
               (1 + std::tanh(std::sqrt(2 / M_PI) * (xx[i] + 0.044715 * xx[i] * xx[i] * xx[i])));
      return o;
    };
    GeluForward(a.data(), n, h.data());
    // The tanh-form constants are rounded to binary32 (7 digits): relative error ~1e-7 each.
    ExpectClose(h, gelu(ToDouble(a)), 2e-6, 1e-6, "gelu");
    GeluBackward(w.data(), a.data(), n, da.data());
    ExpectDirectional(gelu, a, w, da, 25, "gelu dx");
  }
}

// Llama 3's scaling against Hugging Face's formula in float64 (_compute_llama3_parameters):
// within a few ULP (trail's Exp/Log, then five rounded operations), and each band where it
// belongs: kept, blended, divided by the factor.
TEST(Rope, Llama3ScalingFollowsTheReferenceFormula) {
  const RopeScaling s{
      .factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f, .original_max_pos = 1024};
  const int64_t hd = 64;
  const std::vector<float> plain = RopeInvFreq(hd, 500000.0f),
                           scaled = RopeInvFreq(hd, 500000.0f, s);
  int kept = 0, blended = 0, divided = 0;
  for (int64_t i = 0; i < hd / 2; ++i) {
    const double inv = std::pow(500000.0, -double(2 * i) / double(hd));
    const double w = 2 * M_PI / inv;
    double want = w > 1024.0 ? inv / 8 : inv;
    if (!(w < 256.0) && !(w > 1024.0)) {
      const double sm = (1024.0 / w - 1.0) / (4.0 - 1.0);
      want = (1 - sm) * want / 8 + sm * want;
      ++blended;
    } else {
      ++(w < 256.0 ? kept : divided);
    }
    EXPECT_NEAR(scaled[i], want, 2e-6 * want) << i;
    EXPECT_NEAR(plain[i], inv, 2e-6 * inv) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(blended, 0);
  EXPECT_GT(divided, 0);
  RopeScaling bad = s;
  bad.high_freq_factor = 0.5f;
  EXPECT_THROW(RopeInvFreq(hd, 500000.0f, bad), Error);
  bad = s, bad.factor = 0.5f;
  EXPECT_THROW(RopeInvFreq(hd, 500000.0f, bad), Error);
}

TEST(Rope, RotatesLikeFloat64AndBackwardIsTheTranspose) {
  const int64_t hd = 16, rows = 255, max_pos = 4096;
  const RopeTable t = MakeRopeTable(max_pos, hd, 10000.0f);
  std::vector<int32_t> pos(rows);
  for (int64_t r = 0; r < rows; ++r) pos[r] = static_cast<int32_t>((r * 61) % max_pos);
  const auto x = Rand(rows * hd, 30), w = Rand(rows * hd, 31);
  auto rope = [&](const std::vector<double>& xx) {
    std::vector<double> y(xx.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < hd / 2; ++i) {
        const double ang = pos[r] * std::pow(10000.0, -2.0 * i / hd);
        const double x0 = xx[r * hd + i], x1 = xx[r * hd + i + hd / 2];
        y[r * hd + i] = x0 * std::cos(ang) - x1 * std::sin(ang);
        y[r * hd + i + hd / 2] = x0 * std::sin(ang) + x1 * std::cos(ang);
      }
    return y;
  };
  std::vector<float> y = x;
  RopeApply(y.data(), rows, hd, pos.data(), t, false);
  // Angles up to 4095 rad: the binary32 angle itself is off by up to 2^-13 absolute (one ULP of
  // 4095 is 2^-12), so the rotated values may differ from float64 by ~3e-4.
  ExpectClose(y, rope(ToDouble(x)), 0, 5e-4, "rope");
  std::vector<float> g = w;
  RopeApply(g.data(), rows, hd, pos.data(), t, true);
  // Directional check on a float32-exact rotation: use the table's own cos/sin in float64.
  auto rope_table = [&](const std::vector<double>& xx) {
    std::vector<double> yy(xx.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < hd / 2; ++i) {
        const double c = t.cos[pos[r] * hd / 2 + i], s = t.sin[pos[r] * hd / 2 + i];
        yy[r * hd + i] = xx[r * hd + i] * c - xx[r * hd + i + hd / 2] * s;
        yy[r * hd + i + hd / 2] = xx[r * hd + i] * s + xx[r * hd + i + hd / 2] * c;
      }
    return yy;
  };
  ExpectDirectional(rope_table, x, w, g, 32, "rope backward");
}

TEST(Embedding, LookupAndOrderedScatterAdd) {
  const int64_t V = 17, D = 255, n = 1000;
  const auto table = Rand(V * D, 40), dout = Rand(n * D, 41);
  std::vector<int32_t> tok(n);
  for (int64_t i = 0; i < n; ++i) tok[i] = static_cast<int32_t>((i * i + 3) % V);
  std::vector<float> out(n * D), dt(V * D, 0.0f);
  EmbeddingForward(table.data(), V, D, tok.data(), n, out.data());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp(out.data() + i * D, table.data() + tok[i] * D, D * 4), 0);
  EmbeddingBackward(dout.data(), tok.data(), n, V, D, dt.data());
  std::vector<float> seq(V * D, 0.0f);  // the canonical order, written plainly
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < D; ++j) seq[tok[i] * D + j] += dout[i * D + j];
  EXPECT_EQ(testing::HashOf(dt), testing::HashOf(seq));
  tok[5] = static_cast<int32_t>(V);
  EXPECT_THROW(EmbeddingForward(table.data(), V, D, tok.data(), n, out.data()), Error);
}

TEST(CrossEntropy, LossAndGradientWithIgnoreAndZLoss) {
  for (int64_t V : {1, 3, 17, 255, 1000}) {
    const int64_t R = 7;
    const float z = 1e-3f;
    const auto logits = Rand(R * V, 50, 6.0f);
    std::vector<int32_t> tgt = {3, -100, 999, 0, 500, -100, 17};
    for (int32_t& t : tgt) t = t == -100 ? t : static_cast<int32_t>(t % V);
    auto loss64 = [&](const std::vector<double>& x) {
      double total = 0;
      for (int64_t r = 0; r < R; ++r) {
        if (tgt[r] == -100) continue;
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < V; ++j) m = std::max(m, x[r * V + j]);
        for (int64_t j = 0; j < V; ++j) s += std::exp(x[r * V + j] - m);
        const double lse = m + std::log(s);
        total += (lse - x[r * V + tgt[r]]) + z * lse * lse;
      }
      return std::vector<double>{total / 5.0};
    };
    std::vector<float> lse(R), d(R * V);
    const CrossEntropySums s =
        CrossEntropyForward(logits.data(), tgt.data(), R, V, -100, lse.data());
    EXPECT_EQ(s.valid, 5);
    const double got = (double(s.nll_sum) + z * double(s.lse_sq_sum)) / 5.0;
    EXPECT_NEAR(got, loss64(ToDouble(logits))[0], 1e-5 * std::fabs(got));
    CrossEntropyBackward(logits.data(), tgt.data(), lse.data(), R, V, -100, 1.0f / 5, z, d.data());
    for (int64_t j = 0; j < V; ++j) EXPECT_EQ(d[1 * V + j], 0.0f);
    ExpectDirectional(loss64, logits, {1.0f}, d, 51, "cross-entropy dlogits");
    std::vector<int32_t> bad = tgt;
    bad[2] = static_cast<int32_t>(V);
    EXPECT_THROW(CrossEntropyForward(logits.data(), bad.data(), R, V, -100, lse.data()), Error);
  }
}

TEST(Optimizer, AdamWMatchesFloat64AndClipScales) {
  const int64_t n = 255;
  auto p = Rand(n, 80), g = Rand(n, 81, 0.1f);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  std::vector<double> p64 = ToDouble(p);
  AdamWHyper h{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f};
  for (int64_t t = 1; t <= 5; ++t) AdamWStep(p.data(), g.data(), m.data(), v.data(), n, h, t);
  std::vector<double> m64(n, 0), v64(n, 0);
  for (int t = 1; t <= 5; ++t)
    for (int64_t i = 0; i < n; ++i) {
      m64[i] = 0.9 * m64[i] + 0.1 * g[i];
      v64[i] = 0.95 * v64[i] + 0.05 * double(g[i]) * g[i];
      const double mh = m64[i] / (1 - std::pow(0.9, t)), vh = v64[i] / (1 - std::pow(0.95, t));
      p64[i] = p64[i] * (1 - 1e-2 * 0.1) - 1e-2 * mh / (std::sqrt(vh) + 1e-8);
    }
  // Five updates of size ~lr, each with ~10 roundings relative to lr: 1e-6 absolute is ample.
  ExpectClose(p, p64, 0, 1e-6, "adamw");
  std::vector<float> g1 = Rand(100, 82, 1.0f);
  const GradSpan spans[] = {{g1.data(), 100}};
  const float norm = GlobalGradNorm(spans);
  double n64 = 0;
  for (float x : g1) n64 += double(x) * x;
  EXPECT_NEAR(norm, std::sqrt(n64), 1e-6 * std::sqrt(n64));
  float* ptrs[] = {g1.data()};
  const int64_t sizes[] = {100};
  const float coef = ClipGradNorm(ptrs, sizes, norm, 1.0f);
  EXPECT_LT(coef, 1.0f);
  const GradSpan after[] = {{g1.data(), 100}};
  EXPECT_NEAR(GlobalGradNorm(after), 1.0f, 1e-5);
}

}  // namespace
}  // namespace trail::repops

namespace trail::repops {
namespace {

// FillNormal against Box-Muller in float64 on the same Philox words. The binary32 angle
// 6.28318548f * u2 is off by up to ulp(2pi)/2 + |6.28318548f - 2pi| ~ 4.2e-7 absolute, which cos
// passes on with slope <= 1 and the radius r = sqrt(-2 ln u1) scales; Log, Cos, sqrt and the
// products add a few ULP relative. So |x - x64| <= 5e-7 * r + 1e-6 * |x64|. The sample moments
// check the draws are standard normal (5 sigma for 2^17 draws).
TEST(Random, NormalMatchesFloat64BoxMullerAndMoments) {
  const int64_t n = 1 << 17;
  std::vector<float> x(n);
  FillNormal(x.data(), n, 42, 7, 0.0f, 1.0f);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const PhiloxBlock blk = Philox4x32(42, 7, i);
    const double u1 = ((blk[0] >> 8) + 1) * 0x1p-24, u2 = (blk[1] >> 8) * 0x1p-24;
    const double r = std::sqrt(-2 * std::log(u1));
    const double ref = r * std::cos(2 * M_PI * u2);
    ASSERT_NEAR(x[i], ref, 5e-7 * r + 1e-6 * std::fabs(ref)) << i;
    sum += x[i];
    sq += double(x[i]) * x[i];
  }
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(double(n)));
  EXPECT_NEAR(sq / n, 1.0, 5 * std::sqrt(2.0 / n));
  std::vector<float> u(n);
  FillUniform(u.data(), n, 42, 8, -2.0f, 3.0f);
  for (float v : u) ASSERT_TRUE(v >= -2.0f && v < 3.0f);
}

TEST(Quantize, DequantizeAndArgmax) {
  const int32_t c[] = {3, -7, 1 << 24, 0};
  const float sa[] = {0.5f, 0.25f}, sb[] = {2.0f, 0.1f};
  float y[4];
  DequantizeI32(c, sa, sb, 2, 2, y);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], (-7.0f * 0.5f) * 0.1f);
  EXPECT_EQ(y[2], 8388608.0f);
  const float x[] = {1, 5, 5, 2, /**/ -1, NAN, 7, NAN};
  int32_t am[2];
  ArgmaxRows(x, 2, 4, am);
  EXPECT_EQ(am[0], 1);  // the first of equal maxima
  EXPECT_EQ(am[1], 1);  // the first NaN
}

// Row ops give each row the same bits whether it is computed among 64 rows or alone.
TEST(RowOps, IndependentOfBatchComposition) {
  const int64_t R = 64, D = 255;
  const auto x = Rand(R * D, 90, 3.0f), gain = Rand(D, 91);
  std::vector<int32_t> tgt(R);
  for (int64_t r = 0; r < R; ++r) tgt[r] = static_cast<int32_t>((r * 31) % D);
  std::vector<float> y(R * D), rstd(R), sm(R * D), lse(R), d(R * D);
  RmsNormForward(x.data(), gain.data(), 1e-5f, R, D, y.data(), rstd.data());
  SoftmaxForward(x.data(), R, D, sm.data());
  CrossEntropyForward(x.data(), tgt.data(), R, D, -1, lse.data());
  CrossEntropyBackward(x.data(), tgt.data(), lse.data(), R, D, -1, 0.5f, 1e-4f, d.data());
  for (int64_t r : {0, 17, 63}) {
    std::vector<float> y1(D), rs1(1), sm1(D), lse1(1), d1(D);
    RmsNormForward(x.data() + r * D, gain.data(), 1e-5f, 1, D, y1.data(), rs1.data());
    SoftmaxForward(x.data() + r * D, 1, D, sm1.data());
    CrossEntropyForward(x.data() + r * D, &tgt[r], 1, D, -1, lse1.data());
    CrossEntropyBackward(x.data() + r * D, &tgt[r], lse1.data(), 1, D, -1, 0.5f, 1e-4f, d1.data());
    EXPECT_EQ(std::memcmp(y1.data(), y.data() + r * D, D * 4), 0) << "rmsnorm row " << r;
    EXPECT_EQ(std::memcmp(sm1.data(), sm.data() + r * D, D * 4), 0) << "softmax row " << r;
    EXPECT_EQ(testing::Bits(lse1[0]), testing::Bits(lse[r])) << "lse row " << r;
    EXPECT_EQ(std::memcmp(d1.data(), d.data() + r * D, D * 4), 0) << "dlogits row " << r;
  }
}

}  // namespace
}  // namespace trail::repops
