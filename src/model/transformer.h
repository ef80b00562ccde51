// Forward and backward of the decoder-only transformer on RepOps, one micro-batch at a time.
//
//   x0   = Embed(tokens)                     [N, d]     N = rows × T
//   x0   = RMSNorm(x0, g_e)                  (embed_norm)
//   per layer l:
//     h1 = RMSNorm(x, g_attn)                [N, d]
//     q,k,v = h1·Wq, h1·Wk, h1·Wv            [N, d] -> heads [rows, H, T, hd]
//                                             (every block matrix product fp32 or int8 QAT:
//                                              model/linear_layers.h)
//     q,k = RMSNorm_hd(q), RMSNorm_hd(k)      (qk_norm, no gain)
//     q,k = RoPE(q), RoPE(k)                  (positions from the batch)
//     a  = Attention(q, k, v)                 (causal, window of layer l, document and padding masks)
//     x  = x + merge(a)·Wo
//     h2 = RMSNorm(x, g_mlp)
//     x  = x + (SiLU(h2·Wg) ⊙ (h2·Wu))·Wd    (SwiGLU)  or  x + GELU(h2·Win)·Wd
//   logits = RMSNorm(x, g_f)·W_lm            [N, V]     (W_lm = Embedᵀ when tied)
//   loss   = (Σ NLL + z Σ lse²) · scale      over the targets of the *whole step*
//
// Every reduction is a RepOps op with its canonical order, so the result does not depend on the
// backend or thread count; rows are independent, so neither on the other rows of the batch.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/linear_layers.h"
#include "model/op_observer.h"
#include "model/params.h"
#include "repops/cross_entropy.h"
#include "repops/rope.h"

namespace trail::model {

// One micro-batch, row-major [rows, T] (data::PackedBatch provides exactly these).
struct BatchView {
  int64_t rows = 0, seq = 0;
  const int32_t* inputs = nullptr;
  const int32_t* labels = nullptr;     // kIgnore = -100 where there is no target
  const int32_t* doc_ids = nullptr;    // attention documents (nullptr: one document per row)
  const int32_t* positions = nullptr;  // RoPE positions (nullptr: 0..T-1 in every row)
  const uint8_t* key_valid = nullptr;  // padding keys (nullptr: all valid)
};
inline constexpr int32_t kIgnoreLabel = -100;

// Every activation the backward needs, allocated once for up to max_rows × max_seq.
class Activations {
 public:
  Activations(const ModelConfig& c, int64_t max_rows, int64_t max_seq);
  int64_t bytes() const;  // the planned memory, reported at start
  // What the constructor would allocate, without allocating (for planning; model_test checks
  // that the two agree).
  static int64_t PlannedBytes(const ModelConfig& c, int64_t max_rows, int64_t max_seq);
  // int8 QAT: while held, forwards on one unchanged parameter set quantize its weights once
  // (LinearLayers::HoldWeights).
  void HoldQuantizedWeights(bool hold) { linear.HoldWeights(hold); }
 private:
  friend class Transformer;
  struct Layer {
    std::vector<float> x_in, rstd1, h1, q_raw, k_raw, rstd_q, rstd_k, q, k, v, probs, att,
        x_mid, rstd2, h2, a, b, act;
  };
  int64_t max_rows_, max_seq_;
  std::vector<Layer> layers_;
  std::vector<float> emb, rstd_e, x_final, rstd_f, hf, logits, lse;
  std::vector<int32_t> pos_heads;  // RoPE position of each [rows, H, T] row
  LinearLayers linear;             // the block matrices' products (int8: quantized operands)
  // Backward scratch.
  std::vector<float> dx, dx2, dh1, dtmp, dq, dk, dv, dh, da, db;
};


class Transformer {
 public:
  explicit Transformer(const ModelConfig& c);
  const ModelConfig& config() const { return c_; }

  // Forward only. Leaves logits [rows·T, V] in acts (Logits()). Returns the micro-batch's
  // sums of NLL and lse² over its targets (RepOps cross-entropy, canonical order).
  repops::CrossEntropySums Forward(const ParameterSet& p, const BatchView& b, Activations& acts);
  // Forward, then backward with d(loss)/d(nll_sum) = grad_scale: grads are overwritten with this
  // micro-batch's gradient (every tensor; +0 where a parameter is unused).
  repops::CrossEntropySums ForwardBackward(const ParameterSet& p, const BatchView& b,
                                           float grad_scale, Activations& acts,
                                           ParameterSet& grads);
  static const float* Logits(const Activations& acts) { return acts.logits.data(); }
  // Every operation's output goes to `o` from now on (nullptr: to no one).
  void set_observer(OpObserver* o) { observer_ = o; }

 private:
  void Note(const char* op, int64_t layer, const char* tensor, const float* data,
            std::initializer_list<int64_t> shape) const {
    if (observer_ != nullptr) observer_->Output(op, layer, tensor, data, shape);
  }
  void Backward(const ParameterSet& p, const BatchView& b, float grad_scale, Activations& acts,
                ParameterSet& grads);
  void BackwardLayer(int64_t l, const ParameterSet& p, const BatchView& b, Activations& acts,
                     ParameterSet& grads);
  ModelConfig c_;
  repops::RopeTable rope_;
  OpObserver* observer_ = nullptr;
};

}  // namespace trail::model
