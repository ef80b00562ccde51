#include "model/transformer.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace trail::model {
namespace {

float* Ptr(const Buffer& b) { return b.data<float>(); }
const float* Data(const DeviceTensor* t) { return t ? t->data<float>() : nullptr; }
float* MutData(DeviceTensor* t) { return t ? t->data<float>() : nullptr; }

}  // namespace

Activations::Activations(const ModelConfig& c, int64_t max_rows, int64_t max_seq,
                         repops::Backend& backend, Recompute recompute)
    : max_rows_(max_rows),
      max_seq_(max_seq),
      recompute_(recompute),
      linear(c, max_rows * max_seq, backend,
             /*one_layer_of_inputs=*/recompute == Recompute::kLayers) {
  c.Validate();
  TRAIL_CHECK(max_rows > 0 && max_seq > 0 && max_seq <= c.max_seq_len, "activations for ", max_rows,
              " rows of ", max_seq, " positions: the model accepts 1..", c.max_seq_len,
              " positions");
  const int64_t N = max_rows * max_seq;
  const int64_t d = c.d_model, ff = c.d_ff, H = c.n_heads, V = c.vocab_size;
  const int64_t Hkv = c.kv_heads(), kvd = c.kv_dim(), qd = c.q_dim();
  const int64_t wide = std::max(d, qd);  // the backward scratch holds [N, d] and [N, q_dim]
  const bool swiglu = c.mlp == MlpKind::kSwiGlu;
  auto floats = [&](int64_t n) { return repops::AllocateOn<float>(backend, n); };
  // A layer's activations after its input.
  auto allocate = [&](Layer& L) {
    L.rstd1 = floats(N), L.rstd2 = floats(N);
    if (c.post_norm) {
      L.o_out = floats(N * d), L.down_out = floats(N * d);
    } else {
      L.h1 = floats(N * d), L.h2 = floats(N * d);
    }
    if (c.qk_norm) {
      L.q_raw = floats(N * qd), L.k_raw = floats(N * kvd);
      L.rstd_q = floats(N * H), L.rstd_k = floats(N * Hkv);
    }
    L.q = floats(N * qd), L.k = floats(N * kvd), L.v = floats(N * kvd);
    L.probs = floats(max_rows * H * max_seq * max_seq);
    L.att = floats(N * qd), L.x_mid = floats(N * d);
    L.a = floats(N * ff), L.act = floats(N * ff);
    if (swiglu) L.b = floats(N * ff);
  };
  layers_.resize(c.n_layers);
  for (Layer& L : layers_) {
    L.x_in = floats(N * d);
    if (recompute == Recompute::kNone) allocate(L);
  }
  if (recompute == Recompute::kLayers) allocate(work_);
  if (c.embed_norm) emb = floats(N * d), rstd_e = floats(N);
  x_final = floats(N * d), rstd_f = floats(N), hf = floats(N * d), logits = floats(N * V);
  lse = floats(N);
  inputs = repops::AllocateOn<int32_t>(backend, N);
  labels = repops::AllocateOn<int32_t>(backend, N);
  doc_ids = repops::AllocateOn<int32_t>(backend, N);
  key_valid = repops::AllocateOn<int8_t>(backend, N);
  pos_heads = repops::AllocateOn<int32_t>(backend, N * H);
  if (Hkv != H) pos_kv_heads = repops::AllocateOn<int32_t>(backend, N * Hkv);
  host_pos_heads_.resize(N * H);
  for (Buffer* b : {&dx, &dx2, &dh1, &dtmp, &dq, &dk, &dv}) *b = floats(N * wide);
  dh = floats(N * ff), da = floats(N * ff);
  if (swiglu) db = floats(N * ff);
}

std::vector<const Buffer*> Activations::AllBuffers() const {
  std::vector<const Buffer*> all;
  std::vector<const Layer*> sets;
  for (const Layer& L : layers_) sets.push_back(&L);
  sets.push_back(&work_);  // empty without recomputation
  for (const Layer* L : sets) {
    for (const Buffer* b :
         {&L->x_in,   &L->rstd1, &L->h1,       &L->o_out, &L->q_raw, &L->k_raw, &L->rstd_q,
          &L->rstd_k, &L->q,     &L->k,        &L->v,     &L->probs, &L->att,   &L->x_mid,
          &L->rstd2,  &L->h2,    &L->down_out, &L->a,     &L->b,     &L->act}) {
      all.push_back(b);
    }
  }
  for (const Buffer* b :
       {&emb,    &rstd_e,  &x_final,   &rstd_f,    &hf,           &logits, &lse, &inputs,
        &labels, &doc_ids, &key_valid, &pos_heads, &pos_kv_heads, &dx,     &dx2, &dh1,
        &dtmp,   &dq,      &dk,        &dv,        &dh,           &da,     &db}) {
    all.push_back(b);
  }
  return all;
}

