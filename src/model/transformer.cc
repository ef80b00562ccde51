#include "model/transformer.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "repops/activation.h"
#include "repops/attention.h"
#include "repops/embedding.h"
#include "repops/gemm.h"
#include "repops/norm.h"
#include "repops/parallel.h"

namespace trail::model {
namespace {

using repops::MatMul;
using repops::MatMulAT;
using repops::MatMulBT;

// [rows, T, H, hd] (= [N, d]) -> [rows, H, T, hd].
void SplitHeads(const float* x, float* y, int64_t rows, int64_t T, int64_t H, int64_t hd) {
  repops::ForEachRow(rows * H, [&](int64_t bh) {
    const int64_t r = bh / H, h = bh % H;
    for (int64_t t = 0; t < T; ++t) {
      std::memcpy(y + (bh * T + t) * hd, x + ((r * T + t) * H + h) * hd, hd * sizeof(float));
    }
  });
}

// [rows, H, T, hd] -> [rows, T, H, hd] (= [N, d]).
void MergeHeads(const float* y, float* x, int64_t rows, int64_t T, int64_t H, int64_t hd) {
  repops::ForEachRow(rows * H, [&](int64_t bh) {
    const int64_t r = bh / H, h = bh % H;
    for (int64_t t = 0; t < T; ++t) {
      std::memcpy(x + ((r * T + t) * H + h) * hd, y + (bh * T + t) * hd, hd * sizeof(float));
    }
  });
}

// y = y + x elementwise (IEEE addition is commutative, so this is also x + y).
void AddInto(float* y, const float* x, int64_t n) {
  constexpr int64_t kChunk = 1 << 14;
  repops::ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) y[i] = y[i] + x[i];
  });
}

const float* Data(const Tensor* t) { return t ? t->data<float>() : nullptr; }
float* MutData(Tensor* t) { return t ? t->data<float>() : nullptr; }

}  // namespace

Activations::Activations(const ModelConfig& c, int64_t max_rows, int64_t max_seq)
    : max_rows_(max_rows), max_seq_(max_seq), linear(c, max_rows * max_seq) {
  c.Validate();
  TRAIL_CHECK(max_rows > 0 && max_seq > 0 && max_seq <= c.max_seq_len, "activations for ",
              max_rows, " rows of ", max_seq, " positions: the model accepts 1..",
              c.max_seq_len, " positions");
  const size_t N = static_cast<size_t>(max_rows * max_seq);
  const size_t d = c.d_model, ff = c.d_ff, H = c.n_heads, V = c.vocab_size;
  const bool swiglu = c.mlp == MlpKind::kSwiGlu;
  layers_.resize(c.n_layers);
  for (Layer& L : layers_) {
    L.x_in.resize(N * d), L.rstd1.resize(N), L.h1.resize(N * d);
    if (c.qk_norm) L.q_raw.resize(N * d), L.k_raw.resize(N * d), L.rstd_q.resize(N * H),
        L.rstd_k.resize(N * H);
    L.q.resize(N * d), L.k.resize(N * d), L.v.resize(N * d);
    L.probs.resize(static_cast<size_t>(max_rows) * H * max_seq * max_seq);
    L.att.resize(N * d), L.x_mid.resize(N * d), L.rstd2.resize(N), L.h2.resize(N * d);
    L.a.resize(N * ff), L.act.resize(N * ff);
    if (swiglu) L.b.resize(N * ff);
  }
  if (c.embed_norm) emb.resize(N * d), rstd_e.resize(N);
  x_final.resize(N * d), rstd_f.resize(N), hf.resize(N * d), logits.resize(N * V), lse.resize(N);
  pos_heads.resize(N * H);
  for (auto* v : {&dx, &dx2, &dh1, &dtmp, &dq, &dk, &dv}) v->resize(N * d);
  dh.resize(N * ff), da.resize(N * ff);
  if (swiglu) db.resize(N * ff);
}

