// Forward and backward of the decoder-only transformer on RepOps, one micro-batch at a time.
//
//   x0   = Embed(tokens)                     [N, d]     N = rows × T
//   x0   = RMSNorm(x0, g_e)                  (embed_norm)
//   per layer l (pre-norm; post_norm below):
//     h1 = RMSNorm(x, g_attn)                [N, d]
//     q,k,v = h1·Wq, h1·Wk, h1·Wv            q [N, H·hd] -> [rows, H, T, hd]; k, v [N, Hkv·hd]
//                                             -> [rows, Hkv, T, hd] (Hkv = n_kv_heads, dividing
//                                             H; hd = head_dim, d / H unless set)
//                                             (every block matrix product fp32 or int8 QAT:
//                                              model/linear_layers.h)
//     q,k = RMSNorm_hd(q), RMSNorm_hd(k)      (qk_norm; gains [hd] with qk_norm_gain; with
//                                              qk_norm_projection RMSNorm(q), RMSNorm(k) of
//                                              the [N, H·hd], [N, Hkv·hd] projections before
//                                              the split, gains [H·hd], [Hkv·hd])
//     q,k = RoPE(q), RoPE(k)                  (positions from the batch)
//     a  = Attention(q, k, v)                 (causal, window of layer l, document and padding
//                                              masks)
//     x  = x + merge(a)·Wo                    merge(a) [N, H·hd], Wo [H·hd, d]
//     h2 = RMSNorm(x, g_mlp)
//     x  = x + (SiLU(h2·Wg) ⊙ (h2·Wu))·Wd     (SwiGLU)  or  x + GELU(h2·Win)·Wd
//   post_norm (OLMo 2): h1 = x, h2 = x (no input norms), and each block's output is normalized:
//     x  = x + RMSNorm(merge(a)·Wo, g_attn);  x = x + RMSNorm(MLP(x), g_mlp)
//   logits = RMSNorm(x, g_f)·W_lm            [N, V]     (W_lm = Embedᵀ when tied)
//   loss   = (Σ NLL + z Σ lse²) · scale      over the targets of the *whole step*
//
// Every reduction is a RepOps op with its canonical order, so the result does not depend on the
// backend or thread count; rows are independent, so neither on the other rows of the batch.
// Every operation runs on the model's backend (repops/backend.h) and every activation lives on
// its device; the host only reads the batch and, through the backend, the loss sums.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "model/config.h"
#include "model/linear_layers.h"
#include "model/op_observer.h"
#include "model/params.h"
#include "repops/backend.h"
#include "repops/cross_entropy.h"

namespace trail::model {

// One micro-batch, row-major [rows, T] (data::PackedBatch provides exactly these), on the host:
// the forward copies it to the device.
struct BatchView {
  int64_t rows = 0, seq = 0;
  const int32_t* inputs = nullptr;
  const int32_t* labels = nullptr;     // kIgnore = -100 where there is no target
  const int32_t* doc_ids = nullptr;    // attention documents (nullptr: one document per row)
  const int32_t* positions = nullptr;  // RoPE positions (nullptr: 0..T-1 in every row)
  const uint8_t* key_valid = nullptr;  // padding keys (nullptr: all valid)
};
inline constexpr int32_t kIgnoreLabel = -100;

// Every activation the backward needs, allocated once for up to max_rows × max_seq on the
// backend's device (which must outlive them), with the micro-batch's device copy. With
// Recompute::kLayers: every layer's input, and the rest for one layer (Recompute above).
class Activations {
 public:
  Activations(const ModelConfig& c, int64_t max_rows, int64_t max_seq, repops::Backend& backend,
              Recompute recompute = Recompute::kNone);
  int64_t bytes() const;  // the planned memory, reported at start
  // What the constructor would allocate, without allocating (for planning; model_test checks
  // that the two agree).
  static int64_t PlannedBytes(const ModelConfig& c, int64_t max_rows, int64_t max_seq,
                              Recompute recompute = Recompute::kNone);
  Recompute recompute() const { return recompute_; }
  // int8 QAT: while held, forwards on one unchanged parameter set quantize its weights once
  // (LinearLayers::HoldWeights).
  void HoldQuantizedWeights(bool hold) { linear.HoldWeights(hold); }