int64_t Activations::bytes() const {
  size_t n = 0;
  for (const Buffer* b : AllBuffers()) n += b->nbytes();
  return static_cast<int64_t>(n) + linear.bytes();
}

int64_t Activations::PlannedBytes(const ModelConfig& c, int64_t max_rows, int64_t max_seq,
                                  Recompute recompute) {
  const int64_t N = max_rows * max_seq, d = c.d_model, ff = c.d_ff, H = c.n_heads;
  const int64_t Hkv = c.kv_heads(), kvd = c.kv_dim(), qd = c.q_dim(), wide = std::max(d, qd);
  const int64_t mlp_buffers = c.mlp == MlpKind::kSwiGlu ? 3 : 2;  // a, act (+ b for SwiGLU)
  // After the input (N·d): rstd1, h1, q, k, v, att, x_mid, rstd2, h2, probs, the MLP's
  // (post-norm: o_out and down_out in place of h1 and h2, the same sizes).
  int64_t after_input =
      N * (3 * d + 2 * qd + 2 * kvd + 2) + max_rows * H * max_seq * max_seq + mlp_buffers * N * ff;
  if (c.qk_norm) after_input += N * (qd + kvd + H + Hkv);
  const int64_t layers = recompute == Recompute::kLayers ? c.n_layers * N * d + after_input
                                                         : c.n_layers * (N * d + after_input);
  // x_final, hf, rstd_f, lse, logits, RoPE positions; then the backward scratch.
  int64_t global = N * (2 * d + 2) + N * c.vocab_size + N * H + 7 * N * wide + mlp_buffers * N * ff;
  if (Hkv != H) global += N * Hkv;  // the keys' RoPE positions
  if (c.embed_norm) global += N * (d + 1);
  const int64_t batch_bytes = N * (3 * 4 + 1);  // inputs, labels, doc_ids; key_valid
  return (layers + global) * static_cast<int64_t>(sizeof(float)) + batch_bytes +
         LinearLayers::PlannedBytes(c, N, recompute == Recompute::kLayers);
}

Transformer::Transformer(const ModelConfig& c, repops::Backend& backend) : c_(c), be_(backend) {
  c_.Validate();
  rope_ = repops::RopeTableOn(
      be_, repops::MakeRopeTable(c.max_seq_len, c.head_dim(), c.rope_theta, c.rope_scaling));
}

TensorView Transformer::Logits(const Activations& acts, int64_t rows, int64_t seq) {
  return acts.logits.view({rows * seq, acts.logits.numel() / (acts.max_rows_ * acts.max_seq_)});
}

void Transformer::Upload(const BatchView& b, Activations& A) const {
  const int64_t rows = b.rows, T = b.seq, N = rows * T, H = c_.n_heads, Hkv = c_.kv_heads();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < T; ++t) {
      const int32_t pos = b.positions ? b.positions[r * T + t] : static_cast<int32_t>(t);
      TRAIL_CHECK(pos >= 0 && pos < c_.max_seq_len, "model: position ", pos, " at row ", r,
                  ", token ", t, " is outside [0, ", c_.max_seq_len, ")");
      for (int64_t h = 0; h < H; ++h) A.host_pos_heads_[(r * H + h) * T + t] = pos;
    }
  }
  be_.CopyFromHost(A.host_pos_heads_.data(), A.pos_heads.view({N * H}));
  // The keys' positions [rows, Hkv, T]: the first Hkv heads' rows of each row's block.
  if (Hkv != H) {
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(A.host_pos_heads_.data() + r * H * T, Hkv * T,
                  A.host_pos_heads_.data() + r * Hkv * T);
    }
    be_.CopyFromHost(A.host_pos_heads_.data(), A.pos_kv_heads.view({N * Hkv}));
  }
  be_.CopyFromHost(b.inputs, A.inputs.view({N}));
  be_.CopyFromHost(b.labels, A.labels.view({N}));
  if (b.doc_ids != nullptr) be_.CopyFromHost(b.doc_ids, A.doc_ids.view({N}));
  if (b.key_valid != nullptr) be_.CopyFromHost(b.key_valid, A.key_valid.view({N}));
}

