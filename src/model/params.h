// The model's parameters as named tensors in one canonical order (the order gradients are
// normed, hashed leaves are sorted by name anyway). The same layout holds gradients and the
// optimizer's moments, so every per-parameter loop is a loop over the same list.
#pragma once

#include <string>
#include <vector>

#include "core/hash.h"
#include "core/tensor.h"
#include "model/config.h"

namespace trail::model {

// The matrices of one layer, in the order their learned step sizes are listed.
enum class Matrix { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr int kMatrices = 7;

struct LayerParams {
  Tensor* attn_norm = nullptr;  // [d] (nullptr without gains)
  Tensor* wq = nullptr;         // [d, d]  (input × output)
  Tensor* wk = nullptr;         // [d, d]
  Tensor* wv = nullptr;         // [d, d]
  Tensor* wo = nullptr;         // [d, d]
  Tensor* mlp_norm = nullptr;   // [d]
  Tensor* w_gate = nullptr;     // [d, ff]: SwiGLU gate, or GELU's input projection
  Tensor* w_up = nullptr;       // [d, ff]: SwiGLU only
  Tensor* w_down = nullptr;     // [ff, d]
  // Learned LSQ step sizes (int8 QAT with quant_step_learned), one [out] tensor per matrix,
  // indexed by Matrix, named "<matrix>.step"; nullptr otherwise.
  Tensor* step[kMatrices] = {};
  const Tensor* matrix(Matrix m) const;
};

class ParameterSet {
 public:
  // All tensors zero, named and shaped for the config (which must be valid). `prefix` is put
  // before every name (e.g. "adam_m." for moments), so one file can hold several sets.
  explicit ParameterSet(const ModelConfig& c, const std::string& prefix = "");
  ParameterSet(const ParameterSet&) = delete;
  ParameterSet& operator=(const ParameterSet&) = delete;
  ParameterSet(ParameterSet&&) = default;

  // Weights ~ N(0, init_std) (output projections wo and w_down scaled by 1/sqrt(2 n_layers))
  // from Philox counters keyed by (init_seed, name): a value depends on nothing else. Gains 1.
  void InitRandom(const ModelConfig& c);
  void Zero();

  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int64_t numel() const;
  Digest StateHash() const;  // Merkle root (core/hash.h)
  // The tensor of this set whose name (without the prefix) is `name`; nullptr if none.
  const Tensor* Find(const std::string& name) const;

  Tensor* embed = nullptr;       // [V, d]
  Tensor* embed_norm = nullptr;  // [d] (embed_norm with gains)
  std::vector<LayerParams> layers;
  Tensor* final_norm = nullptr;  // [d]
  Tensor* lm_head = nullptr;     // [d, V]; nullptr when tied to embed

 private:
  std::string prefix_;
  std::vector<Tensor> tensors_;
};

}  // namespace trail::model

namespace trail::model {
// acc = acc + x, tensor by tensor, element by element (the sets must have the same layout).
void AddParameterSets(ParameterSet& acc, const ParameterSet& x);
}  // namespace trail::model
