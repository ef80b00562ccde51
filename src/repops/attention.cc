#include "repops/attention.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "repops/kernels.h"

namespace trail::repops {
namespace {

// The first key a query t may see under the sliding window (0 when unlimited).
int64_t WindowStart(const AttentionShape& s, int64_t t) {
  return s.window > 0 ? std::max<int64_t>(0, t - s.window + 1) : 0;
}

struct HeadView {
  int64_t T, hd, b;
  const AttentionShape* s;
  int64_t Lo(int64_t t) const { return WindowStart(*s, t); }
  bool Allowed(int64_t t, int64_t j) const {
    if (s->doc_ids && s->doc_ids[b * T + j] != s->doc_ids[b * T + t]) return false;
    if (s->key_valid && !s->key_valid[b * T + j]) return false;
    return true;
  }
};

int64_t KvHeads(const AttentionShape& s) { return s.kv_heads > 0 ? s.kv_heads : s.heads; }

void CheckShape(const AttentionShape& s) {
  TRAIL_CHECK(s.batch > 0 && s.heads > 0 && s.seq > 0 && s.head_dim > 0,
              "attention: every dimension must be positive");
  TRAIL_CHECK(s.kv_heads >= 0 && s.heads % KvHeads(s) == 0, "attention: ", s.kv_heads,
              " key/value heads do not divide ", s.heads, " query heads");
  TRAIL_CHECK(s.window >= 0, "attention: window must be >= 0, got ", s.window);
}

// Where query head bh = b·H + h and its key/value head b·Hkv + h / G start: offsets of their
// [T, hd] blocks.
struct HeadBlocks {
  size_t q, kv;
};
HeadBlocks BlocksOf(const AttentionShape& s, int64_t bh) {
  const int64_t group = s.heads / KvHeads(s), b = bh / s.heads, h = bh % s.heads;
  const int64_t kv = b * KvHeads(s) + h / group, block = s.seq * s.head_dim;
  return {static_cast<size_t>(bh * block), static_cast<size_t>(kv * block)};
}

float Scale(const AttentionShape& s) { return 1.0f / std::sqrt(static_cast<float>(s.head_dim)); }

// Checks the shape, then runs f(head view, head index bh, its blocks, 1/sqrt(hd)) for every
// (batch, head) pair in parallel; heads are independent, so any split gives the same bits.
template <class F>
void ForEachHead(const AttentionShape& s, F&& f) {
  CheckShape(s);
  KernelPool().ParallelFor(static_cast<size_t>(s.batch * s.heads), [&](size_t bh) {
    const HeadView hv{s.seq, s.head_dim, static_cast<int64_t>(bh) / s.heads, &s};
    f(hv, bh, BlocksOf(s, static_cast<int64_t>(bh)), Scale(s));
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
  // S [t1-t0, n] = Q[t0:t1] · K[klo:t1]ᵀ: B is K stored [keys, hd], read transposed.
  k.gemm({.M = t1 - t0,
          .N = n,
          .K = hd,
          .a = a + t0 * hd,
          .a_rs = hd,
          .a_cs = 1,
          .b = b + klo * hd,
          .b_rs = 1,
          .b_cs = hd,
          .c = S.data(),
          .ldc = n});
  return n;
}

constexpr int64_t kQueryBlock = 64;

// For each query (b, t): the first key of A(t) when A(t) is the whole interval [that key, t] —
// the row's documents are contiguous runs (no id comes back after another) and every key there
// is valid, as in packed training batches — else -1: the query takes the per-key test. Either
// way the same operations run on the same values; the interval form only skips the test.
std::vector<int64_t> AllowedIntervals(const AttentionShape& s) {
  const int64_t T = s.seq;
  std::vector<int64_t> first(static_cast<size_t>(s.batch * T));
  std::vector<int64_t> invalid_before(static_cast<size_t>(T + 1));
  std::unordered_set<int32_t> finished;  // ids of the runs already ended in this row
  for (int64_t b = 0; b < s.batch; ++b) {
    const int32_t* doc = s.doc_ids ? s.doc_ids + b * T : nullptr;
    const uint8_t* valid = s.key_valid ? s.key_valid + b * T : nullptr;
    for (int64_t j = 0; j < T; ++j)
      invalid_before[j + 1] = invalid_before[j] + (valid && !valid[j] ? 1 : 0);
    finished.clear();
    bool runs = true;
    int64_t run_start = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (doc && t > 0 && doc[t] != doc[t - 1]) {
        finished.insert(doc[t - 1]);
        runs = runs && !finished.count(doc[t]);
        run_start = t;
      }
      const int64_t a = std::max(WindowStart(s, t), run_start);
      const bool all_valid = invalid_before[t + 1] == invalid_before[a];
      first[b * T + t] = runs && all_valid ? a : -1;
    }
  }
  return first;
}

bool AllFinite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

// c[rows, hd] = (chain over the full index range of fma(A, B, acc), from +0) + (+0), as the
// spec writes every attention product (docs/repops.md §5): A(i, u) = a[i*a_rs + u*a_cs] is zero
// outside [u0, u1) for every row, so with a finite B the terms outside are left out (a term
// +0·b changes at most the sign of a zero accumulator, which the final + (+0) erases); with a
// non-finite B they are kept, so its NaN reaches the result exactly as the full chain has it.
void ZeroOutsideProduct(const Kernels& k, int64_t rows, int64_t hd, const float* a, int64_t a_rs,
                        int64_t a_cs, const float* b, int64_t full, int64_t u0, int64_t u1,
                        bool b_finite, float* c) {
  if (!b_finite) u0 = 0, u1 = full;
  // c [rows, hd] = A[:, u0:u1] · B[u0:u1, :], B stored [full, hd].
  k.gemm({.M = rows,
          .N = hd,
          .K = u1 - u0,
          .a = a + u0 * a_cs,
          .a_rs = a_rs,
          .a_cs = a_cs,
          .b = b + u0 * hd,
          .b_rs = hd,
          .b_cs = 1,
          .c = c,
          .ldc = hd});
  for (int64_t i = 0; i < rows * hd; ++i) c[i] = c[i] + 0.0f;
}

}  // namespace

void AttentionForward(const Kernels& kernels, const AttentionShape& s, const float* q,
                      const float* k, const float* v, float* out, float* probs) {
  const int64_t T = s.seq, hd = s.head_dim;
  const Kernels& kern = kernels;
  const std::vector<int64_t> first = AllowedIntervals(s);
  ForEachHead(s, [&](const HeadView& hv, size_t bh, HeadBlocks blk, float scale) {
    thread_local std::vector<float> S;
    const size_t off = blk.q, kv = blk.kv;
    const bool v_finite = AllFinite(v + kv, T * hd);
    for (int64_t t0 = 0; t0 < T; t0 += kQueryBlock) {
      const int64_t t1 = std::min(T, t0 + kQueryBlock), klo = hv.Lo(t0);
      const int64_t n = ScoreBlock(kern, q + off, k + kv, hd, t0, t1, klo, S);
      for (int64_t t = t0; t < t1; ++t) {
        float* p = probs + (bh * T + t) * T;
        std::fill(p, p + T, 0.0f);
        const int64_t lo = hv.Lo(t), len = t - lo + 1;
        float* row = p + lo;
        std::copy_n(S.data() + (t - t0) * n + (lo - klo), len, row);
        const int64_t a = first[hv.b * T + t];
        if (a >= 0) {  // keys [a, t] allowed, [lo, a) not
          std::fill(row, row + (a - lo), -HUGE_VALF);
          kern.mul(row + (a - lo), &scale, 0, row + (a - lo), static_cast<size_t>(t - a + 1));
          kern.exp_sub(row, kern.max(row, len), row, len);  // disallowed keys: Exp(-inf) = +0
          const float inv = 1.0f / kern.sum(row, len);
          kern.mul(row, &inv, 0, row, static_cast<size_t>(len));
          continue;
        }
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
      }
      // out = P·V over the keys the block's queries can see.
      ZeroOutsideProduct(kern, t1 - t0, hd, probs + (bh * T + t0) * T, T, 1, v + kv, T, klo, t1,
                         v_finite, out + off + t0 * hd);
    }
  });
}

namespace {

// One query head's share of the backward: dq of the head, and the head's dk, dv (the chains
// over its queries) into dk_h, dv_h [T, hd].
void HeadBackward(const Kernels& kern, const AttentionShape& s, const std::vector<int64_t>& first,
                  int64_t bh, const float* q, const float* k, const float* v, const float* probs,
                  const float* dout, float* dq, float* dk_h, float* dv_h) {
  const int64_t T = s.seq, hd = s.head_dim, W = s.window > 0 ? s.window : T;
  const HeadView hv{T, hd, bh / s.heads, &s};
  const HeadBlocks blk = BlocksOf(s, bh);
  const size_t off = blk.q, kv = blk.kv;
  const float scale = Scale(s);
  // dS [T, T], +0 off A(t). Reused per thread: a fresh 256 KB block a head (T = 256) was
  // mapped and faulted in anew every time.
  thread_local std::vector<float> S, dS;
  dS.assign(static_cast<size_t>(T * T), 0.0f);
  const float* P = probs + bh * T * T;
  const bool k_finite = AllFinite(k + kv, T * hd), q_finite = AllFinite(q + off, T * hd),
             dout_finite = AllFinite(dout + off, T * hd);
  for (int64_t t0 = 0; t0 < T; t0 += kQueryBlock) {
    const int64_t t1 = std::min(T, t0 + kQueryBlock), klo = hv.Lo(t0);
    const int64_t n = ScoreBlock(kern, dout + off, v + kv, hd, t0, t1, klo, S);  // dP
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t lo = hv.Lo(t), len = t - lo + 1;
      float* dp = S.data() + (t - t0) * n + (lo - klo);
      const int64_t a = first[hv.b * T + t];
      float* ds = dS.data() + t * T;
      if (a >= 0) {  // keys [a, t] allowed, [lo, a) not
        std::fill(dp, dp + (a - lo), 0.0f);
        const float D = kern.dot(P + t * T + lo, dp, len);
        for (int64_t j = a; j <= t; ++j) ds[j] = (P[t * T + j] * (dp[j - lo] - D)) * scale;
        continue;
      }
      for (int64_t j = lo; j <= t; ++j)
        if (!hv.Allowed(t, j)) dp[j - lo] = 0.0f;
      const float D = kern.dot(P + t * T + lo, dp, len);
      for (int64_t j = lo; j <= t; ++j)
        if (hv.Allowed(t, j)) ds[j] = (P[t * T + j] * (dp[j - lo] - D)) * scale;
    }
    // dq = dS·K over the keys the block's queries can see.
    ZeroOutsideProduct(kern, t1 - t0, hd, dS.data() + t0 * T, T, 1, k + kv, T, klo, t1, k_finite,
                       dq + off + t0 * hd);
  }
  // dk = dSᵀ·Q and dv = Pᵀ·dout, chains over the queries t that can see each key block.
  for (int64_t j0 = 0; j0 < T; j0 += kQueryBlock) {
    const int64_t j1 = std::min(T, j0 + kQueryBlock), t_hi = std::min(T, j1 - 1 + W);
    ZeroOutsideProduct(kern, j1 - j0, hd, dS.data() + j0, 1, T, q + off, T, j0, t_hi, q_finite,
                       dk_h + j0 * hd);
    ZeroOutsideProduct(kern, j1 - j0, hd, P + j0, 1, T, dout + off, T, j0, t_hi, dout_finite,
                       dv_h + j0 * hd);
  }
}

}  // namespace

void AttentionBackward(const Kernels& kernels, const AttentionShape& s, const float* q,
                       const float* k, const float* v, const float* probs, const float* dout,
                       float* dq, float* dk, float* dv) {
  CheckShape(s);
  const int64_t Hkv = KvHeads(s), group = s.heads / Hkv, block = s.seq * s.head_dim;
  const std::vector<int64_t> first = AllowedIntervals(s);
  // Key/value heads in parallel; the query heads of one group in ascending order, the first
  // writing dk, dv and each later one adding its share (one rounded addition per element).
  KernelPool().ParallelFor(static_cast<size_t>(s.batch * Hkv), [&](size_t bkv) {
    thread_local std::vector<float> dk_h, dv_h;
    const int64_t b = static_cast<int64_t>(bkv) / Hkv, g = static_cast<int64_t>(bkv) % Hkv;
    float* dk_kv = dk + bkv * block;
    float* dv_kv = dv + bkv * block;
    for (int64_t i = 0; i < group; ++i) {
      const int64_t bh = b * s.heads + g * group + i;
      if (i == 0) {
        HeadBackward(kernels, s, first, bh, q, k, v, probs, dout, dq, dk_kv, dv_kv);
        continue;
      }
      dk_h.resize(static_cast<size_t>(block)), dv_h.resize(static_cast<size_t>(block));
      HeadBackward(kernels, s, first, bh, q, k, v, probs, dout, dq, dk_h.data(), dv_h.data());
      for (int64_t e = 0; e < block; ++e) {
        dk_kv[e] = dk_kv[e] + dk_h[e];
        dv_kv[e] = dv_kv[e] + dv_h[e];
      }
    }
  });
}

}  // namespace trail::repops