repops::CrossEntropySums Transformer::Forward(const ParameterSet& p, const BatchView& b,
                                              Activations& A) {
  if (residency_ != nullptr) residency_->BeginPass(/*backward=*/false);
  const repops::CrossEntropySums sums = ForwardPass(p, b, A);
  Release(p.head_unit());
  if (c_.tied_embeddings) Release(ParameterSet::kEmbedUnit);
  return sums;
}

repops::CrossEntropySums Transformer::ForwardPass(const ParameterSet& p, const BatchView& b,
                                                  Activations& A) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, V = c_.vocab_size;
  TRAIL_CHECK(rows > 0 && T > 0 && rows <= A.max_rows_ && T <= A.max_seq_, "model: a batch of ",
              rows, " rows × ", T, " positions does not fit the planned ", A.max_rows_, " × ",
              A.max_seq_);
  Upload(b, A);
  A.linear.BeginForward(p);
  Acquire(ParameterSet::kEmbedUnit);
  float* x0 = Ptr(A.layers_[0].x_in);
  if (c_.embed_norm) {
    be_.EmbeddingForward(Data(p.embed), V, d, A.inputs.data<int32_t>(), N, Ptr(A.emb));
    Note("embedding", -1, "embed", Ptr(A.emb), {N, d});
    be_.RmsNormForward(Ptr(A.emb), Data(p.embed_norm), c_.norm_eps, N, d, x0, Ptr(A.rstd_e));
    Note("rmsnorm", -1, "x0", x0, {N, d});
  } else {
    be_.EmbeddingForward(Data(p.embed), V, d, A.inputs.data<int32_t>(), N, x0);
    Note("embedding", -1, "x0", x0, {N, d});
  }
  if (!c_.tied_embeddings) Release(ParameterSet::kEmbedUnit);  // else the head needs it
  for (int64_t l = 0; l < c_.n_layers; ++l) {
    Acquire(ParameterSet::LayerUnit(l));
    ForwardLayer(l, p, b, A, /*to_output=*/true);
    Release(ParameterSet::LayerUnit(l));
  }
  Acquire(p.head_unit());
  be_.RmsNormForward(Ptr(A.x_final), Data(p.final_norm), c_.norm_eps, N, d, Ptr(A.hf),
                     Ptr(A.rstd_f));
  Note("rmsnorm", -1, "hf", Ptr(A.hf), {N, d});
  if (c_.tied_embeddings) {
    be_.MatMulBT(Ptr(A.hf), Data(p.embed), Ptr(A.logits), N, d, V, false);
  } else {
    be_.MatMul(Ptr(A.hf), Data(p.lm_head), Ptr(A.logits), N, d, V, false);
  }
  Note("matmul", -1, "logits", Ptr(A.logits), {N, V});
  const repops::CrossEntropySums sums = be_.CrossEntropyForward(
      Ptr(A.logits), A.labels.data<int32_t>(), N, V, kIgnoreLabel, Ptr(A.lse));
  Note("cross_entropy", -1, "lse", Ptr(A.lse), {N});
  return sums;
}

