#include "infer/export_arch.h"

#include <algorithm>

#include "core/error.h"

namespace trail::infer {
namespace {

std::string FormatName(ExportFormat f) {
  return f == ExportFormat::kHf ? "Hugging Face (Llama, Qwen3, OLMo 2)"
                                : "GGUF (llama.cpp's llama, qwen3, olmo2)";
}

std::vector<float> Host(const DeviceTensor* t, repops::Backend& be) {
  std::vector<float> out(static_cast<size_t>(t->numel()));
  be.CopyToHost(t->view(), out.data());
  return out;
}

}  // namespace

// In 64 × 64 tiles so that both sides stay in cache (an
// embedding-sized head transposed element by element misses on every write).
std::vector<float> Transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64;
  std::vector<float> t(x.size());
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) t[c * rows + r] = x[r * cols + c];
      }
    }
  }
  return t;
}

ExportArchitecture ChooseArchitecture(const model::ModelConfig& c, ExportFormat f) {
  const std::string formats = FormatName(f);
  TRAIL_CHECK(c.linear_quant == model::LinearQuant::kNone,
              "the model trains its block matrices in int8 QAT (activations quantized per token "
              "at every product), which ",
              formats, " cannot represent; export refuses rather than approximate");
  TRAIL_CHECK(c.mlp == model::MlpKind::kSwiGlu,
              "the model's MLP is an ungated GELU with RMSNorm, which ", formats,
              " cannot represent (their MLPs are gated SiLU)");
  TRAIL_CHECK(!c.embed_norm, "the model normalizes the token embedding (embed_norm), which ",
              formats, " cannot represent");
  bool sliding = false;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    sliding = sliding || (c.LayerWindow(l) > 0 && c.LayerWindow(l) < c.max_seq_len);
  }
  ExportArchitecture a;
  a.sliding = sliding;
  TRAIL_CHECK(c.post_norm == c.qk_norm_projection,
              c.post_norm ? "the model is post-norm without QK-norm over whole projections, which "
                          : "the model normalizes whole query and key projections without "
                            "post-norm, which ",
              formats, " cannot represent (OLMo 2 has both)");
  if (c.post_norm) {
    a.name = "olmo2", a.hf_class = "Olmo2ForCausalLM", a.qk_norm = a.post_norm = true;
    TRAIL_CHECK(!sliding, "the model has sliding-window layers, which ", formats,
                " cannot represent for OLMo 2 (Olmo2ForCausalLM attends to the full context)");
    TRAIL_CHECK(!c.rope_scaling.enabled() || f == ExportFormat::kHf,
                "the model scales its RoPE frequencies (Llama 3 rope_scaling), which GGUF's "
                "olmo2 cannot represent; the Hugging Face export (OLMo 2, rope_parameters) can");
  } else if (c.qk_norm) {
    a.name = "qwen3", a.hf_class = "Qwen3ForCausalLM", a.qk_norm = true;
    TRAIL_CHECK(!c.rope_scaling.enabled() || f == ExportFormat::kHf,
                "the model scales its RoPE frequencies (Llama 3 rope_scaling), which GGUF's "
                "qwen3 cannot represent (llama.cpp reads rope_freqs for llama only); the Hugging "
                "Face export (Qwen3, rope_scaling) can");
    TRAIL_CHECK(!sliding || f == ExportFormat::kHf,
                "the model has sliding-window layers, which GGUF (llama.cpp's qwen3 attends to "
                "the full context) cannot represent; the Hugging Face export (Qwen3, "
                "layer_types) can");
  } else {
    a.name = "llama", a.hf_class = "LlamaForCausalLM";
    TRAIL_CHECK(!sliding, "the model has sliding-window layers without QK-norm, which ", formats,
                " cannot represent (Llama has no sliding window; Qwen3 always normalizes "
                "queries and keys)");
  }
  return a;
}

std::vector<HfSlot> HfLayout(const model::ModelConfig& c, const model::ParameterSet& p,
                             const ExportArchitecture& arch) {
  const int64_t d = c.d_model, ff = c.d_ff, V = c.vocab_size;
  const int64_t qd = c.q_dim(), kvd = c.kv_dim();  // q: heads · head_dim rows, k and v: kv heads
  std::vector<HfSlot> out;
  auto vec = [&](std::string name, int64_t n, int64_t l, const char* role, const DeviceTensor* t) {
    out.push_back({std::move(name), {n}, l, role, t, false});
  };
  // A projection: HF [out, in], trail [in, out].
  auto proj = [&](std::string name, int64_t o, int64_t in, int64_t l, const char* role,
                  const DeviceTensor* t) {
    out.push_back({std::move(name), {o, in}, l, role, t, true});
  };
  out.push_back({"model.embed_tokens.weight", {V, d}, -1, "embed", p.embed, false});
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const model::LayerParams& L = p.layers[l];
    const std::string pre = "model.layers." + std::to_string(l) + ".";
    auto mlp = [&] {
      proj(pre + "mlp.gate_proj.weight", ff, d, l, "gate", L.w_gate);
      proj(pre + "mlp.up_proj.weight", ff, d, l, "up", L.w_up);
      proj(pre + "mlp.down_proj.weight", d, ff, l, "down", L.w_down);
    };
    if (!arch.post_norm) vec(pre + "input_layernorm.weight", d, l, "attn_norm", L.attn_norm);
    proj(pre + "self_attn.q_proj.weight", qd, d, l, "q", L.wq);
    proj(pre + "self_attn.k_proj.weight", kvd, d, l, "k", L.wk);
    proj(pre + "self_attn.v_proj.weight", kvd, d, l, "v", L.wv);
    proj(pre + "self_attn.o_proj.weight", d, qd, l, "o", L.wo);
    if (arch.qk_norm) {  // per head (Qwen3), or over whole projections (OLMo 2)
      vec(pre + "self_attn.q_norm.weight", c.q_norm_width(), l, "q_norm", L.q_norm);
      vec(pre + "self_attn.k_norm.weight", c.k_norm_width(), l, "k_norm", L.k_norm);
    }
    if (arch.post_norm) {  // OLMo 2: the MLP, then the blocks' output norms
      mlp();
      vec(pre + "post_attention_layernorm.weight", d, l, "attn_post_norm", L.attn_norm);
      vec(pre + "post_feedforward_layernorm.weight", d, l, "mlp_post_norm", L.mlp_norm);
    } else {
      vec(pre + "post_attention_layernorm.weight", d, l, "mlp_norm", L.mlp_norm);
      mlp();
    }
  }
  vec("model.norm.weight", d, -1, "final_norm", p.final_norm);
  if (!c.tied_embeddings) proj("lm_head.weight", V, d, -1, "lm_head", p.lm_head);
  return out;
}

std::vector<ExportTensor> ExportTensors(const model::ModelConfig& c, const model::ParameterSet& p,
                                        const ExportArchitecture& arch) {
  repops::Backend& be = p.backend();
  std::vector<ExportTensor> out;
  for (const HfSlot& s : HfLayout(c, p, arch)) {
    const int64_t n = s.shape.size() == 1 ? s.shape[0] : s.shape[0] * s.shape[1];
    std::vector<float> data =
        s.tensor ? Host(s.tensor, be) : std::vector<float>(static_cast<size_t>(n), 1.0f);
    if (s.transposed) data = Transposed(data, s.shape[1], s.shape[0]);
    out.push_back({s.hf_name, s.shape, std::move(data), s.layer, s.role});
  }
  return out;
}

}  // namespace trail::infer
