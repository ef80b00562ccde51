#include "model/config.h"

#include <algorithm>

#include "core/error.h"

namespace trail::model {

int64_t ModelConfig::LayerWindow(int64_t layer) const {
  if (attention_window <= 0) return 0;
  if (full_attention_every > 0 && (layer + 1) % full_attention_every == 0) return 0;
  if (full_attention_last && layer == n_layers - 1) return 0;
  return attention_window;
}

void ModelConfig::Validate() const {
  TRAIL_CHECK(vocab_size > 0, "model: vocab_size must be > 0 (it comes from the tokenizer), got ",
              vocab_size);
  TRAIL_CHECK(d_model > 0 && n_layers > 0 && n_heads > 0 && d_ff > 0 && max_seq_len > 0,
              "model: d_model, n_layers, n_heads, d_ff and max_seq_len must be > 0");
  TRAIL_CHECK(head_size >= 0, "model: head_dim must be >= 0 (0: d_model / n_heads), got ",
              head_size);
  TRAIL_CHECK(head_size > 0 || d_model % n_heads == 0, "model: d_model (", d_model,
              ") must be a multiple of n_heads (", n_heads, "), or head_dim set");
  TRAIL_CHECK(n_kv_heads >= 0 && n_heads % kv_heads() == 0, "model: n_kv_heads (", n_kv_heads,
              ") must divide n_heads (", n_heads, ")");
  TRAIL_CHECK(head_dim() % 2 == 0, "model: the head dimension (", head_dim(),
              ") must be even for rotary embeddings");
  TRAIL_CHECK(norm_eps > 0, "model: norm_eps must be > 0");
  TRAIL_CHECK(rope_theta > 1, "model: rope_theta must be > 1");
  rope_scaling.Validate();
  TRAIL_CHECK(z_loss >= 0, "model: z_loss must be >= 0");
  TRAIL_CHECK(attention_window >= 0 && full_attention_every >= 0,
              "model: attention_window and full_attention_every must be >= 0");
  TRAIL_CHECK(init_std > 0, "model: init_std must be > 0");
  TRAIL_CHECK(!qk_norm_gain || qk_norm, "model: qk_norm_gain needs qk_norm");
  TRAIL_CHECK(!qk_norm_projection || qk_norm, "model: qk_norm_projection needs qk_norm");
  TRAIL_CHECK(!quant_step_learned || linear_quant == LinearQuant::kInt8Lsq,
              "model: learned step sizes need int8 quantization of the linear layers");
}

const char* RecomputeName(Recompute r) { return r == Recompute::kLayers ? "layers" : "none"; }

Recompute ParseRecompute(const std::string& name) {
  if (name == "none") return Recompute::kNone;
  if (name == "layers") return Recompute::kLayers;
  throw Error("recompute = \"" + name + "\": use \"none\" or \"layers\"");
}

const char* MlpName(MlpKind k) { return k == MlpKind::kSwiGlu ? "swiglu" : "gelu"; }
const char* LinearQuantName(LinearQuant q) {
  return q == LinearQuant::kInt8Lsq ? "int8-lsq" : "none";
}
const char* QuantStepName(bool learned) { return learned ? "learned" : "recompute"; }
const char* QuantBackwardName(repops::Int8Backward b) {
  return b == repops::Int8Backward::kInt8 ? "int8" : "fp32";
}

std::vector<std::string> PresetNames() { return {"tiny", "open1b-style", "gpt2-small"}; }

ModelConfig Preset(const std::string& name) {
  ModelConfig c;
  if (name == "tiny") {
    c.d_model = 128, c.n_layers = 4, c.n_heads = 4, c.d_ff = 352, c.max_seq_len = 256;
    c.mlp = MlpKind::kSwiGlu;
  } else if (name == "open1b-style") {
    c.d_model = 256, c.n_layers = 10, c.n_heads = 4, c.d_ff = 688, c.max_seq_len = 2048;
    c.mlp = MlpKind::kSwiGlu, c.qk_norm = true, c.embed_norm = true;
    c.attention_window = 512, c.full_attention_every = 5, c.full_attention_last = true;
    c.z_loss = 1e-4f;
  } else if (name == "gpt2-small") {
    c.d_model = 768, c.n_layers = 12, c.n_heads = 12, c.d_ff = 3072, c.max_seq_len = 1024;
    c.mlp = MlpKind::kGelu;
  } else {
    std::string names;
    for (const std::string& n : PresetNames()) names += (names.empty() ? "" : ", ") + n;
    TRAIL_FAIL("model: unknown preset '", name, "' (known: ", names, ")");
  }
  return c;
}

ModelCost Cost(const ModelConfig& c, int64_t seq_len) {
  const int64_t d = c.d_model, L = c.n_layers, V = c.vocab_size;
  const int64_t mlp = (c.mlp == MlpKind::kSwiGlu ? 3 : 2) * d * c.d_ff;
  const int64_t per_layer = 2 * d * c.q_dim() + 2 * d * c.kv_dim() + mlp;
  const int64_t gains = (c.norm_gain ? (2 * L + 1 + (c.embed_norm ? 1 : 0)) * d : 0) +
                        (c.qk_norm_gain ? L * (c.q_norm_width() + c.k_norm_width()) : 0);
  ModelCost out;
  out.embedding = V * d;
  out.blocks = L * per_layer;
  out.lm_head = c.tied_embeddings ? 0 : V * d;
  out.norm_gains = gains;
  out.matmul_parameters = out.blocks + V * d;  // the LM head multiplies every token
  const int64_t mlp_out = (c.mlp == MlpKind::kSwiGlu ? 2 : 1) * c.d_ff;
  // q has q_dim output channels, o and down d, k and v kv_dim each, gate (and up) d_ff.
  out.quant_steps = c.quant_step_learned ? L * (c.q_dim() + 2 * d + 2 * c.kv_dim() + mlp_out) : 0;
  out.parameters = out.embedding + out.blocks + out.lm_head + gains + out.quant_steps;
  double attended = 0;  // mean number of keys per query, summed over layers
  for (int64_t l = 0; l < L; ++l) {
    const int64_t w = c.LayerWindow(l);
    double sum = 0;
    for (int64_t t = 0; t < seq_len; ++t)
      sum += double(w > 0 ? std::min<int64_t>(t + 1, w) : t + 1);
    attended += sum / double(seq_len);
  }
  out.attention_flops_per_token = 6.0 * 2.0 * double(c.q_dim()) * attended;
  out.flops_per_token = 6.0 * double(out.matmul_parameters) + out.attention_flops_per_token;
  return out;
}

}  // namespace trail::model
