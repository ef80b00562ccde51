// Inference with a KV cache: one sequence, extended a chunk of tokens at a time (a prompt's
// prefill, then one token per decode step), apart from the training activations.
//
//   Extend(tokens [n]) at positions [len, len + n):
//     x   = Embed(tokens)  (then RMSNorm with embed_norm)           [n, d]
//     per layer l:
//       h1  = RMSNorm(x, g_attn)                                    [n, d]
//       q   = h1·Wq;  k = h1·Wk;  V[len:len+n] = h1·Wv              q [n, d], k, V [n, Hkv·hd]
//                                                                    token-major, heads in
//                                                                    column blocks of hd
//       q,k = RMSNorm_hd (qk_norm; of each token's whole q, k with qk_norm_projection),
//             then RoPE at the positions
//       Kᵀ[:, len:len+n] = k                                         the keys transposed
//       a   = AttentionCached(q against Kᵀ, V [0, len + n))          [n, d]
//       x   = x + a·Wo;  x = x + MLP(RMSNorm(x, g_mlp))
//             (post_norm: h1 = x, x = x + RMSNorm(a·Wo, g_attn); x = x + RMSNorm(MLP(x), g_mlp))
//     logits = RMSNorm(x, g_f)·W_lm                                 [n, V] (or its last rows)
//
// Every operation is the training forward's (transformer.h) on the same rows and values: the
// norms, projections (fp32 or int8 QAT), RoPE and MLP are per token, and the cached attention
// keeps the forward's chains (repops/attention.h). So the logits of position t equal those of
// Transformer::Forward over the whole sequence, bit for bit, however the sequence was split
// into chunks, whenever the forward's values are finite (the chains the cache leaves out are
// +0 terms, which only a non-finite value would turn into a NaN).
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "model/config.h"
#include "model/linear_layers.h"
#include "model/params.h"
#include "repops/backend.h"

namespace trail::model {

class Decoder {
 public:
  // For sequences of up to `capacity` positions (<= the model's max_seq_len), extended by up to
  // `max_chunk` tokens a call. `p` (parameters on `backend`) and the backend must outlive it
  // and p must not change while it lives (int8 weights are quantized once).
  Decoder(const ModelConfig& c, const ParameterSet& p, repops::Backend& backend, int64_t capacity,
          int64_t max_chunk);
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  int64_t length() const { return length_; }  // positions in the cache
  int64_t capacity() const { return capacity_; }
  int64_t max_chunk() const { return max_chunk_; }
  const ModelConfig& config() const { return c_; }
  repops::Backend& backend() const { return be_; }
  // Keeps the cache's first `length` positions (<= length()): a shared prefix is computed once
  // (e.g. one context scored against several continuations). Truncate(0) starts afresh.
  void Truncate(int64_t length);

  // Runs tokens [n] (host ids, 1 <= n <= max_chunk) at positions [length(), length() + n),
  // appends their keys and values, and returns the logits of the last `logit_rows` of them
  // (1..n) on the backend's device: [logit_rows, V]. Throws trail::Error (cache unchanged) when
  // the capacity would be exceeded, an id is outside the vocabulary or logit_rows is not 1..n.
  TensorView Extend(const int32_t* tokens, int64_t n, int64_t logit_rows = 1);

  int64_t bytes() const;        // device memory held
  int64_t cache_bytes() const;  // of it, the keys and values: 2 · layers · capacity · Hkv·hd floats

 private:
  void Layer(int64_t l, int64_t n);
  struct Cache {
    Buffer kt;  // [Hkv, hd, capacity]: the keys transposed (a step's scores stream them)
    Buffer v;   // [capacity, Hkv·hd]
  };
  ModelConfig c_;
  const ParameterSet& p_;
  repops::Backend& be_;
  int64_t capacity_, max_chunk_, length_ = 0;
  repops::DeviceRopeTable rope_;
  std::vector<Cache> cache_;
  // Tied embeddings: the table transposed, [d, V], so the head is a MatMul that streams it row
  // by row (the same chains as MatMulBT on the table: the bits do not depend on the layout).
  Buffer head_t_;
  LinearLayers linear_;
  // Chunk scratch: [max_chunk, d] x, h, q (and q_raw with qk_norm), att, x_mid; [max_chunk,
  // Hkv·hd] k (and k_raw); [max_chunk, ff] a, b, act; rstd [max_chunk · H]; logits [max_chunk,
  // V]; the chunk's ids, and the positions of its query rows [max_chunk · H] and, with
  // grouped-query attention, of its key rows [max_chunk · Hkv] (pos_kv_).
  Buffer x_, h_, q_, k_, q_raw_, k_raw_, att_, x_mid_, a_, b_, act_, rstd_, logits_, tokens_, pos_,
      pos_kv_;
  std::vector<int32_t> host_pos_;
};

}  // namespace trail::model