int64_t Activations::bytes() const {
  size_t n = 0;
  for (const Layer& L : layers_) {
    for (const auto* v : {&L.x_in, &L.rstd1, &L.h1, &L.q_raw, &L.k_raw, &L.rstd_q, &L.rstd_k, &L.q,
                          &L.k, &L.v, &L.probs, &L.att, &L.x_mid, &L.rstd2, &L.h2, &L.a, &L.b,
                          &L.act}) {
      n += v->size();
    }
  }
  for (const auto* v : {&emb, &rstd_e, &x_final, &rstd_f, &hf, &logits, &lse, &dx, &dx2, &dh1,
                        &dtmp, &dq, &dk, &dv, &dh, &da, &db}) {
    n += v->size();
  }
  return static_cast<int64_t>((n + pos_heads.size()) * sizeof(float)) + linear.bytes();
}

int64_t Activations::PlannedBytes(const ModelConfig& c, int64_t max_rows, int64_t max_seq) {
  const int64_t N = max_rows * max_seq, d = c.d_model, ff = c.d_ff, H = c.n_heads;
  const int64_t mlp_buffers = c.mlp == MlpKind::kSwiGlu ? 3 : 2;  // a, act (+ b for SwiGLU)
  int64_t per_layer = N * (8 * d + 2) + max_rows * H * max_seq * max_seq + mlp_buffers * N * ff;
  if (c.qk_norm) per_layer += N * (2 * d + 2 * H);
  int64_t global = N * (2 * d + 2) + N * c.vocab_size + N * H  // x_final, hf, rstd_f, lse, logits, pos
                   + 7 * N * d + mlp_buffers * N * ff;         // backward scratch
  if (c.embed_norm) global += N * (d + 1);
  return (c.n_layers * per_layer + global) * static_cast<int64_t>(sizeof(float)) +
         LinearLayers::PlannedBytes(c, N);
}

Transformer::Transformer(const ModelConfig& c)
    : c_(c), rope_(repops::MakeRopeTable(c.max_seq_len, c.head_dim(), c.rope_theta)) {
  c_.Validate();
}

