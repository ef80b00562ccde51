// Which architecture of Hugging Face transformers and llama.cpp represents a trail model
// exactly (docs/inference.md §6), and the tensors of that architecture, named and laid out as
// Hugging Face stores them. An export never approximates: a feature neither target has is
// refused with a message naming it.
//
//   trail                                   llama / LlamaForCausalLM   qwen3 / Qwen3ForCausalLM
//   RMSNorm, SwiGLU MLP, RoPE (half-split)  yes                        yes
//   gain-free norms                          weights of ones            weights of ones
//   per-head QK-norm (gain-free)             no                         q_norm, k_norm (ones)
//   sliding windows on some layers           no                         HF: layer_types;
//                                                                       llama.cpp: no
//   tied embeddings                          tie_word_embeddings        tie_word_embeddings
//   ungated GELU MLP, embedding norm, int8   refused                    refused
//
// Post-norm with QK-norm over whole projections (OLMo 2) is olmo2 / Olmo2ForCausalLM: the
// blocks' output norms are post_attention_layernorm and post_feedforward_layernorm (GGUF
// post_attention_norm, post_ffw_norm), q_norm and k_norm are [d] and [kv_dim]; no sliding
// windows, and no RoPE scaling in GGUF. Post-norm without that QK-norm, or that QK-norm
// without post-norm, has no target and is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/params.h"

namespace trail::infer {

enum class ExportFormat { kHf, kGguf };

struct ExportArchitecture {
  std::string name;        // "llama", "qwen3" or "olmo2" (llama.cpp's and HF's model_type)
  std::string hf_class;    // "LlamaForCausalLM", "Qwen3ForCausalLM" or "Olmo2ForCausalLM"
  bool qk_norm = false;    // q_norm / k_norm: per head (qwen3) or whole projections (olmo2)
  bool post_norm = false;  // olmo2: norms of the blocks' outputs, none of their inputs
  bool sliding = false;    // some layers attend within a window
};

// Throws trail::Error naming the feature and the formats that lack it.
ExportArchitecture ChooseArchitecture(const model::ModelConfig& c, ExportFormat format);

// One tensor of the architecture as Hugging Face names and stores it, and the trail tensor it
// is: the one table export and import (import_hf.h) both read.
struct HfSlot {
  std::string hf_name;
  std::vector<int64_t> shape;  // HF's: [out, in] for a projection
  int64_t layer = -1;          // its block, or -1
  std::string role;  // embed, attn_norm, q, k, v, o, q_norm, k_norm, mlp_norm, gate, up, down,
                     // final_norm, lm_head; olmo2: attn_post_norm, mlp_post_norm in place of
                     // attn_norm, mlp_norm
  const DeviceTensor* tensor = nullptr;  // nullptr: a gain-free norm, a vector of ones in HF
  bool transposed = false;               // trail stores the projection [in, out]
};
// Every tensor of `arch` for a model of `c` whose parameters are `p`, in the order HF's
// modeling code creates them; no lm_head when the embeddings are tied.
std::vector<HfSlot> HfLayout(const model::ModelConfig& c, const model::ParameterSet& p,
                             const ExportArchitecture& arch);

// x [rows, cols] as [cols, rows]: Hugging Face's [out, in] projections to trail's [in, out]
// (import) and back (export).
std::vector<float> Transposed(const std::vector<float>& x, int64_t rows, int64_t cols);

// One tensor of the export, in Hugging Face's name and layout.
struct ExportTensor {
  std::string hf_name;
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t layer = -1;
  std::string role;
};
// Every tensor, from parameters on any device (copied to the host here). Gain-free norms and
// QK-norms become weights of ones.
std::vector<ExportTensor> ExportTensors(const model::ModelConfig& c, const model::ParameterSet& p,
                                        const ExportArchitecture& arch);

}  // namespace trail::infer