void Transformer::ForwardLayer(int64_t l, const ParameterSet& p, const BatchView& b, Activations& A,
                               bool to_output) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), ff = c_.d_ff;
  const int64_t Hkv = c_.kv_heads(), kvd = c_.kv_dim(), qd = c_.q_dim();
  Activations::Layer& L = A.Work(l);
  float* x_in = Ptr(A.layers_[l].x_in);
  const LayerParams& P = p.layers[l];
  A.linear.PrepareLayer(l);
  // Attention block. dq/dk/dv double as projection scratch in the forward.
  const bool post = c_.post_norm;
  float* h1 = post ? x_in : Ptr(L.h1);
  if (!post) {
    be_.RmsNormForward(x_in, Data(P.attn_norm), c_.norm_eps, N, d, h1, Ptr(L.rstd1));
    Note("rmsnorm", l, "h1", h1, {N, d});
  }
  LinearLayers& lin = A.linear;
  lin.SetInput(l, LayerInput::kH1, h1, N, d);
  // With QK-norm over whole projections, q and k go to q_raw, k_raw, their norms to dq, dk.
  const bool whole = c_.qk_norm && c_.qk_norm_projection;
  float* q_proj = whole ? Ptr(L.q_raw) : Ptr(A.dq);
  float* k_proj = whole ? Ptr(L.k_raw) : Ptr(A.dk);
  lin.Forward(l, Matrix::kQ, LayerInput::kH1, h1, Data(P.wq), q_proj, N, d, qd);
  Note("matmul", l, "q_proj", q_proj, {N, qd});
  lin.Forward(l, Matrix::kK, LayerInput::kH1, h1, Data(P.wk), k_proj, N, d, kvd);
  Note("matmul", l, "k_proj", k_proj, {N, kvd});
  lin.Forward(l, Matrix::kV, LayerInput::kH1, h1, Data(P.wv), Ptr(A.dv), N, d, kvd);
  Note("matmul", l, "v_proj", Ptr(A.dv), {N, kvd});
  if (whole) {
    be_.RmsNormForward(q_proj, Data(P.q_norm), c_.norm_eps, N, qd, Ptr(A.dq), Ptr(L.rstd_q));
    Note("rmsnorm", l, "q_norm", Ptr(A.dq), {N, qd});
    be_.RmsNormForward(k_proj, Data(P.k_norm), c_.norm_eps, N, kvd, Ptr(A.dk), Ptr(L.rstd_k));
    Note("rmsnorm", l, "k_norm", Ptr(A.dk), {N, kvd});
    be_.SplitHeads(Ptr(A.dq), Ptr(L.q), rows, T, H, hd);
    be_.SplitHeads(Ptr(A.dk), Ptr(L.k), rows, T, Hkv, hd);
  } else if (c_.qk_norm) {
    be_.SplitHeads(Ptr(A.dq), Ptr(L.q_raw), rows, T, H, hd);
    be_.SplitHeads(Ptr(A.dk), Ptr(L.k_raw), rows, T, Hkv, hd);
    be_.RmsNormForward(Ptr(L.q_raw), Data(P.q_norm), c_.norm_eps, N * H, hd, Ptr(L.q),
                       Ptr(L.rstd_q));
    Note("rmsnorm", l, "q_norm", Ptr(L.q), {rows, H, T, hd});
    be_.RmsNormForward(Ptr(L.k_raw), Data(P.k_norm), c_.norm_eps, N * Hkv, hd, Ptr(L.k),
                       Ptr(L.rstd_k));
    Note("rmsnorm", l, "k_norm", Ptr(L.k), {rows, Hkv, T, hd});
  } else {
    be_.SplitHeads(Ptr(A.dq), Ptr(L.q), rows, T, H, hd);
    be_.SplitHeads(Ptr(A.dk), Ptr(L.k), rows, T, Hkv, hd);
  }
  be_.SplitHeads(Ptr(A.dv), Ptr(L.v), rows, T, Hkv, hd);
  be_.RopeApply(Ptr(L.q), N * H, hd, A.pos_heads.data<int32_t>(), rope_.view, false);
  Note("rope", l, "q_rope", Ptr(L.q), {rows, H, T, hd});
  be_.RopeApply(Ptr(L.k), N * Hkv, hd, A.KeyPositions(), rope_.view, false);
  Note("rope", l, "k_rope", Ptr(L.k), {rows, Hkv, T, hd});
  const repops::AttentionShape s = A.Shape(b, H, Hkv, hd, c_.LayerWindow(l));
  be_.AttentionForward(s, Ptr(L.q), Ptr(L.k), Ptr(L.v), Ptr(A.dtmp), Ptr(L.probs));
  Note("attention", l, "attn_out", Ptr(A.dtmp), {rows, H, T, hd});
  be_.MergeHeads(Ptr(A.dtmp), Ptr(L.att), rows, T, H, hd);
  lin.SetInput(l, LayerInput::kAtt, Ptr(L.att), N, qd);
  float* o_out = post ? Ptr(L.o_out) : Ptr(L.x_mid);
  lin.Forward(l, Matrix::kO, LayerInput::kAtt, Ptr(L.att), Data(P.wo), o_out, N, qd, d);
  Note("matmul", l, "o_proj", o_out, {N, d});
  if (post) {
    be_.RmsNormForward(o_out, Data(P.attn_norm), c_.norm_eps, N, d, Ptr(L.x_mid), Ptr(L.rstd1));
    Note("rmsnorm", l, "o_norm", Ptr(L.x_mid), {N, d});
  }
  be_.AddInto(Ptr(L.x_mid), x_in, N * d);
  Note("add", l, "x_mid", Ptr(L.x_mid), {N, d});
  // MLP block.
  float* h2 = post ? Ptr(L.x_mid) : Ptr(L.h2);
  if (!post) {
    be_.RmsNormForward(Ptr(L.x_mid), Data(P.mlp_norm), c_.norm_eps, N, d, h2, Ptr(L.rstd2));
    Note("rmsnorm", l, "h2", h2, {N, d});
  }
  lin.SetInput(l, LayerInput::kH2, h2, N, d);
  lin.Forward(l, Matrix::kGate, LayerInput::kH2, h2, Data(P.w_gate), Ptr(L.a), N, d, ff);
  Note("matmul", l, "gate", Ptr(L.a), {N, ff});
  if (c_.mlp == MlpKind::kSwiGlu) {
    lin.Forward(l, Matrix::kUp, LayerInput::kH2, h2, Data(P.w_up), Ptr(L.b), N, d, ff);
    Note("matmul", l, "up", Ptr(L.b), {N, ff});
    be_.SwiGluForward(Ptr(L.a), Ptr(L.b), N * ff, Ptr(L.act));
    Note("swiglu", l, "act", Ptr(L.act), {N, ff});
  } else {
    be_.GeluForward(Ptr(L.a), N * ff, Ptr(L.act));
    Note("gelu", l, "act", Ptr(L.act), {N, ff});
  }
  lin.SetInput(l, LayerInput::kAct, Ptr(L.act), N, ff);
  if (!to_output && !post) return;
  float* x_out = !to_output            ? Ptr(A.dtmp)  // recomputing: the norm's 1/rms only
                 : l + 1 < c_.n_layers ? Ptr(A.layers_[l + 1].x_in)
                                       : Ptr(A.x_final);
  float* down = post ? Ptr(L.down_out) : x_out;
  lin.Forward(l, Matrix::kDown, LayerInput::kAct, Ptr(L.act), Data(P.w_down), down, N, ff, d);
  Note("matmul", l, "down", down, {N, d});
  if (post) {
    be_.RmsNormForward(down, Data(P.mlp_norm), c_.norm_eps, N, d, x_out, Ptr(L.rstd2));
    Note("rmsnorm", l, "down_norm", x_out, {N, d});
    if (!to_output) return;
  }
  be_.AddInto(x_out, Ptr(L.x_mid), N * d);
  Note("add", l, "x_out", x_out, {N, d});
}

