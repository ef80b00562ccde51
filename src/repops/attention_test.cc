// Attention against float64 (masks, windows, grouped-query heads), and the tiled products
// against the spec's full chains on every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "repops/attention.h"
#include "repops/layer_test_util.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::ExpectClose;
using testing::ExpectDirectional;
using testing::Rand;
using testing::ToDouble;

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

}  // namespace
}  // namespace trail::repops
