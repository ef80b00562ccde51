// The model's parameters as named tensors in one canonical order (the order gradients are
// normed, hashed leaves are sorted by name anyway). The same layout holds gradients and the
// optimizer's moments, so every per-parameter loop is a loop over the same list. The tensors
// live on a backend's device and are touched only through that backend; values cross to and
// from the host by the explicit copies below (checkpoints, tests).
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/hash.h"
#include "core/tensor.h"
#include "model/config.h"
#include "repops/backend.h"

namespace trail::model {

// The matrices of one layer, in the order their learned step sizes are listed.
enum class Matrix { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr int kMatrices = 7;

struct LayerParams {
  DeviceTensor* attn_norm = nullptr;  // [d] (nullptr without gains); post_norm: of the output
  DeviceTensor* wq = nullptr;         // [d, q_dim]  (input × output; q_dim = H·hd, often d)
  DeviceTensor* wk = nullptr;         // [d, kv_dim]
  DeviceTensor* wv = nullptr;         // [d, kv_dim]
  DeviceTensor* wo = nullptr;         // [q_dim, d]
  DeviceTensor* q_norm = nullptr;     // [q_norm_width]: QK-norm's gains (qk_norm_gain; else null)
  DeviceTensor* k_norm = nullptr;     // [k_norm_width]
  DeviceTensor* mlp_norm = nullptr;   // [d]
  DeviceTensor* w_gate = nullptr;     // [d, ff]: SwiGLU gate, or GELU's input projection
  DeviceTensor* w_up = nullptr;       // [d, ff]: SwiGLU only
  DeviceTensor* w_down = nullptr;     // [ff, d]
  // Learned LSQ step sizes (int8 QAT with quant_step_learned), one [out] tensor per matrix,
  // indexed by Matrix, named "<matrix>.step"; nullptr otherwise.
  DeviceTensor* step[kMatrices] = {};
  const DeviceTensor* matrix(Matrix m) const;
};

// Whether a new set allocates its tensors (zeros) or leaves them unbound (core/device.h).
enum class Memory { kAllocated, kUnbound };

class ParameterSet {
 public:
  // All tensors zero on the backend's device (the backend must outlive the set), named and
  // shaped for the config (which must be valid). `prefix` is put before every name (e.g.
  // "adam_m." for moments), so one file can hold several sets.
  ParameterSet(const ModelConfig& c, repops::Backend& backend, const std::string& prefix = "",
               Memory memory = Memory::kAllocated);
  ParameterSet(const ParameterSet&) = delete;
  ParameterSet& operator=(const ParameterSet&) = delete;
  ParameterSet(ParameterSet&&) = default;

  // Weights ~ N(0, init_std) (output projections wo and w_down scaled by 1/sqrt(2 n_layers))
  // from Philox counters keyed by (init_seed, name): a value depends on nothing else. Gains 1.
  void InitRandom(const ModelConfig& c);
  // The same for the tensors of one unit (below), which must be bound: every value depends only
  // on its tensor's name and index (a learned step size on its matrix, in the same unit).
  void InitUnit(const ModelConfig& c, int unit);
  void Zero();

  repops::Backend& backend() const { return be_; }
  std::vector<DeviceTensor>& tensors() { return tensors_; }
  const std::vector<DeviceTensor>& tensors() const { return tensors_; }
  int64_t numel() const;
  Digest StateHash() const;  // the state hash (core/state_hash.h), leaves hashed on the device
  // The tensor of this set whose name (without the prefix) is `name`; nullptr if none.
  const DeviceTensor* Find(const std::string& name) const;

  // Host copies of every tensor, full names (prefix included), in list order.
  std::vector<Tensor> ToHost() const;
  // Sets every tensor from the host tensor of the same full name in `host`, which must hold
  // exactly this set's names, dtypes and shapes (`what` names the source in errors).
  void FromHost(std::span<const Tensor> host, const std::string& what);

  // Frees every tensor's memory: the set keeps its layout, its tensors are unbound.
  void Unbind();
  bool bound() const;  // every tensor has memory

  // The tensors in units, the pieces a process holding only a range of the parameters gathers
  // one at a time (ParameterResidency): unit 0 is the embedding (embed, embed_norm.gain), unit
  // 1 + l layer l's tensors, unit n_layers + 1 the head (final_norm.gain, lm_head; possibly
  // none). Each unit is a run of consecutive tensors: [unit_tensors(u).first, .second).
  int num_units() const { return static_cast<int>(unit_bounds_.size()) - 1; }
  std::pair<size_t, size_t> unit_tensors(int u) const {
    return {unit_bounds_.at(u), unit_bounds_.at(u + 1)};
  }
  static constexpr int kEmbedUnit = 0;
  static int LayerUnit(int64_t l) { return static_cast<int>(1 + l); }
  int head_unit() const { return num_units() - 1; }

  DeviceTensor* embed = nullptr;       // [V, d]
  DeviceTensor* embed_norm = nullptr;  // [d] (embed_norm with gains)
  std::vector<LayerParams> layers;
  DeviceTensor* final_norm = nullptr;  // [d]
  DeviceTensor* lm_head = nullptr;     // [d, V]; nullptr when tied to embed

 private:
  repops::Backend& be_;
  std::string prefix_;
  std::vector<DeviceTensor> tensors_;
  std::vector<size_t> unit_bounds_;  // tensor indices: unit u is [b[u], b[u+1])
};

// Where a forward and backward find the units of their parameter set (ParameterSet units).
// The model calls Acquire(u) before it reads unit u's tensors and Release(u) once it no longer
// needs them; a job whose processes hold ranges of the parameters gathers the unit in Acquire
// and frees it in Release. Every process of such a job acquires the same units in the same
// order (AcquireOrder), since the gathers are collective. Without a residency every tensor is
// always there.
class ParameterResidency {
 public:
  virtual ~ParameterResidency() = default;
  // A forward (with `backward`, and the backward after it) begins: its acquisitions follow
  // AcquireOrder(n_layers, tied, backward), which a residency may gather ahead.
  virtual void BeginPass(bool backward) = 0;
  virtual void Acquire(int unit) = 0;
  virtual void Release(int unit) = 0;
};

// The units a forward (and, with `backward`, the backward after it) acquires, in order, for a
// model of n_layers layers: 0, the layers up, the head, then the layers down and, unless the
// embedding is tied to the head (and so held all along), 0 again.
std::vector<int> AcquireOrder(int64_t n_layers, bool tied_embeddings, bool backward);

}  // namespace trail::model

namespace trail::model {
// acc = acc + x, tensor by tensor, element by element, on acc's backend (the sets must have
// the same layout and live on that backend's device).
void AddParameterSets(ParameterSet& acc, const ParameterSet& x);
// The state hash over every tensor of `sets` as one state (e.g. both AdamW moments), in list
// order; the leaves are hashed on `be`, where the sets live.
Digest StateHashOf(repops::Backend& be, std::initializer_list<const ParameterSet*> sets);
}  // namespace trail::model