repops::CrossEntropySums Transformer::ForwardBackward(const ParameterSet& p, const BatchView& b,
                                                      float grad_scale, Activations& A,
                                                      ParameterSet& grads) {
  if (residency_ != nullptr) residency_->BeginPass(/*backward=*/true);
  const repops::CrossEntropySums sums = ForwardPass(p, b, A);
  Backward(p, b, grad_scale, A, grads);
  return sums;
}

void Transformer::Backward(const ParameterSet& p, const BatchView& b, float grad_scale,
                           Activations& A, ParameterSet& g) {
  const int64_t N = b.rows * b.seq, d = c_.d_model, V = c_.vocab_size;
  // Every weight gradient below is written by a GEMM that overwrites it; only the tensors
  // that accumulate (norm gains, and the embedding when the head does not write it first) start
  // from +0.
  for (DeviceTensor& t : g.tensors()) {
    if (t.rank() == 1 || (&t == g.embed && !c_.tied_embeddings)) be_.Zero(t.view());
  }
  A.linear.BeginBackward(g);  // learned step sizes: overwritten by their layer's backward
  // Loss -> logits (in place: the logits are not needed after this).
  float* dlogits = Ptr(A.logits);
  be_.CrossEntropyBackward(Ptr(A.logits), A.labels.data<int32_t>(), Ptr(A.lse), N, V, kIgnoreLabel,
                           grad_scale, c_.z_loss, dlogits);
  Note("cross_entropy_bwd", -1, "d_logits", dlogits, {N, V});
  float* dhf = Ptr(A.dx2);
  if (c_.tied_embeddings) {
    be_.MatMul(dlogits, Data(p.embed), dhf, N, V, d, false);
    Note("matmul", -1, "d_hf", dhf, {N, d});
    be_.MatMulAT(dlogits, Ptr(A.hf), MutData(g.embed), V, N, d, false);
    Note("matmul", -1, "g.embed", Data(g.embed), {V, d});
  } else {
    be_.MatMulBT(dlogits, Data(p.lm_head), dhf, N, V, d, false);
    Note("matmul", -1, "d_hf", dhf, {N, d});
    be_.MatMulAT(Ptr(A.hf), dlogits, MutData(g.lm_head), d, N, V, false);
    Note("matmul", -1, "g.lm_head", Data(g.lm_head), {d, V});
  }
  float* dx = Ptr(A.dx);  // d loss / d (residual stream), walking down the layers
  be_.RmsNormBackward(dhf, Ptr(A.x_final), Data(p.final_norm), Ptr(A.rstd_f), N, d, dx,
                      MutData(g.final_norm));
  Note("rmsnorm_bwd", -1, "d_x_final", dx, {N, d});
  Note("rmsnorm_bwd", -1, "g.final_norm", Data(g.final_norm), {d});
  Release(p.head_unit());
  for (int64_t l = c_.n_layers - 1; l >= 0; --l) {
    Acquire(ParameterSet::LayerUnit(l));
    // The shared set still holds the top layer from the forward; every other is run again.
    if (A.recompute() == Recompute::kLayers && l + 1 < c_.n_layers) {
      struct Quiet {  // the observer sees each op once, recomputed or not
        bool& flag;
        explicit Quiet(bool& f) : flag(f) { flag = true; }
        ~Quiet() { flag = false; }
      } quiet(recomputing_);
      ForwardLayer(l, p, b, A, /*to_output=*/false);
    }
    BackwardLayer(l, p, b, A, g);
    Release(ParameterSet::LayerUnit(l));
  }
  if (!c_.tied_embeddings) Acquire(ParameterSet::kEmbedUnit);
  if (c_.embed_norm) {
    be_.RmsNormBackward(dx, Ptr(A.emb), Data(p.embed_norm), Ptr(A.rstd_e), N, d, Ptr(A.dtmp),
                        MutData(g.embed_norm));
    Note("rmsnorm_bwd", -1, "d_embed", Ptr(A.dtmp), {N, d});
    Note("rmsnorm_bwd", -1, "g.embed_norm", Data(g.embed_norm), {d});
    dx = Ptr(A.dtmp);
  }
  be_.EmbeddingBackward(dx, A.inputs.data<int32_t>(), N, V, d, MutData(g.embed));
  Note("embedding_bwd", -1, "g.embed", Data(g.embed), {V, d});
  Release(ParameterSet::kEmbedUnit);
}

