// Attention against a KV cache (attention.h, AttentionCached): the forward's operations for the
// queries of one sequence at positions [first, first + queries), heads in parallel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "repops/attention.h"

namespace trail::repops {
namespace {

constexpr int64_t kQueryBlock = 64;  // queries whose scores one GEMM computes

int64_t WindowStart(const CachedAttentionShape& s, int64_t t) {
  return s.window > 0 ? std::max<int64_t>(0, t - s.window + 1) : 0;
}

// The queries [i0, i1) of head h (their positions first + i): S [i1 - i0, n] holds, for keys
// [klo, klo + n), the probabilities of each query's range [lo(t), t] and +0 elsewhere; then
// out = S · V[klo, klo + n) + (+0). Every step is the forward's (attention.cc): the scores one
// chain over d from +0, then ·scale, Exp(x - Max), one reciprocal of the Sum, ·reciprocal.
void QueryBlock(const Kernels& kern, const CachedAttentionShape& s, const float* q, const float* kt,
                const float* v, float* out, int64_t i0, int64_t i1, std::vector<float>& S) {
  const int64_t hd = s.head_dim, d = s.heads * hd, dkv = s.kv() * hd;
  const int64_t t0 = s.first + i0, t1 = s.first + i1, klo = WindowStart(s, t0), n = t1 - klo;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  S.resize(static_cast<size_t>((i1 - i0) * n));
  // S = Q[i0:i1] · Kᵀ[:, klo:t1]: q token-major (row stride d), the head's keys transposed
  // (row stride capacity).
  kern.gemm({.M = i1 - i0,
             .N = n,
             .K = hd,
             .a = q + i0 * d,
             .a_rs = d,
             .a_cs = 1,
             .b = kt + klo,
             .b_rs = s.capacity,
             .b_cs = 1,
             .c = S.data(),
             .ldc = n});
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t t = s.first + i, lo = WindowStart(s, t), len = t - lo + 1;
    float* p = S.data() + (i - i0) * n;
    float* row = p + (lo - klo);
    kern.mul(row, &scale, 0, row, static_cast<size_t>(len));
    kern.exp_sub(row, kern.max(row, static_cast<size_t>(len)), row, static_cast<size_t>(len));
    const float inv = 1.0f / kern.sum(row, static_cast<size_t>(len));
    kern.mul(row, &inv, 0, row, static_cast<size_t>(len));
    std::fill(p, row, 0.0f);
    std::fill(row + len, p + n, 0.0f);
  }
  // out[i0:i1] = P · V[klo:t1] (token-major, row stride dkv; out's d), then + (+0).
  kern.gemm({.M = i1 - i0,
             .N = hd,
             .K = n,
             .a = S.data(),
             .a_rs = n,
             .a_cs = 1,
             .b = v + klo * dkv,
             .b_rs = dkv,
             .b_cs = 1,
             .c = out + i0 * d,
             .ldc = d});
  for (int64_t i = i0; i < i1; ++i) {
    float* o = out + i * d;
    for (int64_t c = 0; c < hd; ++c) o[c] = o[c] + 0.0f;
  }
}

}  // namespace

void CheckCachedAttention(const CachedAttentionShape& s) {
  TRAIL_CHECK(s.heads > 0 && s.head_dim > 0 && s.queries > 0 && s.first >= 0,
              "cached attention: heads, head_dim and queries must be positive and first >= 0");
  TRAIL_CHECK(s.kv_heads >= 0 && s.heads % s.kv() == 0, "cached attention: ", s.kv_heads,
              " key/value heads do not divide ", s.heads, " query heads");
  TRAIL_CHECK(s.window >= 0, "cached attention: window must be >= 0, got ", s.window);
  TRAIL_CHECK(s.keys() <= s.capacity, "cached attention: ", s.keys(),
              " keys do not fit a cache of ", s.capacity);
}

void AttentionCached(const Kernels& kernels, const CachedAttentionShape& s, const float* q,
                     const float* kt, const float* v, float* out) {
  CheckCachedAttention(s);
  const int64_t hd = s.head_dim, group = s.heads / s.kv();
  KernelPool().ParallelFor(static_cast<size_t>(s.heads), [&](size_t h) {
    thread_local std::vector<float> S;
    const int64_t off = static_cast<int64_t>(h) * hd, kv = static_cast<int64_t>(h) / group * hd;
    for (int64_t i0 = 0; i0 < s.queries; i0 += kQueryBlock) {
      const int64_t i1 = std::min(s.queries, i0 + kQueryBlock);
      QueryBlock(kernels, s, q + off, kt + kv * s.capacity, v + kv, out + off, i0, i1, S);
    }
  });
}

void AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim, float* kt,
                          int64_t capacity, int64_t first) {
  TRAIL_CHECK(n >= 0 && first >= 0 && first + n <= capacity, "cached keys: ", first, " + ", n,
              " do not fit a cache of ", capacity);
  const int64_t d = heads * head_dim;
  for (int64_t c = 0; c < d; ++c) {  // row c of kt: dimension c % hd of head c / hd
    float* row = kt + c * capacity + first;
    for (int64_t i = 0; i < n; ++i) row[i] = k[i * d + c];
  }
}

}  // namespace trail::repops