 private:
  friend class Transformer;
  struct Layer {
    // Pre-norm: h1, h2 are the blocks' normalized inputs, rstd1, rstd2 their norms' 1/rms.
    // Post-norm: o_out, down_out are the blocks' outputs before their norms (same sizes: the
    // inputs are x_in and x_mid themselves), rstd1, rstd2 those norms' 1/rms.
    Buffer x_in, rstd1, h1, o_out, q_raw, k_raw, rstd_q, rstd_k, q, k, v, probs, att, x_mid, rstd2,
        h2, down_out, a, b, act;
  };
  // The attention shape of batch b (its masks on the device) for `heads` query and `kv_heads`
  // key/value heads of hd, with `window`.
  repops::AttentionShape Shape(const BatchView& b, int64_t heads, int64_t kv_heads, int64_t hd,
                               int64_t window) const {
    const int32_t* docs = b.doc_ids ? doc_ids.data<int32_t>() : nullptr;
    const auto* valid =
        b.key_valid ? reinterpret_cast<const uint8_t*>(key_valid.data<int8_t>()) : nullptr;
    return {b.rows, heads, b.seq, hd, window, docs, valid, kv_heads};
  }
  // The RoPE position of each key row [rows, Hkv, T] (the queries' [rows, H, T] when Hkv = H).
  const int32_t* KeyPositions() const {
    return (pos_kv_heads.numel() > 0 ? pos_kv_heads : pos_heads).data<int32_t>();
  }
  // The buffers bytes() counts, in one list.
  std::vector<const Buffer*> AllBuffers() const;
  // Layer l's activations other than its input x_in (which is always layers_[l].x_in): its own,
  // or with recomputation the one set all layers share.
  Layer& Work(int64_t l) { return recompute_ == Recompute::kLayers ? work_ : layers_[l]; }
  int64_t max_rows_, max_seq_;
  Recompute recompute_;
  std::vector<Layer> layers_;
  Layer work_;  // with recomputation: the one layer's activations (its x_in unused)
  Buffer emb, rstd_e, x_final, rstd_f, hf, logits, lse;
  // The micro-batch on the device: inputs, labels, doc_ids [rows, T] (int32), key_valid
  // [rows, T] (uint8, as int8), and the RoPE position of each [rows, H, T] query row and, with
  // grouped-query attention, of each [rows, Hkv, T] key row (int32).
  Buffer inputs, labels, doc_ids, key_valid, pos_heads, pos_kv_heads;
  std::vector<int32_t> host_pos_heads_;  // pos_heads as assembled on the host
  LinearLayers linear;                   // the block matrices' products (int8: quantized operands)
  // Backward scratch.
  Buffer dx, dx2, dh1, dtmp, dq, dk, dv, dh, da, db;
};

class Transformer {
 public:
  // Runs on `backend`, which must outlive the model.
  Transformer(const ModelConfig& c, repops::Backend& backend);
  const ModelConfig& config() const { return c_; }
  repops::Backend& backend() const { return be_; }

  // Forward only. Leaves logits [rows·T, V] in acts (Logits()). Returns the micro-batch's
  // sums of NLL and lse² over its targets (RepOps cross-entropy, canonical order).
  repops::CrossEntropySums Forward(const ParameterSet& p, const BatchView& b, Activations& acts);
  // Forward, then backward with d(loss)/d(nll_sum) = grad_scale: grads are overwritten with this
  // micro-batch's gradient (every tensor; +0 where a parameter is unused).
  repops::CrossEntropySums ForwardBackward(const ParameterSet& p, const BatchView& b,
                                           float grad_scale, Activations& acts,
                                           ParameterSet& grads);
  // The last forward's logits [rows·T, V] on the backend's device.
  static TensorView Logits(const Activations& acts, int64_t rows, int64_t seq);
  // Every operation's output goes to `o` from now on (nullptr: to no one).
  void set_observer(OpObserver* o) { observer_ = o; }
  // The parameter sets passed from now on hold their units while `r` says (nullptr: always);
  // the units are acquired in AcquireOrder (params.h).
  void set_residency(ParameterResidency* r) { residency_ = r; }

 private:
  void Note(const char* op, int64_t layer, const char* tensor, const float* data,
            std::initializer_list<int64_t> shape) const {
    // A gain-free norm has no gain gradient: nothing to observe (its pointer is null).
    if (observer_ == nullptr || recomputing_ || data == nullptr) return;
    const TensorView v =
        TensorView::Contiguous(const_cast<float*>(data), DType::kF32, be_.device(), shape);
    observer_->Output(op, layer, tensor, OpOutput{v, &be_});
  }
  void Acquire(int unit) const {
    if (residency_ != nullptr) residency_->Acquire(unit);
  }
  void Release(int unit) const {
    if (residency_ != nullptr) residency_->Release(unit);
  }
  // The forward, leaving the head's unit (and with tied embeddings the embedding's) acquired
  // for the backward.
  repops::CrossEntropySums ForwardPass(const ParameterSet& p, const BatchView& b,
                                       Activations& acts);
  // The batch's ids, masks and RoPE positions to the device.
  void Upload(const BatchView& b, Activations& acts) const;
  // Layer l's forward from its input A.layers_[l].x_in. With to_output, its output goes to the
  // next layer's input (x_final after the last); without, it stops once the down projection's
  // input is ready (post_norm: once its output's 1/rms is known): all the layer's backward
  // needs (the recomputation).
  void ForwardLayer(int64_t l, const ParameterSet& p, const BatchView& b, Activations& A,
                    bool to_output);
  void Backward(const ParameterSet& p, const BatchView& b, float grad_scale, Activations& acts,
                ParameterSet& grads);
  void BackwardLayer(int64_t l, const ParameterSet& p, const BatchView& b, Activations& acts,
                     ParameterSet& grads);
  void BackwardQkv(int64_t l, const BatchView& b, Activations& A, const LayerParams& P,
                   LayerParams& G, const float* h1);
  const float* OutputNormBackward(int64_t l, Activations& A, int64_t N, const Buffer& y,
                                  const Buffer& rstd, const DeviceTensor* gain, DeviceTensor* ggain,
                                  const char* name, const char* gain_name);
  ModelConfig c_;
  repops::Backend& be_;
  repops::DeviceRopeTable rope_;
  OpObserver* observer_ = nullptr;
  ParameterResidency* residency_ = nullptr;
  bool recomputing_ = false;  // a layer's forward run again for its backward: not observed
};

}  // namespace trail::model