// Post-norm: d loss / d y of a block's output y, normalized as RMSNorm(y, gain) with 1/rms `rstd`
// and added to the residual, from A.dx; into A.dtmp (returned), its gain's gradient into ggain.
const float* Transformer::OutputNormBackward(int64_t l, Activations& A, int64_t N, const Buffer& y,
                                             const Buffer& rstd, const DeviceTensor* gain,
                                             DeviceTensor* ggain, const char* name,
                                             const char* gain_name) {
  const int64_t d = c_.d_model;
  be_.RmsNormBackward(Ptr(A.dx), Ptr(y), Data(gain), Ptr(rstd), N, d, Ptr(A.dtmp), MutData(ggain));
  Note("rmsnorm_bwd", l, name, Ptr(A.dtmp), {N, d});
  Note("rmsnorm_bwd", l, gain_name, Data(ggain), {d});
  return Ptr(A.dtmp);
}

// The q, k and v projections' backward from dq, dk, dv (after RoPE's): each projection's
// gradient in turn (heads -> [N, width] in dx2, through QK-norm's backward where there is one),
// its weight gradient, and its share of d loss / d h1 into A.dh1, summed in the order q, k, v.
void Transformer::BackwardQkv(int64_t l, const BatchView& b, Activations& A, const LayerParams& P,
                              LayerParams& G, const float* h1) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), Hkv = c_.kv_heads();
  Activations::Layer& L = A.Work(l);
  LinearLayers& lin = A.linear;
  struct Proj {
    Matrix m;
    int64_t heads;
    float* dheads;
    const float* raw;
    const float* rstd;
    const DeviceTensor *w, *gain;
    DeviceTensor *gw, *ggain;
    const char *norm_name, *grad_name, *gain_name;
  };
  const Proj projs[3] = {{Matrix::kQ, H, Ptr(A.dq), Ptr(L.q_raw), Ptr(L.rstd_q), P.wq, P.q_norm,
                          G.wq, G.q_norm, "dQ_norm", "g.wq", "g.q_norm"},
                         {Matrix::kK, Hkv, Ptr(A.dk), Ptr(L.k_raw), Ptr(L.rstd_k), P.wk, P.k_norm,
                          G.wk, G.k_norm, "dK_norm", "g.wk", "g.k_norm"},
                         {Matrix::kV, Hkv, Ptr(A.dv), nullptr, nullptr, P.wv, nullptr, G.wv,
                          nullptr, nullptr, "g.wv", nullptr}};
  for (int i = 0; i < 3; ++i) {
    const Proj& pr = projs[i];
    const int64_t width = pr.heads * hd;  // q_dim for q, kv_dim for k and v
    const bool normed = c_.qk_norm && pr.raw != nullptr;
    const float* dproj = Ptr(A.dx2);        // d loss / d (the projection's [N, width] output)
    if (normed && c_.qk_norm_projection) {  // rows of width, after the merge
      be_.MergeHeads(pr.dheads, Ptr(A.dx2), rows, T, pr.heads, hd);
      be_.RmsNormBackward(Ptr(A.dx2), pr.raw, Data(pr.gain), pr.rstd, N, width, Ptr(A.dtmp),
                          MutData(pr.ggain));
      Note("rmsnorm_bwd", l, pr.norm_name, Ptr(A.dtmp), {N, width});
      Note("rmsnorm_bwd", l, pr.gain_name, Data(pr.ggain), {width});  // with qk_norm_gain
      dproj = Ptr(A.dtmp);
    } else if (normed) {  // rows of hd, before the merge
      be_.RmsNormBackward(pr.dheads, pr.raw, Data(pr.gain), pr.rstd, N * pr.heads, hd, Ptr(A.dtmp),
                          MutData(pr.ggain));
      Note("rmsnorm_bwd", l, pr.norm_name, Ptr(A.dtmp), {rows, pr.heads, T, hd});
      Note("rmsnorm_bwd", l, pr.gain_name, Data(pr.ggain), {hd});  // with qk_norm_gain
      be_.MergeHeads(Ptr(A.dtmp), Ptr(A.dx2), rows, T, pr.heads, hd);
    } else {
      be_.MergeHeads(pr.dheads, Ptr(A.dx2), rows, T, pr.heads, hd);
    }
    lin.Backward(l, pr.m, LayerInput::kH1, h1, dproj, Data(pr.w), Ptr(A.dh1), MutData(pr.gw), N, d,
                 width, /*accumulate=*/i > 0);
    Note("matmul", l, pr.grad_name, Data(pr.gw), {d, width});
  }
}

