#include "repops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "repops/kernels.h"

namespace trail::repops {
namespace {

struct HeadView {
  int64_t T, hd, b;
  const AttentionShape* s;
  int64_t Lo(int64_t t) const { return s->window > 0 ? std::max<int64_t>(0, t - s->window + 1) : 0; }
  bool Allowed(int64_t t, int64_t j) const {
    if (s->doc_ids && s->doc_ids[b * T + j] != s->doc_ids[b * T + t]) return false;
    if (s->key_valid && !s->key_valid[b * T + j]) return false;
    return true;
  }
};

// Checks the shape, then runs f(head view, head index bh, offset of its [T, hd] block, 1/sqrt(hd))
// for every (batch, head) pair in parallel; heads are independent, so any split gives the same bits.
template <class F>
void ForEachHead(const AttentionShape& s, F&& f) {
  TRAIL_CHECK(s.batch > 0 && s.heads > 0 && s.seq > 0 && s.head_dim > 0,
              "attention: every dimension must be positive");
  TRAIL_CHECK(s.window >= 0, "attention: window must be >= 0, got ", s.window);
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  KernelPool().ParallelFor(static_cast<size_t>(s.batch * s.heads), [&](size_t bh) {
    const HeadView hv{s.seq, s.head_dim, static_cast<int64_t>(bh) / s.heads, &s};
    f(hv, bh, bh * s.seq * s.head_dim, scale);
  });
}

// Scores of a block of queries [t0, t1) against keys [klo, t1): S[i][j] = chain over d of
// fma(a[t0+i, d], b[klo+j, d], acc) from +0 — exactly the spec's score chain (and the GEMM's,
// docs/repops.md §3), computed for a block of queries at once so the GEMM kernel's register
// tiles do the work; entries outside a query's allowed keys are computed and discarded.
// Returns the keys' count (the row stride of S).
int64_t ScoreBlock(const Kernels& k, const float* a, const float* b, int64_t hd, int64_t t0,
                   int64_t t1, int64_t klo, std::vector<float>& S) {
  const int64_t n = t1 - klo;
  S.resize(static_cast<size_t>((t1 - t0) * n));
  k.gemm({t1 - t0, n, hd, a + t0 * hd, hd, 1, b + klo * hd, 1, hd, S.data(), n, false});
  return n;
}

constexpr int64_t kQueryBlock = 64;

}  // namespace

void AttentionForward(const AttentionShape& s, const float* q, const float* k, const float* v,
                      float* out, float* probs) {
  const int64_t T = s.seq, hd = s.head_dim;
  const Kernels& kern = ActiveKernels();
  ForEachHead(s, [&](const HeadView& hv, size_t bh, size_t off, float scale) {
    std::vector<float> S;
    int64_t t0 = 0, t1 = 0, klo = 0, n = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (t == t1) {  // scores of the next block of queries
        t0 = t, t1 = std::min(T, t + kQueryBlock), klo = hv.Lo(t0);
        n = ScoreBlock(kern, q + off, k + off, hd, t0, t1, klo, S);
      }
      float* p = probs + (bh * T + t) * T;
      float* o = out + off + t * hd;
      std::fill(p, p + T, 0.0f);
      std::fill(o, o + hd, 0.0f);
      const int64_t lo = hv.Lo(t), len = t - lo + 1;
      float* row = p + lo;
      std::copy_n(S.data() + (t - t0) * n + (lo - klo), len, row);
      bool any = false;
      for (int64_t j = lo; j <= t; ++j) {
        if (hv.Allowed(t, j)) {
          row[j - lo] = row[j - lo] * scale;
          any = true;
        } else {
          row[j - lo] = -HUGE_VALF;
        }
      }
      if (!any) {
        std::fill(row, row + len, 0.0f);
        continue;
      }
      kern.exp_sub(row, kern.max(row, len), row, len);  // disallowed keys: Exp(-inf) = +0
      const float inv = 1.0f / kern.sum(row, len);
      for (int64_t j = 0; j < len; ++j) row[j] = row[j] * inv;
      for (int64_t j = lo; j <= t; ++j)
        if (hv.Allowed(t, j)) kern.axpy(row[j - lo], v + off + j * hd, o, hd);
    }
  });
}

void AttentionBackward(const AttentionShape& s, const float* q, const float* k, const float* v,
                       const float* probs, const float* dout, float* dq, float* dk, float* dv) {
  const int64_t T = s.seq, hd = s.head_dim;
  const Kernels& kern = ActiveKernels();
  ForEachHead(s, [&](const HeadView& hv, size_t bh, size_t off, float scale) {
    std::vector<float> S, dp(T);
    int64_t t0 = 0, t1 = 0, klo = 0, n = 0;
    std::fill(dk + off, dk + off + T * hd, 0.0f);
    std::fill(dv + off, dv + off + T * hd, 0.0f);
    for (int64_t t = 0; t < T; ++t) {
      if (t == t1) {  // dP of the next block of queries
        t0 = t, t1 = std::min(T, t + kQueryBlock), klo = hv.Lo(t0);
        n = ScoreBlock(kern, dout + off, v + off, hd, t0, t1, klo, S);
      }
      const float* p = probs + (bh * T + t) * T;
      const float* go = dout + off + t * hd;
      float* gq = dq + off + t * hd;
      std::fill(gq, gq + hd, 0.0f);
      const int64_t lo = hv.Lo(t), len = t - lo + 1;
      std::copy_n(S.data() + (t - t0) * n + (lo - klo), len, dp.data());
      for (int64_t j = lo; j <= t; ++j)
        if (!hv.Allowed(t, j)) dp[j - lo] = 0.0f;
      const float D = kern.dot(p + lo, dp.data(), len);
      for (int64_t j = lo; j <= t; ++j) {
        if (!hv.Allowed(t, j)) continue;
        const float pj = p[j];
        const float ds = (pj * (dp[j - lo] - D)) * scale;
        kern.axpy(ds, k + off + j * hd, gq, hd);
        kern.axpy(ds, q + off + t * hd, dk + off + j * hd, hd);
        kern.axpy(pj, go, dv + off + j * hd, hd);
      }
    }
  });
}

}  // namespace trail::repops
