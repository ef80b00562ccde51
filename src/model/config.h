// The shape and features of trail's decoder-only transformer, and its named presets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "repops/int8_linear.h"
#include "repops/rope.h"

namespace trail::model {

enum class MlpKind { kSwiGlu, kGelu };

// How the block matrices (q, k, v, o and the MLP's) multiply: fp32, or int8 quantization-aware
// training (repops/int8_linear.h). Embedding, LM head, norms and attention stay fp32.
enum class LinearQuant { kNone, kInt8Lsq };

struct ModelConfig {
  int64_t vocab_size = 0;
  int64_t d_model = 128;
  int64_t n_layers = 4;
  int64_t n_heads = 4;
  // Key/value heads (grouped-query attention): query head h reads key/value head
  // h / (n_heads / n_kv_heads). 0 means n_heads (multi-head attention); 1 is multi-query.
  int64_t n_kv_heads = 0;
  // Width of one attention head. 0 means d_model / n_heads; otherwise the query projection is
  // [d, n_heads·head_size] and the output projection [n_heads·head_size, d] (Qwen3's head_dim).
  int64_t head_size = 0;
  int64_t d_ff = 384;         // hidden width of the MLP (each of gate and up for SwiGLU)
  int64_t max_seq_len = 256;  // RoPE table length: the longest window the model accepts
  MlpKind mlp = MlpKind::kSwiGlu;
  bool norm_gain = true;      // RMSNorms (blocks, final, embedding) carry a learned gain
  bool embed_norm = false;    // RMSNorm right after the token embedding
  bool qk_norm = false;       // RMSNorm of each head's queries and keys (before RoPE)
  bool qk_norm_gain = false;  // with qk_norm: learned gains [hd] (Qwen3's q_norm, k_norm), one
                              // for queries and one for keys, shared by the heads; else none
  // With qk_norm: each token's whole query and key projections are normalized (rows of q_dim and
  // kv_dim, before the split into heads; OLMo 2), their gains [q_dim] and [kv_dim]; else each
  // head's.
  bool qk_norm_projection = false;
  // OLMo 2's post-norm: the attention and MLP blocks read the residual stream as it is and their
  // outputs are normalized (gains attn_norm, mlp_norm) before the residual add; else pre-norm.
  bool post_norm = false;
  bool tied_embeddings = true;  // LM head = embedding table transposed
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  repops::RopeScaling rope_scaling;  // Llama 3's frequency scaling (factor 0: none)
  float z_loss = 0.0f;               // coefficient of mean(lse^2) added to the loss
  // Attention pattern: layers attend within `attention_window` keys (0 = full causal), except
  // every `full_attention_every`-th layer (1-based; 0 = none) and, with full_attention_last,
  // the last layer, which attend to the full causal prefix.
  int64_t attention_window = 0;
  int64_t full_attention_every = 0;
  bool full_attention_last = true;
  LinearQuant linear_quant = LinearQuant::kNone;
  // With int8 QAT: the backward GEMMs in int8 (gradients quantized per token for dX, per output
  // channel for dW) or in fp32 on the quantized operands.
  repops::Int8Backward quant_backward = repops::Int8Backward::kInt8;
  // The weight quantizers' step sizes: recomputed from the weights at every forward (the
  // paper's fix), or learned LSQ parameters initialized by the same formula and trained by the
  // optimizer (the paper's original recipe, which drifts: kept as an ablation).
  bool quant_step_learned = false;
  float init_std = 0.02f;  // N(0, init_std); output projections scaled by 1/sqrt(2 n_layers)
  uint64_t init_seed = 0;

  int64_t head_dim() const { return head_size > 0 ? head_size : d_model / n_heads; }
  int64_t kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  int64_t q_dim() const { return n_heads * head_dim(); }      // width of the q projection
  int64_t kv_dim() const { return kv_heads() * head_dim(); }  // width of the k and v projections
  // Whether head_dim differs from d_model / n_heads (then recipes write head_dim).
  bool head_dim_decoupled() const { return q_dim() != d_model; }
  // The rows QK-norm normalizes, and its gains' length: hd, or q_dim and kv_dim
  // (qk_norm_projection).
  int64_t q_norm_width() const { return qk_norm_projection ? q_dim() : head_dim(); }
  int64_t k_norm_width() const { return qk_norm_projection ? kv_dim() : head_dim(); }
  int64_t LayerWindow(int64_t layer) const;  // 0 = full causal attention
  // Throws trail::Error naming the inconsistent fields.
  void Validate() const;
};

// "tiny" (the demo), "open1b-style" (the Open-1B architecture at small width: gain-free
// QK-norm, embedding norm, 512-token sliding windows with full attention every 5th and in the
// last layer, SwiGLU, tied embeddings) and "gpt2-small" (12 × 768, 12 heads, GELU, tied head,
// full attention). vocab_size is left 0: it comes from the data's tokenizer.
ModelConfig Preset(const std::string& name);
std::vector<std::string> PresetNames();

// Activation recomputation (the recipe's [train] recompute). kNone keeps every layer's
// activations from the forward for the backward. kLayers keeps each layer's input only, and one
// layer's worth of activations: the backward runs each layer's forward again (the same ops, so
// the same bits; its outputs are not reported to the observer a second time) just before that
// layer's backward. Costs about one more forward of the blocks per step.
enum class Recompute { kNone, kLayers };
const char* RecomputeName(Recompute r);  // "none", "layers"
// Parses "none" / "layers"; throws trail::Error naming the choices otherwise.
Recompute ParseRecompute(const std::string& name);

const char* MlpName(MlpKind k);
const char* LinearQuantName(LinearQuant q);             // "none", "int8-lsq"
const char* QuantBackwardName(repops::Int8Backward b);  // "int8", "fp32"
const char* QuantStepName(bool learned);                // "recompute", "learned"

// Parameter count and the FLOPs of one training token at sequence length T: 6N over the
// matrices that multiply every token (embedding lookup excluded, LM head included) plus the
// attention term 6 · n_layers · q_dim · (mean keys attended per query) · 2 (scores and values).
struct ModelCost {
  int64_t parameters = 0;         // every trained parameter: the sum of the five below
  int64_t embedding = 0;          // V·d: looked up, not multiplied
  int64_t blocks = 0;             // L·(2d·q_dim + 2d·kv_dim + MLP): attention and MLP matrices
  int64_t lm_head = 0;            // V·d when untied; 0 when the head is the embedding transposed
  int64_t norm_gains = 0;         // the RMSNorms' gains, QK-norm's included
  int64_t quant_steps = 0;        // learned int8 step sizes (one per output channel), else 0
  int64_t matmul_parameters = 0;  // what multiplies every token: blocks + the head's V·d
  double flops_per_token = 0;
  double attention_flops_per_token = 0;  // the attention term of flops_per_token
};
ModelCost Cost(const ModelConfig& c, int64_t seq_len);

}  // namespace trail::model