repops::CrossEntropySums Transformer::Forward(const ParameterSet& p, const BatchView& b,
                                              Activations& A) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), ff = c_.d_ff,
                V = c_.vocab_size;
  TRAIL_CHECK(rows > 0 && T > 0 && rows <= A.max_rows_ && T <= A.max_seq_,
              "model: a batch of ", rows, " rows × ", T, " positions does not fit the planned ",
              A.max_rows_, " × ", A.max_seq_);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < T; ++t) {
      const int32_t pos = b.positions ? b.positions[r * T + t] : static_cast<int32_t>(t);
      TRAIL_CHECK(pos >= 0 && pos < c_.max_seq_len, "model: position ", pos, " at row ", r,
                  ", token ", t, " is outside [0, ", c_.max_seq_len, ")");
      for (int64_t h = 0; h < H; ++h) A.pos_heads[(r * H + h) * T + t] = pos;
    }
  }
  A.linear.BeginForward(p);
  float* x0 = A.layers_[0].x_in.data();
  if (c_.embed_norm) {
    repops::EmbeddingForward(Data(p.embed), V, d, b.inputs, N, A.emb.data());
    Note("embedding", -1, "embed", A.emb.data(), {N, d});
    repops::RmsNormForward(A.emb.data(), Data(p.embed_norm), c_.norm_eps, N, d, x0,
                           A.rstd_e.data());
    Note("rmsnorm", -1, "x0", x0, {N, d});
  } else {
    repops::EmbeddingForward(Data(p.embed), V, d, b.inputs, N, x0);
    Note("embedding", -1, "x0", x0, {N, d});
  }
  for (int64_t l = 0; l < c_.n_layers; ++l) {
    Activations::Layer& L = A.layers_[l];
    const LayerParams& P = p.layers[l];
    // Attention block. dq/dk/dv double as [N, d] projection scratch in the forward.
    repops::RmsNormForward(L.x_in.data(), Data(P.attn_norm), c_.norm_eps, N, d, L.h1.data(),
                           L.rstd1.data());
    Note("rmsnorm", l, "h1", L.h1.data(), {N, d});
    LinearLayers& lin = A.linear;
    lin.SetInput(l, LayerInput::kH1, L.h1.data(), N, d);
    lin.Forward(l, Matrix::kQ, LayerInput::kH1, L.h1.data(), Data(P.wq), A.dq.data(), N, d, d);
    Note("matmul", l, "q_proj", A.dq.data(), {N, d});
    lin.Forward(l, Matrix::kK, LayerInput::kH1, L.h1.data(), Data(P.wk), A.dk.data(), N, d, d);
    Note("matmul", l, "k_proj", A.dk.data(), {N, d});
    lin.Forward(l, Matrix::kV, LayerInput::kH1, L.h1.data(), Data(P.wv), A.dv.data(), N, d, d);
    Note("matmul", l, "v_proj", A.dv.data(), {N, d});
    if (c_.qk_norm) {
      SplitHeads(A.dq.data(), L.q_raw.data(), rows, T, H, hd);
      SplitHeads(A.dk.data(), L.k_raw.data(), rows, T, H, hd);
      repops::RmsNormForward(L.q_raw.data(), nullptr, c_.norm_eps, N * H, hd, L.q.data(),
                             L.rstd_q.data());
      Note("rmsnorm", l, "q_norm", L.q.data(), {rows, H, T, hd});
      repops::RmsNormForward(L.k_raw.data(), nullptr, c_.norm_eps, N * H, hd, L.k.data(),
                             L.rstd_k.data());
      Note("rmsnorm", l, "k_norm", L.k.data(), {rows, H, T, hd});
    } else {
      SplitHeads(A.dq.data(), L.q.data(), rows, T, H, hd);
      SplitHeads(A.dk.data(), L.k.data(), rows, T, H, hd);
    }
    SplitHeads(A.dv.data(), L.v.data(), rows, T, H, hd);
    repops::RopeApply(L.q.data(), N * H, hd, A.pos_heads.data(), rope_, false);
    Note("rope", l, "q_rope", L.q.data(), {rows, H, T, hd});
    repops::RopeApply(L.k.data(), N * H, hd, A.pos_heads.data(), rope_, false);
    Note("rope", l, "k_rope", L.k.data(), {rows, H, T, hd});
    const repops::AttentionShape s{rows, H, T, hd, c_.LayerWindow(l), b.doc_ids, b.key_valid};
    repops::AttentionForward(s, L.q.data(), L.k.data(), L.v.data(), A.dtmp.data(),
                             L.probs.data());
    Note("attention", l, "attn_out", A.dtmp.data(), {rows, H, T, hd});
    MergeHeads(A.dtmp.data(), L.att.data(), rows, T, H, hd);
    lin.SetInput(l, LayerInput::kAtt, L.att.data(), N, d);
    lin.Forward(l, Matrix::kO, LayerInput::kAtt, L.att.data(), Data(P.wo), L.x_mid.data(), N, d,
                d);
    Note("matmul", l, "o_proj", L.x_mid.data(), {N, d});
    AddInto(L.x_mid.data(), L.x_in.data(), N * d);
    Note("add", l, "x_mid", L.x_mid.data(), {N, d});
    // MLP block.
    repops::RmsNormForward(L.x_mid.data(), Data(P.mlp_norm), c_.norm_eps, N, d, L.h2.data(),
                           L.rstd2.data());
    Note("rmsnorm", l, "h2", L.h2.data(), {N, d});
    lin.SetInput(l, LayerInput::kH2, L.h2.data(), N, d);
    lin.Forward(l, Matrix::kGate, LayerInput::kH2, L.h2.data(), Data(P.w_gate), L.a.data(), N,
                d, ff);
    Note("matmul", l, "gate", L.a.data(), {N, ff});
    if (c_.mlp == MlpKind::kSwiGlu) {
      lin.Forward(l, Matrix::kUp, LayerInput::kH2, L.h2.data(), Data(P.w_up), L.b.data(), N, d,
                  ff);
      Note("matmul", l, "up", L.b.data(), {N, ff});
      repops::SwiGluForward(L.a.data(), L.b.data(), N * ff, L.act.data());
      Note("swiglu", l, "act", L.act.data(), {N, ff});
    } else {
      repops::GeluForward(L.a.data(), N * ff, L.act.data());
      Note("gelu", l, "act", L.act.data(), {N, ff});
    }
    float* x_out = l + 1 < c_.n_layers ? A.layers_[l + 1].x_in.data() : A.x_final.data();
    lin.SetInput(l, LayerInput::kAct, L.act.data(), N, ff);
    lin.Forward(l, Matrix::kDown, LayerInput::kAct, L.act.data(), Data(P.w_down), x_out, N, ff,
                d);
    Note("matmul", l, "down", x_out, {N, d});
    AddInto(x_out, L.x_mid.data(), N * d);
    Note("add", l, "x_out", x_out, {N, d});
  }
  repops::RmsNormForward(A.x_final.data(), Data(p.final_norm), c_.norm_eps, N, d, A.hf.data(),
                         A.rstd_f.data());
  Note("rmsnorm", -1, "hf", A.hf.data(), {N, d});
  if (c_.tied_embeddings) {
    MatMulBT(A.hf.data(), Data(p.embed), A.logits.data(), N, d, V);
  } else {
    MatMul(A.hf.data(), Data(p.lm_head), A.logits.data(), N, d, V);
  }
  Note("matmul", -1, "logits", A.logits.data(), {N, V});
  const repops::CrossEntropySums sums = repops::CrossEntropyForward(
      A.logits.data(), b.labels, N, V, kIgnoreLabel, A.lse.data());
  Note("cross_entropy", -1, "lse", A.lse.data(), {N});
  return sums;
}

