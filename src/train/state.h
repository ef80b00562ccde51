// Everything a training run carries from one step to the next. With it, step s is a pure
// function of (recipe, data, state): this is what a checkpoint stores and a resume restores
// (resume tier 3, a bitwise-identical continuation — above tier 1, a run that merely resumes,
// and tier 2, the same sample sequence).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "core/hash.h"
#include "model/params.h"

namespace trail::train {

struct TrainState {
  explicit TrainState(const model::ModelConfig& c)
      : params(c), adam_m(c, "adam_m."), adam_v(c, "adam_v.") {}

  model::ParameterSet params, adam_m, adam_v;
  int64_t step = 0;              // the next step to run (= steps completed)
  uint64_t window_cursor = 0;    // first window of that step
  int64_t tokens = 0;            // tokens consumed (the LR schedule's clock)
  int64_t optimizer_updates = 0; // AdamW's t (skipped steps do not count)
  std::deque<float> norm_history;  // accepted pre-clip norms (spike protocol)
  std::string monitor_state;       // SpikeMonitor::StateJson()
  Digest chain{};                  // H_step of the trajectory

  Digest OptimizerHash() const;  // Merkle root over adam_m.* and adam_v.*
};

}  // namespace trail::train
