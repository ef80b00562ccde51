// Layer ops against float64 references. Forward outputs are compared elementwise; backward ops
// by a directional derivative: for random w and r, <backward(w), r> must equal
// (w·f64(x + h r) - w·f64(x - h r)) / 2h. With h = 1e-4 in float64 the central difference is
// accurate to ~1e-8 relative; the float32 backward carries ~n·2^-24 relative error for rows of
// n <= 1000, so 1e-3 relative to |backward(w)|·|r| is a tolerance ten times wider than both.
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
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::Rand;
using testing::ToDouble;
using F64 = std::function<std::vector<double>(const std::vector<double>&)>;

void ExpectClose(const std::vector<float>& got, const std::vector<double>& ref, double rel,
                 double abs, const char* what) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], ref[i], abs + rel * std::fabs(ref[i])) << what << " at " << i;
}

// <g, r> against the central difference of w·f along r.
void ExpectDirectional(const F64& f, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& g, uint64_t stream, const char* what) {
  const auto r = ToDouble(Rand(x.size(), stream));
  const double h = 1e-4;
  std::vector<double> xp = ToDouble(x), xm = ToDouble(x);
  for (size_t i = 0; i < x.size(); ++i) xp[i] += h * r[i], xm[i] -= h * r[i];
  const auto fp = f(xp), fm = f(xm);
  double fd = 0, an = 0;
  for (size_t i = 0; i < fp.size(); ++i) fd += double(w[i]) * (fp[i] - fm[i]) / (2 * h);
  for (size_t i = 0; i < g.size(); ++i) an += double(g[i]) * r[i];
  const double scale = testing::Norm(ToDouble(g)) * testing::Norm(r);
  EXPECT_NEAR(an, fd, 1e-3 * scale + 1e-9) << what;
}

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

// Float64 attention with the same masks.
std::vector<double> Attention64(const AttentionShape& s, const std::vector<double>& q,
                                const std::vector<double>& k, const std::vector<double>& v) {
  const int64_t T = s.seq, hd = s.head_dim;
  const int64_t Hkv = s.kv_heads > 0 ? s.kv_heads : s.heads, group = s.heads / Hkv;
  std::vector<double> out(q.size(), 0.0);
  for (int64_t bh = 0; bh < s.batch * s.heads; ++bh) {
    const int64_t b = bh / s.heads, off = bh * T * hd;
    const int64_t kv = (b * Hkv + bh % s.heads / group) * T * hd;  // its K/V head's block
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> sc(T, -INFINITY);
      double m = -INFINITY;
      for (int64_t j = 0; j <= t; ++j) {
        if (s.window > 0 && t - j >= s.window) continue;
        if (s.doc_ids && s.doc_ids[b * T + j] != s.doc_ids[b * T + t]) continue;
        if (s.key_valid && !s.key_valid[b * T + j]) continue;
        double d = 0;
        for (int64_t e = 0; e < hd; ++e) d += q[off + t * hd + e] * k[kv + j * hd + e];
        sc[j] = d / std::sqrt(double(hd));
        m = std::max(m, sc[j]);
      }
      if (m == -INFINITY) continue;
      double sum = 0;
      for (int64_t j = 0; j <= t; ++j) sum += std::exp(sc[j] - m);
      for (int64_t j = 0; j <= t; ++j) {
        const double p = std::exp(sc[j] - m) / sum;
        for (int64_t e = 0; e < hd; ++e) out[off + t * hd + e] += p * v[kv + j * hd + e];
      }
    }
  }
  return out;
}

// Variant 3's document ids come back after another document (0, 1, 0 in a row): the queries
// after that take the per-key mask test, those before it (and every query of variants 0-2) the
// allowed-interval form.
TEST(Attention, MasksForwardAndBackward) {
  AttentionShape s;
  s.batch = 2, s.heads = 2, s.seq = 17, s.head_dim = 8;
  std::vector<int32_t> docs(s.batch * s.seq), returning(s.batch * s.seq);
  std::vector<uint8_t> valid(s.batch * s.seq, 1);
  for (int64_t i = 0; i < s.batch * s.seq; ++i) {
    docs[i] = static_cast<int32_t>((i % s.seq) / 7);
    returning[i] = docs[i] % 2;
  }
  valid[0] = 0;  // query 0 of batch 0 sees no key at all
  valid[s.seq + 3] = 0;
  for (int variant = 0; variant < 4; ++variant) {
    s.window = variant == 1 || variant == 2 ? 4 : 0;
    s.doc_ids = variant == 2 ? docs.data() : variant == 3 ? returning.data() : nullptr;
    s.key_valid = variant >= 2 ? valid.data() : nullptr;
    const int64_t n = s.batch * s.heads * s.seq * s.head_dim;
    const auto q = Rand(n, 60, 2.0f), k = Rand(n, 61, 2.0f), v = Rand(n, 62), w = Rand(n, 63);
    std::vector<float> out(n), probs(s.batch * s.heads * s.seq * s.seq), dq(n), dk(n), dv(n);
    AttentionForward(s, q.data(), k.data(), v.data(), out.data(), probs.data());
    ExpectClose(out, Attention64(s, ToDouble(q), ToDouble(k), ToDouble(v)), 1e-5, 1e-6, "attn");
    AttentionBackward(s, q.data(), k.data(), v.data(), probs.data(), w.data(), dq.data(), dk.data(),
                      dv.data());
    const auto q64 = ToDouble(q), k64 = ToDouble(k), v64 = ToDouble(v);
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, x, k64, v64); }, q,
                      w, dq, 64, "attn dq");
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, q64, x, v64); }, k,
                      w, dk, 65, "attn dk");
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, q64, k64, x); }, v,
                      w, dv, 66, "attn dv");
  }
}