repops::CrossEntropySums Transformer::ForwardBackward(const ParameterSet& p, const BatchView& b,
                                                      float grad_scale, Activations& A,
                                                      ParameterSet& grads) {
  const repops::CrossEntropySums sums = Forward(p, b, A);
  Backward(p, b, grad_scale, A, grads);
  return sums;
}

void Transformer::Backward(const ParameterSet& p, const BatchView& b, float grad_scale,
                           Activations& A, ParameterSet& g) {
  const int64_t N = b.rows * b.seq, d = c_.d_model, V = c_.vocab_size;
  // Every weight gradient below is written by a GEMM that overwrites it; only the tensors
  // that accumulate (norm gains, and the embedding when the head does not write it first) start
  // from +0.
  for (Tensor& t : g.tensors()) {
    if (t.rank() == 1 || (&t == g.embed && !c_.tied_embeddings)) t.Zero();
  }
  A.linear.BeginBackward(g);  // learned step sizes: overwritten by their layer's backward
  // Loss -> logits (in place: the logits are not needed after this).
  float* dlogits = A.logits.data();
  repops::CrossEntropyBackward(A.logits.data(), b.labels, A.lse.data(), N, V, kIgnoreLabel,
                               grad_scale, c_.z_loss, dlogits);
  Note("cross_entropy_bwd", -1, "d_logits", dlogits, {N, V});
  float* dhf = A.dx2.data();
  if (c_.tied_embeddings) {
    MatMul(dlogits, Data(p.embed), dhf, N, V, d);
    Note("matmul", -1, "d_hf", dhf, {N, d});
    MatMulAT(dlogits, A.hf.data(), MutData(g.embed), V, N, d);
    Note("matmul", -1, "g.embed", Data(g.embed), {V, d});
  } else {
    MatMulBT(dlogits, Data(p.lm_head), dhf, N, V, d);
    Note("matmul", -1, "d_hf", dhf, {N, d});
    MatMulAT(A.hf.data(), dlogits, MutData(g.lm_head), d, N, V);
    Note("matmul", -1, "g.lm_head", Data(g.lm_head), {d, V});
  }
  float* dx = A.dx.data();  // d loss / d (residual stream), walking down the layers
  repops::RmsNormBackward(dhf, A.x_final.data(), Data(p.final_norm), A.rstd_f.data(), N, d, dx,
                          MutData(g.final_norm));
  Note("rmsnorm_bwd", -1, "d_x_final", dx, {N, d});
  Note("rmsnorm_bwd", -1, "g.final_norm", Data(g.final_norm), {d});
  for (int64_t l = c_.n_layers - 1; l >= 0; --l) BackwardLayer(l, p, b, A, g);
  if (c_.embed_norm) {
    repops::RmsNormBackward(dx, A.emb.data(), Data(p.embed_norm), A.rstd_e.data(), N, d,
                            A.dtmp.data(), MutData(g.embed_norm));
    Note("rmsnorm_bwd", -1, "d_embed", A.dtmp.data(), {N, d});
    Note("rmsnorm_bwd", -1, "g.embed_norm", Data(g.embed_norm), {d});
    dx = A.dtmp.data();
  }
  repops::EmbeddingBackward(dx, b.inputs, N, V, d, MutData(g.embed));
  Note("embedding_bwd", -1, "g.embed", Data(g.embed), {V, d});
}

