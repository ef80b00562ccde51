// One optimizer step on the logical mesh (R replicas × S shards × M micro-batches), all logical
// ranks run in order in this process.
//
// Loss = Σ NLL / Σ valid targets over the whole step: the reciprocal 1/Σvalid is computed once
// from the step's batch counts before any forward and scales every micro-batch's d loss/d logits,
// so micro-batches with different target counts weigh by their targets (not a mean of means).
// Gradient reduction (Open-1B appendix A): inside replica r a running sum over its
// (shard, micro-batch) gradients in ascending order, starting as the first one's gradient
// (acc = g_0; acc = acc + g_i); across replicas TreeFold (dist/tree_fold.h).
// Then: global norm (tensors in canonical order), spike protocol, clipping of that final
// gradient, AdamW with the LR of the tokens consumed before the step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/hash.h"
#include "data/batcher.h"
#include "data/stream.h"
#include "model/transformer.h"
#include "train/recipe.h"
#include "train/state.h"

namespace trail::train {

model::BatchView ViewOf(const data::PackedBatch& b);

struct StepResult {
  int64_t step = 0;
  uint64_t window_begin = 0, window_end = 0;
  int64_t input_tokens = 0, target_tokens = 0;
  int64_t tokens_before = 0;  // the LR clock at the step
  float loss = 0;             // Σ NLL · (1/Σ valid)
  float z_loss = 0;           // z · Σ lse² · (1/Σ valid) (0 without z-loss)
  float lr = 0, grad_norm = 0, clip_coef = 1;
  bool skipped = false;
  std::string skip_reason;    // "spike", "non_finite", "no_targets"
  Digest batch_hash{}, grads_hash{}, params_hash{}, optim_hash{};
  double seconds = 0, hash_seconds = 0;
};

// How the gradient of a step is normalized. kTokenWeighted is trail's; kMeanOfMeans (each
// micro-batch's own mean, then averaged) exists only so tests can show it is different.
enum class LossNormalization { kTokenWeighted, kMeanOfMeans };

class StepEngine {
 public:
  StepEngine(const Recipe& recipe, data::CanonicalStream& stream);
  StepResult Run(TrainState& st, LossNormalization norm = LossNormalization::kTokenWeighted);
  // The step's reduced gradient as last computed by Run (clipped if clipping applied).
  const model::ParameterSet& last_gradient() const { return *last_grad_; }
  const model::Transformer& model() const { return model_; }
  // Forward only (evaluation) on this engine's activations.
  repops::CrossEntropySums Score(const model::ParameterSet& p, const data::PackedBatch& b) {
    return model_.Forward(p, ViewOf(b), acts_);
  }
  int64_t activation_bytes() const { return acts_.bytes(); }
  uint64_t WindowsAt(int64_t step) const { return batcher_.schedule().WindowsAt(step); }
  size_t max_resident_replica_partials() const { return max_resident_; }

 private:
  std::unique_ptr<model::ParameterSet> TakeBuffer();
  const Recipe& recipe_;
  data::CanonicalStream& stream_;
  data::Batcher batcher_;
  model::Transformer model_;
  model::Activations acts_;
  model::ParameterSet micro_grad_;
  std::vector<std::unique_ptr<model::ParameterSet>> free_;  // reusable gradient buffers
  std::unique_ptr<model::ParameterSet> last_grad_;
  data::PackedBatch batch_;
  size_t max_resident_ = 0;
};

// Runs the state's next step and chains its record into st.chain: returns the trajectory line.
std::string StepAndChain(StepEngine& engine, TrainState& st, StepResult& r);

}  // namespace trail::train
