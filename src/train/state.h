// Everything a training run carries from one step to the next. With it, step s is a pure
// function of (recipe, data, state): this is what a checkpoint stores and a resume restores
// (resume tier 3, a bitwise-identical continuation — above tier 1, a run that merely resumes,
// and tier 2, the same sample sequence).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "core/hash.h"
#include "model/params.h"

namespace trail::train {

struct TrainState {
  // Parameters and moments on the backend's device (the backend must outlive the state: the
  // step engine's, LoadedRun::engine.backend()).
  // With Memory::kUnbound the parameters have no memory yet (a job that shards them:
  // StepEngine::InitParameters or LoadCheckpointShared keeps only this process's range).
  TrainState(const model::ModelConfig& c, repops::Backend& backend,
             model::Memory memory = model::Memory::kAllocated)
      : params(c, backend, "", memory), config_(c) {}
  repops::Backend& backend() const { return params.backend(); }

  model::ParameterSet params;
  int64_t step = 0;                // the next step to run (= steps completed)
  uint64_t window_cursor = 0;      // first window of that step
  int64_t tokens = 0;              // tokens consumed (the LR schedule's clock)
  int64_t optimizer_updates = 0;   // AdamW's t (skipped steps do not count)
  std::deque<float> norm_history;  // accepted pre-clip norms (spike protocol)
  std::string monitor_state;       // SpikeMonitor::StateJson()
  Digest chain{};                  // H_step of the trajectory
  // The step engine holds this process's ranges of the moments (and, sharded, of the
  // parameters) in their place (StepEngine::AdoptState, LoadCheckpointShared).
  bool ranges_in_engine = false;

  // AdamW's first and second moments, every tensor whole (names "adam_m.*", "adam_v.*"),
  // allocated as zeros on first use. In a job of several processes each step engine keeps only
  // its own range of them (StepEngine::AdoptState), and they exist here only while a
  // checkpoint is written or loaded; ReleaseMoments frees them.
  model::ParameterSet& adam_m() { return Moment(m_, "adam_m."); }
  model::ParameterSet& adam_v() { return Moment(v_, "adam_v."); }
  const model::ParameterSet& adam_m() const { return Moment(m_, "adam_m."); }
  const model::ParameterSet& adam_v() const { return Moment(v_, "adam_v."); }
  bool has_moments() const { return m_ != nullptr; }
  void ReleaseMoments() { m_.reset(), v_.reset(); }

  Digest OptimizerHash() const;  // state hash over adam_m.* and adam_v.*

 private:
  // Materializing zeros is not a change of the state: a missing moment set reads as zeros.
  model::ParameterSet& Moment(std::unique_ptr<model::ParameterSet>& slot,
                              const char* prefix) const {
    if (!slot) slot = std::make_unique<model::ParameterSet>(config_, backend(), prefix);
    return *slot;
  }
  model::ModelConfig config_;
  mutable std::unique_ptr<model::ParameterSet> m_, v_;
};

}  // namespace trail::train