// Layer l's backward: A.dx holds d loss / d (layer l's output) on entry and d loss / d (its
// input) on return; the layer's weight gradients are written into g.layers[l].
void Transformer::BackwardLayer(int64_t l, const ParameterSet& p, const BatchView& b,
                                Activations& A, ParameterSet& g) {
  const int64_t rows = b.rows, T = b.seq, N = rows * T;
  const int64_t d = c_.d_model, H = c_.n_heads, hd = c_.head_dim(), ff = c_.d_ff;
  Activations::Layer& L = A.layers_[l];
  const LayerParams& P = p.layers[l];
  LayerParams& G = g.layers[l];
  float* dx = A.dx.data();
  LinearLayers& lin = A.linear;
  // MLP block: x_out = x_mid + act·Wd.
  lin.Backward(l, Matrix::kDown, LayerInput::kAct, L.act.data(), dx, Data(P.w_down),
               A.dh.data(), MutData(G.w_down), N, ff, d);
  Note("matmul", l, "d_act", A.dh.data(), {N, ff});
  Note("matmul", l, "g.w_down", Data(G.w_down), {ff, d});
  if (c_.mlp == MlpKind::kSwiGlu) {
    repops::SwiGluBackward(A.dh.data(), L.a.data(), L.b.data(), N * ff, A.da.data(),
                           A.db.data());
    Note("swiglu_bwd", l, "d_gate", A.da.data(), {N, ff});
    Note("swiglu_bwd", l, "d_up", A.db.data(), {N, ff});
    lin.Backward(l, Matrix::kGate, LayerInput::kH2, L.h2.data(), A.da.data(), Data(P.w_gate),
                 A.dx2.data(), MutData(G.w_gate), N, d, ff);
    Note("matmul", l, "g.w_gate", Data(G.w_gate), {d, ff});
    lin.Backward(l, Matrix::kUp, LayerInput::kH2, L.h2.data(), A.db.data(), Data(P.w_up),
                 A.dx2.data(), MutData(G.w_up), N, d, ff, /*accumulate=*/true);
    Note("matmul", l, "g.w_up", Data(G.w_up), {d, ff});
  } else {
    repops::GeluBackward(A.dh.data(), L.a.data(), N * ff, A.da.data());
    Note("gelu_bwd", l, "d_gate", A.da.data(), {N, ff});
    lin.Backward(l, Matrix::kGate, LayerInput::kH2, L.h2.data(), A.da.data(), Data(P.w_gate),
                 A.dx2.data(), MutData(G.w_gate), N, d, ff);
    Note("matmul", l, "g.w_gate", Data(G.w_gate), {d, ff});
  }
  Note("matmul", l, "d_h2", A.dx2.data(), {N, d});
  repops::RmsNormBackward(A.dx2.data(), L.x_mid.data(), Data(P.mlp_norm), L.rstd2.data(), N, d,
                          A.dtmp.data(), MutData(G.mlp_norm));
  Note("rmsnorm_bwd", l, "d_x_mid_norm", A.dtmp.data(), {N, d});
  Note("rmsnorm_bwd", l, "g.mlp_norm", Data(G.mlp_norm), {d});
  AddInto(dx, A.dtmp.data(), N * d);  // now d loss / d x_mid
  Note("add", l, "d_x_mid", dx, {N, d});
  // Attention block: x_mid = x_in + att·Wo.
  lin.Backward(l, Matrix::kO, LayerInput::kAtt, L.att.data(), dx, Data(P.wo), A.dx2.data(),
               MutData(G.wo), N, d, d);
  Note("matmul", l, "d_att", A.dx2.data(), {N, d});
  Note("matmul", l, "g.wo", Data(G.wo), {d, d});
  SplitHeads(A.dx2.data(), A.dtmp.data(), rows, T, H, hd);
  const repops::AttentionShape s{rows, H, T, hd, c_.LayerWindow(l), b.doc_ids, b.key_valid};
  repops::AttentionBackward(s, L.q.data(), L.k.data(), L.v.data(), L.probs.data(),
                            A.dtmp.data(), A.dq.data(), A.dk.data(), A.dv.data());
  Note("attention_bwd", l, "dQ", A.dq.data(), {rows, H, T, hd});
  Note("attention_bwd", l, "dK", A.dk.data(), {rows, H, T, hd});
  Note("attention_bwd", l, "dV", A.dv.data(), {rows, H, T, hd});
  repops::RopeApply(A.dq.data(), N * H, hd, A.pos_heads.data(), rope_, true);
  Note("rope_bwd", l, "dQ_rope", A.dq.data(), {rows, H, T, hd});
  repops::RopeApply(A.dk.data(), N * H, hd, A.pos_heads.data(), rope_, true);
  Note("rope_bwd", l, "dK_rope", A.dk.data(), {rows, H, T, hd});
  // Each projection's gradient in turn: heads -> [N, d] in dx2, its weight gradient, and its
  // share of d loss / d h1, summed in the order q, k, v.
  struct Proj {
    Matrix m; float* dheads; const float* raw; const float* rstd; const Tensor* w; Tensor* gw;
    const char *norm_name, *grad_name;
  };
  const Proj projs[3] = {
      {Matrix::kQ, A.dq.data(), L.q_raw.data(), L.rstd_q.data(), P.wq, G.wq, "dQ_norm", "g.wq"},
      {Matrix::kK, A.dk.data(), L.k_raw.data(), L.rstd_k.data(), P.wk, G.wk, "dK_norm", "g.wk"},
      {Matrix::kV, A.dv.data(), nullptr, nullptr, P.wv, G.wv, nullptr, "g.wv"}};
  for (int i = 0; i < 3; ++i) {
    const Proj& pr = projs[i];
    const float* heads = pr.dheads;
    if (c_.qk_norm && pr.raw != nullptr) {
      repops::RmsNormBackward(pr.dheads, pr.raw, nullptr, pr.rstd, N * H, hd, A.dtmp.data(),
                              nullptr);
      Note("rmsnorm_bwd", l, pr.norm_name, A.dtmp.data(), {rows, H, T, hd});
      heads = A.dtmp.data();
    }
    MergeHeads(heads, A.dx2.data(), rows, T, H, hd);
    lin.Backward(l, pr.m, LayerInput::kH1, L.h1.data(), A.dx2.data(), Data(pr.w), A.dh1.data(),
                 MutData(pr.gw), N, d, d, /*accumulate=*/i > 0);
    Note("matmul", l, pr.grad_name, Data(pr.gw), {d, d});
  }
  Note("matmul", l, "d_h1", A.dh1.data(), {N, d});
  repops::RmsNormBackward(A.dh1.data(), L.x_in.data(), Data(P.attn_norm), L.rstd1.data(), N, d,
                          A.dtmp.data(), MutData(G.attn_norm));
  Note("rmsnorm_bwd", l, "d_x_in_norm", A.dtmp.data(), {N, d});
  Note("rmsnorm_bwd", l, "g.attn_norm", Data(G.attn_norm), {d});
  AddInto(dx, A.dtmp.data(), N * d);  // now d loss / d x_in
  Note("add", l, "d_x_in", dx, {N, d});
}

}  // namespace trail::model
