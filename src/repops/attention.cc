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

// rows[j][d] -> cols[d][j], so one query's scores over keys are a row of FMAs across lanes.
void Transpose(const float* rows, int64_t T, int64_t hd, float* cols) {
  for (int64_t j = 0; j < T; ++j)
    for (int64_t d = 0; d < hd; ++d) cols[d * T + j] = rows[j * hd + d];
}

// s[lo..t] = chain over d of fma(a[d], bt[d][j], s_j), from +0.
void ScoreRow(const Kernels& k, const float* a, const float* bt, int64_t T, int64_t hd, int64_t lo,
              int64_t len, float* s) {
  std::fill(s, s + len, 0.0f);
  for (int64_t d = 0; d < hd; ++d) k.axpy(a[d], bt + d * T + lo, s, len);
}

}  // namespace

void AttentionForward(const AttentionShape& s, const float* q, const float* k, const float* v,
                      float* out, float* probs) {
  const int64_t T = s.seq, hd = s.head_dim;
  const Kernels& kern = ActiveKernels();
  ForEachHead(s, [&](const HeadView& hv, size_t bh, size_t off, float scale) {
    std::vector<float> kt(hd * T);
    Transpose(k + off, T, hd, kt.data());
    for (int64_t t = 0; t < T; ++t) {
      float* p = probs + (bh * T + t) * T;
      float* o = out + off + t * hd;
      std::fill(p, p + T, 0.0f);
      std::fill(o, o + hd, 0.0f);
      const int64_t lo = hv.Lo(t), len = t - lo + 1;
      float* row = p + lo;
      ScoreRow(kern, q + off + t * hd, kt.data(), T, hd, lo, len, row);
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
    std::vector<float> vt(hd * T), dp(T);
    Transpose(v + off, T, hd, vt.data());
    std::fill(dk + off, dk + off + T * hd, 0.0f);
    std::fill(dv + off, dv + off + T * hd, 0.0f);
    for (int64_t t = 0; t < T; ++t) {
      const float* p = probs + (bh * T + t) * T;
      const float* go = dout + off + t * hd;
      float* gq = dq + off + t * hd;
      std::fill(gq, gq + hd, 0.0f);
      const int64_t lo = hv.Lo(t), len = t - lo + 1;
      ScoreRow(kern, go, vt.data(), T, hd, lo, len, dp.data());
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
