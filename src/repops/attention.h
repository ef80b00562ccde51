// Causal multi-head self-attention with sliding-window, document (block-diagonal) and padding
// key masks, and grouped-query attention. Queries are [B, H, T, hd] row-major, keys and values
// [B, Hkv, T, hd] (Hkv = H for multi-head attention), probabilities [B, H, T, T].
#pragma once

#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

struct AttentionShape {
  int64_t batch = 1, heads = 1, seq = 1, head_dim = 1;
  int64_t window = 0;                  // keys j with t - j < window; 0 = unlimited
  const int32_t* doc_ids = nullptr;    // [B, T]: key j visible only if doc[j] == doc[t]
  const uint8_t* key_valid = nullptr;  // [B, T]: key j visible only if nonzero (padding mask)
  // Key/value heads Hkv, dividing heads (0 = heads): query head h reads key/value head h / G,
  // G = heads / Hkv.
  int64_t kv_heads = 0;
};

// For query t, the allowed keys A(t) are j <= t within the window, same document, valid.
// Scores s_j = (Σ_d q[t,d] k[j,d], one FMA chain over d from +0) * (1/sqrt(hd)) over
// j in [lo(t), t], with disallowed keys set to -inf; p = softmax over that range (Max, ExpSub,
// Sum, reciprocal multiply), +0 outside A(t); out[t,:] = (FMA chain over j = 0..T-1 of
// p_j * v[j,:]) + (+0) — a GEMM, computed on tiles that skip the keys no query of the tile can
// see (docs/repops.md §5 says why that gives the full chain's bits). A query with no allowed
// key gets p = 0 and out = +0.
void AttentionForward(const Kernels& kernels, const AttentionShape& s, const float* q,
                      const float* k, const float* v, float* out, float* probs);
// On the active SIMD target's kernels.
inline void AttentionForward(const AttentionShape& s, const float* q, const float* k,
                             const float* v, float* out, float* probs) {
  AttentionForward(ActiveKernels(), s, q, k, v, out, probs);
}

// dP_j = Σ_d dout[t,d] v[j,d] (FMA chain over d); D = Dot(p[t, lo..t], dP[lo..t]);
// dS_j = (p_j * (dP_j - D)) * (1/sqrt(hd)) on A(t), +0 elsewhere; dq = dS·K, and per query
// head dk_h = dSᵀ·Q, dv_h = Pᵀ·dout, each a full-length FMA chain plus +0 like the forward's.
// dk, dv [B, Hkv, T, hd] of key/value head g are the sums over its query heads
// h = g·G, ..., g·G + G − 1 in that order: ((dk_{g·G} + dk_{g·G+1}) + ...) + dk_{g·G+G−1}, one
// rounded addition each (with G = 1, dk_h itself). Outputs are overwritten.
void AttentionBackward(const Kernels& kernels, const AttentionShape& s, const float* q,
                       const float* k, const float* v, const float* probs, const float* dout,
                       float* dq, float* dk, float* dv);
// On the active SIMD target's kernels.
inline void AttentionBackward(const AttentionShape& s, const float* q, const float* k,
                              const float* v, const float* probs, const float* dout, float* dq,
                              float* dk, float* dv) {
  AttentionBackward(ActiveKernels(), s, q, k, v, probs, dout, dq, dk, dv);
}

// Attention of the queries at positions [first, first + queries) of one sequence against its
// keys [0, first + queries), as inference runs it with a KV cache: q, out [queries, H·hd] and
// v [first + queries, Hkv·hd] token-major (head h in columns [h·hd, (h+1)·hd)); the keys
// transposed, kt [Hkv, hd, capacity] (key j's dimension c of key/value head g at
// kt[(g·hd + c)·capacity + j]), so a decoding step's scores stream them; query head h reads
// key/value head h / (H / Hkv); the causal window and no document or padding
// mask. Each query's scores, softmax and P·V are the
// operations AttentionForward spells out above, on the same values: the scores are the same
// chains over d, the softmax runs over the same range [lo(t), t], and P·V is the chain over
// [lo(t), t] plus +0, which equals the forward's full-length chain whenever V is finite (the
// terms left out are +0·v: docs/repops.md §5). So a query's output has the bits a full forward
// over the sequence gives it, for finite values.
struct CachedAttentionShape {
  int64_t heads = 1, head_dim = 1;
  int64_t first = 0;     // position of the first query = keys cached before this call
  int64_t queries = 1;   // new positions, whose keys and values are already in k, v
  int64_t window = 0;    // keys j with t - j < window; 0 = unlimited
  int64_t capacity = 0;  // kt's row length (>= first + queries)
  int64_t kv_heads = 0;  // key/value heads Hkv, dividing heads (0 = heads)
  int64_t keys() const { return first + queries; }
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};
void AttentionCached(const Kernels& kernels, const CachedAttentionShape& s, const float* q,
                     const float* kt, const float* v, float* out);
// kt[(h·hd + c)·capacity + first + i] = k[i, h·hd + c] for the n new keys k [n, H·hd]: the
// cache's layout above (exact copies).
void AppendKeysTransposed(const float* k, int64_t n, int64_t heads, int64_t head_dim, float* kt,
                          int64_t capacity, int64_t first);
// Throws trail::Error unless every dimension is positive, kv_heads divides heads, first >= 0,
// window >= 0 and the keys fit the capacity.
void CheckCachedAttention(const CachedAttentionShape& s);

}  // namespace trail::repops
