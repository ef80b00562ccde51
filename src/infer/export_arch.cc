#include "infer/export_arch.h"

#include "core/error.h"

namespace trail::infer {
namespace {

std::string FormatName(ExportFormat f) {
  return f == ExportFormat::kHf ? "Hugging Face (Llama, Qwen3)" : "GGUF (llama.cpp's llama, qwen3)";
}

// The host copy of a [rows, cols] tensor, transposed to [cols, rows].
std::vector<float> Transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = x[r * cols + c];
  }
  return out;
}

std::vector<float> Host(const DeviceTensor* t, repops::Backend& be) {
  std::vector<float> out(static_cast<size_t>(t->numel()));
  be.CopyToHost(t->view(), out.data());
  return out;
}

}  // namespace

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
  if (c.qk_norm) {
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

std::vector<ExportTensor> ExportTensors(const model::ModelConfig& c, const model::ParameterSet& p,
                                        const ExportArchitecture& arch) {
  repops::Backend& be = p.backend();
  const int64_t d = c.d_model, ff = c.d_ff, V = c.vocab_size, hd = c.head_dim();
  const int64_t kvd = c.kv_dim();  // k and v: num_key_value_heads · head_dim rows
  std::vector<ExportTensor> out;
  auto ones = [](int64_t n) { return std::vector<float>(static_cast<size_t>(n), 1.0f); };
  auto norm = [&](const DeviceTensor* g) { return g ? Host(g, be) : ones(d); };
  // A projection stored [in, out] by trail, [out, in] by HF.
  auto proj = [&](const DeviceTensor* w, int64_t in, int64_t outn) {
    return Transposed(Host(w, be), in, outn);
  };
  out.push_back({"model.embed_tokens.weight", {V, d}, Host(p.embed, be), -1, "embed"});
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const model::LayerParams& L = p.layers[l];
    const std::string pre = "model.layers." + std::to_string(l) + ".";
    out.push_back({pre + "input_layernorm.weight", {d}, norm(L.attn_norm), l, "attn_norm"});
    out.push_back({pre + "self_attn.q_proj.weight", {d, d}, proj(L.wq, d, d), l, "q"});
    out.push_back({pre + "self_attn.k_proj.weight", {kvd, d}, proj(L.wk, d, kvd), l, "k"});
    out.push_back({pre + "self_attn.v_proj.weight", {kvd, d}, proj(L.wv, d, kvd), l, "v"});
    out.push_back({pre + "self_attn.o_proj.weight", {d, d}, proj(L.wo, d, d), l, "o"});
    if (arch.qk_norm) {
      auto qk_gain = [&](const DeviceTensor* g) { return g ? Host(g, be) : ones(hd); };
      out.push_back({pre + "self_attn.q_norm.weight", {hd}, qk_gain(L.q_norm), l, "q_norm"});
      out.push_back({pre + "self_attn.k_norm.weight", {hd}, qk_gain(L.k_norm), l, "k_norm"});
    }
    out.push_back({pre + "post_attention_layernorm.weight", {d}, norm(L.mlp_norm), l, "mlp_norm"});
    out.push_back({pre + "mlp.gate_proj.weight", {ff, d}, proj(L.w_gate, d, ff), l, "gate"});
    out.push_back({pre + "mlp.up_proj.weight", {ff, d}, proj(L.w_up, d, ff), l, "up"});
    out.push_back({pre + "mlp.down_proj.weight", {d, ff}, proj(L.w_down, ff, d), l, "down"});
  }
  out.push_back({"model.norm.weight", {d}, norm(p.final_norm), -1, "final_norm"});
  if (!c.tied_embeddings) {
    out.push_back({"lm_head.weight", {V, d}, proj(p.lm_head, d, V), -1, "lm_head"});
  }
  return out;
}

}  // namespace trail::infer