// Layer l's backward: A.dx holds d loss / d (layer l's output) on entry and d loss / d (its
// input) on return; the layer's weight gradients are written into g.layers[l].
void Transformer::BackwardLayer(int64_t l, const ParameterSet& p, const BatchView& b,
                                Activations& A, ParameterSet& g) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), ff = c_.d_ff;
  const int64_t Hkv = c_.kv_heads(), qd = c_.q_dim();
  Activations::Layer& L = A.Work(l);
  const float* x_in = Ptr(A.layers_[l].x_in);
  const LayerParams& P = p.layers[l];
  LayerParams& G = g.layers[l];
  float* dx = Ptr(A.dx);
  LinearLayers& lin = A.linear;
  const bool post = c_.post_norm;
  // MLP block: x_out = x_mid + act·Wd (post-norm: x_mid + RMSNorm(act·Wd)).
  const float* d_down = post ? OutputNormBackward(l, A, N, L.down_out, L.rstd2, P.mlp_norm,
                                                  G.mlp_norm, "d_down", "g.mlp_norm")
                             : dx;
  const float* h2 = post ? Ptr(L.x_mid) : Ptr(L.h2);
  lin.Backward(l, Matrix::kDown, LayerInput::kAct, Ptr(L.act), d_down, Data(P.w_down), Ptr(A.dh),
               MutData(G.w_down), N, ff, d);
  Note("matmul", l, "d_act", Ptr(A.dh), {N, ff});
  Note("matmul", l, "g.w_down", Data(G.w_down), {ff, d});
  if (c_.mlp == MlpKind::kSwiGlu) {
    be_.SwiGluBackward(Ptr(A.dh), Ptr(L.a), Ptr(L.b), N * ff, Ptr(A.da), Ptr(A.db));
    Note("swiglu_bwd", l, "d_gate", Ptr(A.da), {N, ff});
    Note("swiglu_bwd", l, "d_up", Ptr(A.db), {N, ff});
    lin.Backward(l, Matrix::kGate, LayerInput::kH2, h2, Ptr(A.da), Data(P.w_gate), Ptr(A.dx2),
                 MutData(G.w_gate), N, d, ff);
    Note("matmul", l, "g.w_gate", Data(G.w_gate), {d, ff});
    lin.Backward(l, Matrix::kUp, LayerInput::kH2, h2, Ptr(A.db), Data(P.w_up), Ptr(A.dx2),
                 MutData(G.w_up), N, d, ff, /*accumulate=*/true);
    Note("matmul", l, "g.w_up", Data(G.w_up), {d, ff});
  } else {
    be_.GeluBackward(Ptr(A.dh), Ptr(L.a), N * ff, Ptr(A.da));
    Note("gelu_bwd", l, "d_gate", Ptr(A.da), {N, ff});
    lin.Backward(l, Matrix::kGate, LayerInput::kH2, h2, Ptr(A.da), Data(P.w_gate), Ptr(A.dx2),
                 MutData(G.w_gate), N, d, ff);
    Note("matmul", l, "g.w_gate", Data(G.w_gate), {d, ff});
  }
  Note("matmul", l, "d_h2", Ptr(A.dx2), {N, d});
  if (post) {
    be_.AddInto(dx, Ptr(A.dx2), N * d);  // now d loss / d x_mid
  } else {
    be_.RmsNormBackward(Ptr(A.dx2), Ptr(L.x_mid), Data(P.mlp_norm), Ptr(L.rstd2), N, d, Ptr(A.dtmp),
                        MutData(G.mlp_norm));
    Note("rmsnorm_bwd", l, "d_x_mid_norm", Ptr(A.dtmp), {N, d});
    Note("rmsnorm_bwd", l, "g.mlp_norm", Data(G.mlp_norm), {d});
    be_.AddInto(dx, Ptr(A.dtmp), N * d);  // now d loss / d x_mid
  }
  Note("add", l, "d_x_mid", dx, {N, d});
  // Attention block: x_mid = x_in + att·Wo (post-norm: x_in + RMSNorm(att·Wo)).
  const float* d_o = post ? OutputNormBackward(l, A, N, L.o_out, L.rstd1, P.attn_norm, G.attn_norm,
                                               "d_o_proj", "g.attn_norm")
                          : dx;
  lin.Backward(l, Matrix::kO, LayerInput::kAtt, Ptr(L.att), d_o, Data(P.wo), Ptr(A.dx2),
               MutData(G.wo), N, qd, d);
  Note("matmul", l, "d_att", Ptr(A.dx2), {N, qd});
  Note("matmul", l, "g.wo", Data(G.wo), {qd, d});
  be_.SplitHeads(Ptr(A.dx2), Ptr(A.dtmp), rows, T, H, hd);
  const repops::AttentionShape s = A.Shape(b, H, Hkv, hd, c_.LayerWindow(l));
  be_.AttentionBackward(s, Ptr(L.q), Ptr(L.k), Ptr(L.v), Ptr(L.probs), Ptr(A.dtmp), Ptr(A.dq),
                        Ptr(A.dk), Ptr(A.dv));
  Note("attention_bwd", l, "dQ", Ptr(A.dq), {rows, H, T, hd});
  Note("attention_bwd", l, "dK", Ptr(A.dk), {rows, Hkv, T, hd});
  Note("attention_bwd", l, "dV", Ptr(A.dv), {rows, Hkv, T, hd});
  be_.RopeApply(Ptr(A.dq), N * H, hd, A.pos_heads.data<int32_t>(), rope_.view, true);
  Note("rope_bwd", l, "dQ_rope", Ptr(A.dq), {rows, H, T, hd});
  be_.RopeApply(Ptr(A.dk), N * Hkv, hd, A.KeyPositions(), rope_.view, true);
  Note("rope_bwd", l, "dK_rope", Ptr(A.dk), {rows, Hkv, T, hd});
  BackwardQkv(l, b, A, P, G, post ? x_in : Ptr(L.h1));
  Note("matmul", l, "d_h1", Ptr(A.dh1), {N, d});
  if (post) {
    be_.AddInto(dx, Ptr(A.dh1), N * d);  // now d loss / d x_in
  } else {
    be_.RmsNormBackward(Ptr(A.dh1), x_in, Data(P.attn_norm), Ptr(L.rstd1), N, d, Ptr(A.dtmp),
                        MutData(G.attn_norm));
    Note("rmsnorm_bwd", l, "d_x_in_norm", Ptr(A.dtmp), {N, d});
    Note("rmsnorm_bwd", l, "g.attn_norm", Data(G.attn_norm), {d});
    be_.AddInto(dx, Ptr(A.dtmp), N * d);  // now d loss / d x_in
  }
  Note("add", l, "d_x_in", dx, {N, d});
}

}  // namespace trail::model
