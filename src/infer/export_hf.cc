// The Hugging Face export (export.h): config.json for the chosen architecture, the weights in
// HF's names and layout, the tokenizer.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/safetensors.h"
#include "infer/export.h"
#include "tokenizer/loaders.h"

namespace trail::infer {
namespace fs = std::filesystem;
namespace {

// Llama 3's scaling as transformers reads it (rope_type "llama3"), or null.
nlohmann::json RopeScalingJson(const repops::RopeScaling& s) {
  if (!s.enabled()) return nullptr;
  return {{"rope_type", "llama3"},
          {"factor", s.factor},
          {"low_freq_factor", s.low_freq_factor},
          {"high_freq_factor", s.high_freq_factor},
          {"original_max_position_embeddings", s.original_max_pos}};
}

nlohmann::json ConfigJson(const model::ModelConfig& c, const ExportArchitecture& a,
                          const tok::TokenizerContract& k) {
  nlohmann::json j = {{"architectures", {a.hf_class}},
                      {"model_type", a.name},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.d_model},
                      {"intermediate_size", c.d_ff},
                      {"num_hidden_layers", c.n_layers},
                      {"num_attention_heads", c.n_heads},
                      {"num_key_value_heads", c.kv_heads()},
                      {"head_dim", c.head_dim()},
                      {"hidden_act", "silu"},
                      {"max_position_embeddings", c.max_seq_len},
                      {"rms_norm_eps", c.norm_eps},
                      {"rope_theta", c.rope_theta},
                      {"rope_scaling", RopeScalingJson(c.rope_scaling)},
                      {"attention_bias", false},
                      {"attention_dropout", 0.0},
                      {"tie_word_embeddings", c.tied_embeddings},
                      {"torch_dtype", "float32"},
                      {"use_cache", true}};
  if (a.name == "llama") j["mlp_bias"] = false, j["pretraining_tp"] = 1;
  // OLMo 2's config has no head_dim unless the heads do not split the width (its attention
  // reads head_dim when present), nor windows.
  if (a.name == "olmo2" && !c.head_dim_decoupled()) j.erase("head_dim");
  if (a.name == "qwen3") {
    nlohmann::json types = nlohmann::json::array();
    int64_t window = 0;
    for (int64_t l = 0; l < c.n_layers; ++l) {
      const int64_t w = c.LayerWindow(l);
      const bool sliding = w > 0 && w < c.max_seq_len;
      if (sliding) window = w;
      types.push_back(sliding ? "sliding_attention" : "full_attention");
    }
    j["use_sliding_window"] = a.sliding;
    j["sliding_window"] = a.sliding ? nlohmann::json(window) : nlohmann::json(nullptr);
    j["max_window_layers"] = c.n_layers;
    j["layer_types"] = types;
  }
  if (k.bos_id >= 0) j["bos_token_id"] = k.bos_id;
  if (k.eos_id >= 0) j["eos_token_id"] = k.eos_id;
  if (k.pad_id >= 0) j["pad_token_id"] = k.pad_id;
  return j;
}

nlohmann::json TokenizerConfigJson(const tok::TokenizerContract& k, const tok::Tokenizer& t) {
  nlohmann::json j = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                      {"add_bos_token", false},
                      {"add_eos_token", false},
                      {"model_max_length", nullptr},
                      {"clean_up_tokenization_spaces", false}};
  auto text = [&](int64_t id) -> nlohmann::json {
    for (const tok::SpecialToken& s : t.specials()) {
      if (static_cast<int64_t>(s.id) == id) return s.text;
    }
    return nullptr;
  };
  if (k.bos_id >= 0) j["bos_token"] = text(k.bos_id);
  if (k.eos_id >= 0) j["eos_token"] = text(k.eos_id);
  if (k.pad_id >= 0) j["pad_token"] = text(k.pad_id);
  return j;
}

}  // namespace

ExportWritten ExportHf(const model::ModelConfig& c, const model::ParameterSet& p,
                       const tok::TokenizerContract& contract, const tok::Tokenizer& tokenizer,
                       const std::string& out) {
  const ExportArchitecture a = ChooseArchitecture(c, ExportFormat::kHf);
  fs::create_directories(out);
  std::vector<Tensor> tensors;
  for (const ExportTensor& t : ExportTensors(c, p, a)) {
    Tensor h = Tensor::Of<float>(t.hf_name, t.shape);
    std::copy(t.data.begin(), t.data.end(), h.data<float>());
    tensors.push_back(std::move(h));
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : tensors) ptrs.push_back(&t);
  WriteSafetensors(out + "/model.safetensors", ptrs, {{"format", "pt"}});
  WriteFileAtomic(out + "/config.json", ConfigJson(c, a, contract).dump(2) + "\n");
  nlohmann::json gen = {{"do_sample", false}};
  if (contract.bos_id >= 0) gen["bos_token_id"] = contract.bos_id;
  if (contract.eos_id >= 0) gen["eos_token_id"] = contract.eos_id;
  if (contract.pad_id >= 0) gen["pad_token_id"] = contract.pad_id;
  WriteFileAtomic(out + "/generation_config.json", gen.dump(2) + "\n");
  WriteFileAtomic(out + "/tokenizer.json", tok::ToHfTokenizerJson(tokenizer));
  WriteFileAtomic(out + "/tokenizer_config.json",
                  TokenizerConfigJson(contract, tokenizer).dump(2) + "\n");
  return {{out + "/config.json", out + "/generation_config.json", out + "/model.safetensors",
           out + "/tokenizer.json", out + "/tokenizer_config.json"},
          static_cast<int64_t>(tensors.size())};
}

}  // namespace trail::infer
