// What training reports per executed step: one metrics.jsonl line — step, loss, lr, tokens,
// targets, grad norm before and after clipping, clip coefficient, skip reason, tokens/s, step
// and hashing seconds, z-loss when the recipe has it, the spike monitor's alerts, per-group
// weight norms on log steps and per-domain validation loss on evaluation steps — and a progress
// line on stderr on log steps, evaluation steps and alerts (with an ETA from the rate so far).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "train/loaded_run.h"
#include "train/run_dir.h"
#include "train/spike_monitor.h"
#include "train/state.h"
#include "train/step.h"

namespace trail::train {

// "12s", "3m07s", "2h05m".
std::string FormatDuration(double seconds);
// One number through a printf format ("%.3f").
std::string FormatNumber(const char* format, double value);
// A progress line on stderr unless quiet.
void Say(bool quiet, const std::string& line);

// Whether the step just run (st.step steps done) evaluates the validation sets: every
// eval_every steps and after the last step, when the data has validation sets.
bool EvaluatesAfter(const LoopConfig& loop, int64_t steps_done, bool has_validation);

// Whether the step just run (steps_done steps done) logs: every log_every steps, the first
// step a run (or a resume) runs and the last step.
bool LogsAfter(const LoopConfig& loop, int64_t first_step, int64_t steps_done);

// The parameters' L2 norms by group ("embed", "layers.0", ..., "final_norm.gain"): each
// tensor's SumSq (RepOps order) added in double, in canonical order. Every process of the job
// calls it (sharded parameters are gathered unit by unit); the values are the same on all.
nlohmann::json WeightNorms(StepEngine& engine, TrainState& st);

class StepReporter {
 public:
  // Steps run from st.step (at construction) up to last_step.
  StepReporter(LoadedRun& run, SpikeMonitor& monitor, const std::string& metrics_path,
               int64_t first_step, int64_t last_step, bool quiet);

  // Records the step just run (st is the state after it) with the validation loss per domain
  // when this step evaluated (LoadedRun::Evaluate, which every process of the job runs; empty
  // otherwise) and the weight norms when it logs (WeightNorms where LogsAfter, else null).
  // Returns the validation losses' mean over domains when it evaluated, else a negative value.
  double Record(const StepResult& r, const TrainState& st,
                const std::map<std::string, double>& validation,
                const nlohmann::json& weight_norms);

 private:
  LoadedRun& run_;
  SpikeMonitor& monitor_;
  LineAppender metrics_;
  int64_t first_step_, last_step_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
  int64_t tokens_run_ = 0;
};

}  // namespace trail::train