// Grouped-query attention (6 query heads on 3 or 1 K/V heads, with windows and document
// masks) against float64, forward and backward; its dk, dv are the sums over each group's
// query heads, in ascending head order, of what each query head alone gives.
TEST(Attention, GroupedQueryHeadsMatchFloat64AndSumTheirGroupsInOrder) {
  for (int64_t kv_heads : {3, 1}) {
    AttentionShape s;
    s.batch = 2, s.heads = 6, s.seq = 13, s.head_dim = 8, s.kv_heads = kv_heads;
    s.window = kv_heads == 1 ? 5 : 0;
    std::vector<int32_t> docs(s.batch * s.seq);
    for (int64_t i = 0; i < s.batch * s.seq; ++i) docs[i] = static_cast<int32_t>((i % s.seq) / 5);
    if (kv_heads == 1) s.doc_ids = docs.data();
    const int64_t block = s.seq * s.head_dim, nq = s.batch * s.heads * block,
                  nkv = s.batch * kv_heads * block;
    const auto q = Rand(nq, 140, 2.0f), k = Rand(nkv, 141, 2.0f), v = Rand(nkv, 142),
               w = Rand(nq, 143);
    std::vector<float> out(nq), probs(s.batch * s.heads * s.seq * s.seq), dq(nq), dk(nkv), dv(nkv);
    AttentionForward(s, q.data(), k.data(), v.data(), out.data(), probs.data());
    const auto q64 = ToDouble(q), k64 = ToDouble(k), v64 = ToDouble(v);
    ExpectClose(out, Attention64(s, q64, k64, v64), 1e-5, 1e-6, "gqa attn");
    AttentionBackward(s, q.data(), k.data(), v.data(), probs.data(), w.data(), dq.data(), dk.data(),
                      dv.data());
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, x, k64, v64); }, q,
                      w, dq, 144, "gqa dq");
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, q64, x, v64); }, k,
                      w, dk, 145, "gqa dk");
    ExpectDirectional([&](const std::vector<double>& x) { return Attention64(s, q64, k64, x); }, v,
                      w, dv, 146, "gqa dv");
    // The same heads as multi-head attention on the K/V heads repeated (exact copies): equal
    // outputs, and each query head's dk_h, dv_h, which the group sums add in head order.
    const int64_t group = s.heads / kv_heads;
    std::vector<float> k_rep(nq), v_rep(nq);
    for (int64_t bh = 0; bh < s.batch * s.heads; ++bh) {
      const int64_t kv = bh / s.heads * kv_heads + bh % s.heads / group;
      std::copy_n(k.data() + kv * block, block, k_rep.data() + bh * block);
      std::copy_n(v.data() + kv * block, block, v_rep.data() + bh * block);
    }
    AttentionShape mha = s;
    mha.kv_heads = 0;
    std::vector<float> out_m(nq), probs_m(probs.size()), dq_m(nq), dk_m(nq), dv_m(nq);
    AttentionForward(mha, q.data(), k_rep.data(), v_rep.data(), out_m.data(), probs_m.data());
    AttentionBackward(mha, q.data(), k_rep.data(), v_rep.data(), probs_m.data(), w.data(),
                      dq_m.data(), dk_m.data(), dv_m.data());
    EXPECT_EQ(testing::HashOf(out), testing::HashOf(out_m));
    EXPECT_EQ(testing::HashOf(probs), testing::HashOf(probs_m));
    EXPECT_EQ(testing::HashOf(dq), testing::HashOf(dq_m));
    std::vector<float> dk_sum(nkv), dv_sum(nkv);
    for (int64_t g = 0; g < s.batch * kv_heads; ++g) {
      const int64_t first = (g / kv_heads * s.heads + g % kv_heads * group) * block;
      for (int64_t e = 0; e < block; ++e) {
        float a = dk_m[first + e], b = dv_m[first + e];
        for (int64_t i = 1; i < group; ++i) a = a + dk_m[first + i * block + e];
        for (int64_t i = 1; i < group; ++i) b = b + dv_m[first + i * block + e];
        dk_sum[g * block + e] = a, dv_sum[g * block + e] = b;
      }
    }
    EXPECT_EQ(testing::HashOf(dk), testing::HashOf(dk_sum)) << kv_heads;
    EXPECT_EQ(testing::HashOf(dv), testing::HashOf(dv_sum)) << kv_heads;
  }
  AttentionShape bad;
  bad.heads = 6, bad.kv_heads = 4;
  std::vector<float> x(6 * 8);
  EXPECT_THROW(AttentionForward(bad, x.data(), x.data(), x.data(), x.data(), x.data()), Error);
}

