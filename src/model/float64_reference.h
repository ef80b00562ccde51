// For tests: the float64 PyTorch reference of the transformer (tests/model/model_reference.py,
// run with Debian's python3-torch) on a batch, from the same float32 parameters.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/safetensors.h"
#include "model/config.h"
#include "model/params.h"

namespace trail::model {

// The config as the reference reads it (its __metadata__["config"]).
inline nlohmann::json ReferenceConfigJson(const ModelConfig& c) {
  return {
      {"vocab_size", c.vocab_size},
      {"d_model", c.d_model},
      {"n_layers", c.n_layers},
      {"n_heads", c.n_heads},
      {"n_kv_heads", c.kv_heads()},
      {"head_dim", c.head_dim()},
      {"mlp", MlpName(c.mlp)},
      {"norm_gain", c.norm_gain},
      {"embed_norm", c.embed_norm},
      {"qk_norm", c.qk_norm},
      {"qk_norm_gain", c.qk_norm_gain},
      {"qk_norm_projection", c.qk_norm_projection},
      {"post_norm", c.post_norm},
      {"tied_embeddings", c.tied_embeddings},
      {"norm_eps", c.norm_eps},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", c.rope_scaling.enabled()
                           ? nlohmann::json{{"factor", c.rope_scaling.factor},
                                            {"low_freq_factor", c.rope_scaling.low_freq_factor},
                                            {"high_freq_factor", c.rope_scaling.high_freq_factor},
                                            {"original_max_pos", c.rope_scaling.original_max_pos}}
                           : nlohmann::json(nullptr)},
      {"z_loss", c.z_loss},
      {"attention_window", c.attention_window},
      {"full_attention_every", c.full_attention_every},
      {"full_attention_last", c.full_attention_last}};
}

inline Tensor ReferenceI32(const std::string& name, const std::vector<int32_t>& v, int64_t rows,
                           int64_t T) {
  Tensor t = Tensor::Of<int32_t>(name, {rows, T});
  std::copy(v.begin(), v.end(), t.data<int32_t>());
  return t;
}

// Runs the reference on `params` (host copies) and the batch tensors (inputs, labels, doc_ids,
// positions, key_valid: int32 [rows, T]) in `dir`; returns its outputs (float64 logits
// [rows·T, V], loss [1], grad.<name>), or throws trail::Error when python3 fails.
inline SafetensorsFile RunFloat64Reference(const ModelConfig& c, const ParameterSet& params,
                                           const std::vector<Tensor>& batch, const std::string& dir,
                                           const std::string& source_dir) {
  const std::vector<Tensor> host = params.ToHost();
  std::vector<const Tensor*> all;
  for (const Tensor& t : host) all.push_back(&t);
  for (const Tensor& t : batch) all.push_back(&t);
  WriteSafetensors(dir + "/in.safetensors", all, {{"config", ReferenceConfigJson(c).dump()}});
  const std::string cmd = "/usr/bin/python3 " + source_dir + "/tests/model/model_reference.py " +
                          dir + "/in.safetensors " + dir + "/out.safetensors";
  TRAIL_CHECK(std::system(cmd.c_str()) == 0, "the float64 reference failed: ", cmd,
              " (needs Debian's python3-torch)");
  return ReadSafetensors(dir + "/out.safetensors");
}

}  // namespace trail::model
