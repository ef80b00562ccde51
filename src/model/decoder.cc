#include "model/decoder.h"

#include <vector>

#include "core/error.h"
#include "repops/rope.h"

namespace trail::model {
namespace {

float* Ptr(const Buffer& b) { return b.data<float>(); }
const float* Data(const DeviceTensor* t) { return t ? t->data<float>() : nullptr; }

}  // namespace

Decoder::Decoder(const ModelConfig& c, const ParameterSet& p, repops::Backend& backend,
                 int64_t capacity, int64_t max_chunk)
    : c_(c),
      p_(p),
      be_(backend),
      capacity_(capacity),
      max_chunk_(max_chunk),
      linear_(c, max_chunk, backend) {
  c_.Validate();
  TRAIL_CHECK(capacity > 0 && capacity <= c.max_seq_len, "decoder: a capacity of ", capacity,
              " positions; the model accepts 1..", c.max_seq_len);
  TRAIL_CHECK(max_chunk > 0 && max_chunk <= capacity, "decoder: chunks of ", max_chunk,
              " tokens; 1..", capacity, " fit its capacity");
  rope_ = repops::RopeTableOn(
      be_, repops::MakeRopeTable(c.max_seq_len, c.head_dim(), c.rope_theta, c.rope_scaling));
  const int64_t d = c.d_model, ff = c.d_ff, m = max_chunk, kvd = c.kv_dim(), qd = c.q_dim();
  auto floats = [&](int64_t n) { return repops::AllocateOn<float>(be_, n); };
  cache_.resize(c.n_layers);
  for (Cache& L : cache_) L.kt = floats(capacity * kvd), L.v = floats(capacity * kvd);
  x_ = floats(m * d), h_ = floats(m * d), q_ = floats(m * qd), k_ = floats(m * kvd);
  att_ = floats(m * qd);
  x_mid_ = floats(m * d);
  if (c.qk_norm) q_raw_ = floats(m * qd), k_raw_ = floats(m * kvd);
  a_ = floats(m * ff), act_ = floats(m * ff);
  if (c.mlp == MlpKind::kSwiGlu) b_ = floats(m * ff);
  rstd_ = floats(m * c.n_heads), logits_ = floats(m * c.vocab_size);
  tokens_ = repops::AllocateOn<int32_t>(be_, m);
  pos_ = repops::AllocateOn<int32_t>(be_, m * c.n_heads);
  if (c.kv_heads() != c.n_heads) pos_kv_ = repops::AllocateOn<int32_t>(be_, m * c.kv_heads());
  host_pos_.resize(m * c.n_heads);
  linear_.HoldWeights(true);  // p does not change while the decoder lives
  if (c.tied_embeddings) {    // once, through the host: the backend has no transpose
    const int64_t V = c.vocab_size;
    std::vector<float> table(V * d), t(V * d);
    be_.CopyToHost(p.embed->view(), table.data());
    for (int64_t v = 0; v < V; ++v)
      for (int64_t k = 0; k < d; ++k) t[k * V + v] = table[v * d + k];
    head_t_ = repops::UploadTo<float>(be_, t.data(), V * d);
  }
}

int64_t Decoder::bytes() const {
  size_t n = static_cast<size_t>(cache_bytes());
  for (const Buffer* b : {&x_, &h_, &q_, &k_, &q_raw_, &k_raw_, &att_, &x_mid_, &a_, &b_, &act_,
                          &rstd_, &logits_, &tokens_, &pos_, &pos_kv_, &head_t_}) {
    n += b->nbytes();
  }
  return static_cast<int64_t>(n) + linear_.bytes();
}

int64_t Decoder::cache_bytes() const {
  size_t n = 0;
  for (const Cache& L : cache_) n += L.kt.nbytes() + L.v.nbytes();
  return static_cast<int64_t>(n);
}

void Decoder::Truncate(int64_t length) {
  TRAIL_CHECK(length >= 0 && length <= length_, "decoder: cannot keep ", length,
              " positions of a cache holding ", length_);
  length_ = length;
}

TensorView Decoder::Extend(const int32_t* tokens, int64_t n, int64_t logit_rows) {
  const int64_t d = c_.d_model, H = c_.n_heads, V = c_.vocab_size;
  TRAIL_CHECK(n >= 1 && n <= max_chunk_, "decoder: ", n, " tokens in one call; 1..", max_chunk_,
              " fit its chunk");
  TRAIL_CHECK(logit_rows >= 1 && logit_rows <= n, "decoder: logits of ", logit_rows,
              " rows asked of a chunk of ", n);
  TRAIL_CHECK(length_ + n <= capacity_, "decoder: ", length_, " cached positions + ", n,
              " new ones exceed its capacity of ", capacity_,
              " (the model's context is max_seq_len = ", c_.max_seq_len, ")");
  for (int64_t i = 0; i < n; ++i) {
    TRAIL_CHECK(tokens[i] >= 0 && tokens[i] < V, "decoder: token id ", tokens[i], " at ", i,
                " is outside the vocabulary [0, ", V, ")");
    for (int64_t h = 0; h < H; ++h) host_pos_[i * H + h] = static_cast<int32_t>(length_ + i);
  }
  be_.CopyFromHost(tokens, tokens_.view({n}));
  be_.CopyFromHost(host_pos_.data(), pos_.view({n * H}));
  const int64_t Hkv = c_.kv_heads();
  if (Hkv != H) {  // the keys' rows [n, Hkv]: the first n·Hkv entries hold the same positions
    for (int64_t i = 0; i < n * Hkv; ++i) host_pos_[i] = static_cast<int32_t>(length_ + i / Hkv);
    be_.CopyFromHost(host_pos_.data(), pos_kv_.view({n * Hkv}));
  }
  linear_.BeginForward(p_);
  if (c_.embed_norm) {
    be_.EmbeddingForward(Data(p_.embed), V, d, tokens_.data<int32_t>(), n, Ptr(h_));
    be_.RmsNormForward(Ptr(h_), Data(p_.embed_norm), c_.norm_eps, n, d, Ptr(x_), Ptr(rstd_));
  } else {
    be_.EmbeddingForward(Data(p_.embed), V, d, tokens_.data<int32_t>(), n, Ptr(x_));
  }
  for (int64_t l = 0; l < c_.n_layers; ++l) Layer(l, n);
  length_ += n;
  // The final norm and the head on the rows asked for only (both act per row).
  const int64_t rows = logit_rows;
  float* hf = Ptr(h_) + (n - rows) * d;
  be_.RmsNormForward(Ptr(x_) + (n - rows) * d, Data(p_.final_norm), c_.norm_eps, rows, d, hf,
                     Ptr(rstd_));
  if (c_.tied_embeddings) {
    be_.MatMul(hf, Ptr(head_t_), Ptr(logits_), rows, d, V, false);
  } else {
    be_.MatMul(hf, Data(p_.lm_head), Ptr(logits_), rows, d, V, false);
  }
  return logits_.view({rows, V});
}

// Layer l on the chunk's n tokens: x_ holds its input on entry and its output on return.
void Decoder::Layer(int64_t l, int64_t n) {
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), ff = c_.d_ff;
  const int64_t Hkv = c_.kv_heads(), kvd = c_.kv_dim(), qd = c_.q_dim();
  const LayerParams& P = p_.layers[l];
  LinearLayers& lin = linear_;
  lin.PrepareLayer(l);
  float* K = Ptr(k_);                           // the chunk's keys, then appended to the cache
  float* V = Ptr(cache_[l].v) + length_ * kvd;  // this chunk's rows of the cache
  const int32_t* key_pos = (Hkv != H ? pos_kv_ : pos_).data<int32_t>();
  // Post-norm: the blocks read x_ and x_mid_ as they are, and h_ holds their outputs before
  // the norms.
  const bool post = c_.post_norm;
  float* h1 = post ? Ptr(x_) : Ptr(h_);
  if (!post) be_.RmsNormForward(Ptr(x_), Data(P.attn_norm), c_.norm_eps, n, d, h1, Ptr(rstd_));
  lin.SetInput(l, LayerInput::kH1, h1, n, d);
  float* q_out = c_.qk_norm ? Ptr(q_raw_) : Ptr(q_);
  float* k_out = c_.qk_norm ? Ptr(k_raw_) : K;
  lin.Forward(l, Matrix::kQ, LayerInput::kH1, h1, Data(P.wq), q_out, n, d, qd);
  lin.Forward(l, Matrix::kK, LayerInput::kH1, h1, Data(P.wk), k_out, n, d, kvd);
  lin.Forward(l, Matrix::kV, LayerInput::kH1, h1, Data(P.wv), V, n, d, kvd);
  if (c_.qk_norm) {
    // Per (token, head) row of hd (the same rows as the forward's split heads), or per token's
    // whole projection (qk_norm_projection): rows of q_norm_width, k_norm_width.
    const int64_t qw = c_.q_norm_width(), kw = c_.k_norm_width();
    be_.RmsNormForward(Ptr(q_raw_), Data(P.q_norm), c_.norm_eps, n * qd / qw, qw, Ptr(q_),
                       Ptr(rstd_));
    be_.RmsNormForward(Ptr(k_raw_), Data(P.k_norm), c_.norm_eps, n * kvd / kw, kw, K, Ptr(rstd_));
  }
  be_.RopeApply(Ptr(q_), n * H, hd, pos_.data<int32_t>(), rope_.view, false);
  be_.RopeApply(K, n * Hkv, hd, key_pos, rope_.view, false);
  be_.AppendKeysTransposed(K, n, Hkv, hd, Ptr(cache_[l].kt), capacity_, length_);
  const repops::CachedAttentionShape s{.heads = H,
                                       .head_dim = hd,
                                       .first = length_,
                                       .queries = n,
                                       .window = c_.LayerWindow(l),
                                       .capacity = capacity_,
                                       .kv_heads = Hkv};
  be_.AttentionCached(s, Ptr(q_), Ptr(cache_[l].kt), Ptr(cache_[l].v), Ptr(att_));
  lin.SetInput(l, LayerInput::kAtt, Ptr(att_), n, qd);
  if (post) {
    lin.Forward(l, Matrix::kO, LayerInput::kAtt, Ptr(att_), Data(P.wo), Ptr(h_), n, qd, d);
    be_.RmsNormForward(Ptr(h_), Data(P.attn_norm), c_.norm_eps, n, d, Ptr(x_mid_), Ptr(rstd_));
  } else {
    lin.Forward(l, Matrix::kO, LayerInput::kAtt, Ptr(att_), Data(P.wo), Ptr(x_mid_), n, qd, d);
  }
  be_.AddInto(Ptr(x_mid_), Ptr(x_), n * d);
  float* h2 = post ? Ptr(x_mid_) : Ptr(h_);
  if (!post) be_.RmsNormForward(Ptr(x_mid_), Data(P.mlp_norm), c_.norm_eps, n, d, h2, Ptr(rstd_));
  lin.SetInput(l, LayerInput::kH2, h2, n, d);
  lin.Forward(l, Matrix::kGate, LayerInput::kH2, h2, Data(P.w_gate), Ptr(a_), n, d, ff);
  if (c_.mlp == MlpKind::kSwiGlu) {
    lin.Forward(l, Matrix::kUp, LayerInput::kH2, h2, Data(P.w_up), Ptr(b_), n, d, ff);
    be_.SwiGluForward(Ptr(a_), Ptr(b_), n * ff, Ptr(act_));
  } else {
    be_.GeluForward(Ptr(a_), n * ff, Ptr(act_));
  }
  lin.SetInput(l, LayerInput::kAct, Ptr(act_), n, ff);
  if (post) {
    lin.Forward(l, Matrix::kDown, LayerInput::kAct, Ptr(act_), Data(P.w_down), Ptr(h_), n, ff, d);
    be_.RmsNormForward(Ptr(h_), Data(P.mlp_norm), c_.norm_eps, n, d, Ptr(x_), Ptr(rstd_));
  } else {
    lin.Forward(l, Matrix::kDown, LayerInput::kAct, Ptr(act_), Data(P.w_down), Ptr(x_), n, ff, d);
  }
  be_.AddInto(Ptr(x_), Ptr(x_mid_), n * d);
}

}  // namespace trail::model