// The spec's products, written as full-length chains: c[i, :] = (chain over u of
// fma(A(i, u), B[u, :], acc), from +0) + (+0), A(i, u) = a[i*a_rs + u*a_cs].
std::vector<float> FullChain(const float* a, int64_t a_rs, int64_t a_cs, const float* b,
                             int64_t rows, int64_t len, int64_t hd) {
  std::vector<float> c(rows * hd);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t d = 0; d < hd; ++d) {
      float acc = 0.0f;
      for (int64_t u = 0; u < len; ++u) acc = std::fma(a[i * a_rs + u * a_cs], b[u * hd + d], acc);
      c[i * hd + d] = acc + 0.0f;
    }
  return c;
}

// The tiled products that skip masked blocks end on the full chains' bits, on every backend —
// also when a masked key's value is non-finite (then nothing may be skipped: its NaN reaches
// the outputs as the full chain has it). T = 150 spans several 64-query tiles and a window.
TEST(Attention, TiledProductsEqualTheFullChainsOfTheSpec) {
  AttentionShape s;
  s.batch = 1, s.heads = 2, s.seq = 150, s.head_dim = 16, s.window = 70;
  const int64_t T = s.seq, hd = s.head_dim, n = s.heads * T * hd;
  std::vector<int32_t> docs(T);
  for (int64_t t = 0; t < T; ++t) docs[t] = static_cast<int32_t>(t / 40);
  s.doc_ids = docs.data();
  for (bool poison : {false, true}) {
    auto q = Rand(n, 90, 2.0f), k = Rand(n, 91, 2.0f), v = Rand(n, 92), w = Rand(n, 93);
    if (poison) v[5 * hd + 3] = INFINITY;  // key 5 of head 0: masked for every query >= 40
    const auto results = testing::OnEveryBackend<std::vector<float>>([&] {
      std::vector<float> out(n), probs(s.heads * T * T), dq(n), dk(n), dv(n);
      AttentionForward(s, q.data(), k.data(), v.data(), out.data(), probs.data());
      AttentionBackward(s, q.data(), k.data(), v.data(), probs.data(), w.data(), dq.data(),
                        dk.data(), dv.data());
      std::vector<float> all = out;
      for (const auto* x : {&probs, &dq, &dk, &dv}) all.insert(all.end(), x->begin(), x->end());
      return all;
    });
    const std::vector<float>& r = results[0].second;
    for (const auto& [label, x] : results)
      EXPECT_EQ(testing::HashOf(x), testing::HashOf(r)) << label << (poison ? " poisoned" : "");
    const float* probs = r.data() + n;
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t off = h * T * hd;
      const float* P = probs + h * T * T;
      const auto out = FullChain(P, T, 1, v.data() + off, T, T, hd);
      EXPECT_EQ(std::memcmp(out.data(), r.data() + off, T * hd * 4), 0) << "out, head " << h;
      // dS from the outputs: dq = dS·K must hold for the dS the spec defines; check dv = Pᵀ·w.
      const auto dv_full = FullChain(P, 1, T, w.data() + off, T, T, hd);
      const float* dv_got = r.data() + n + s.heads * T * T + 2 * n + off;
      EXPECT_EQ(std::memcmp(dv_full.data(), dv_got, T * hd * 4), 0) << "dv, head " << h;
    }
    if (poison) {  // out[t] for t >= 40 never attends key 5, yet the full chain carries its NaN
      EXPECT_TRUE(std::isnan(r[100 * hd + 3]));
      EXPECT_FALSE(std::isnan(r[100 * hd + 2]));
    }
  }
}

// A sequence's attention output does not depend on the other sequences in its batch.
TEST(Attention, IndependentOfBatchComposition) {
  AttentionShape big;
  big.batch = 4, big.heads = 2, big.seq = 33, big.head_dim = 16, big.window = 9;
  const int64_t per = big.heads * big.seq * big.head_dim, n = big.batch * per;
  const auto q = Rand(n, 70), k = Rand(n, 71), v = Rand(n, 72);
  std::vector<float> out(n), probs(big.batch * big.heads * big.seq * big.seq);
  AttentionForward(big, q.data(), k.data(), v.data(), out.data(), probs.data());
  AttentionShape one = big;
  one.batch = 1;
  std::vector<float> o1(per), p1(big.heads * big.seq * big.seq);
  AttentionForward(one, q.data() + 2 * per, k.data() + 2 * per, v.data() + 2 * per, o1.data(),
                   p1.data());
  EXPECT_EQ(std::memcmp(o1.data(), out.data() + 2 * per, per * 4), 0);
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
