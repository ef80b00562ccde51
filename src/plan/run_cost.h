// What a recipe costs before it runs (docs/plan.md, "Cost"): parameters by kind, FLOPs per
// token and for the whole token budget, tokens per parameter, and each process's memory on a
// given process count — all from the recipe, the data's stream settings and the same layouts the
// trainer allocates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/stream_config.h"
#include "train/recipe.h"
#include "train/run_flops.h"

namespace trail::plan {

struct ProcessMemory {
  // Whole parameters: 4 bytes × total. Sharded ([mesh] shard_params): 4 bytes × this process's
  // range plus the gathered units' buffers (train::ShardedParameters::PlannedGatheredBytes).
  int64_t parameters = 0;
  int64_t parameters_whole = 0, parameters_sharded = 0;  // under each setting
  // 4 bytes × total × (local-fold partial sums, + 1 for a second micro-batch's gradient unless
  // the mesh fixes micro_batches = 1).
  int64_t gradients = 0;
  int64_t gradient_buffers = 0;
  int64_t moments = 0;      // AdamW m and v of this process's range of the flat state
  int64_t activations = 0;  // model::Activations for one micro-batch of the longest windows,
                            // with the recipe's [train] recompute
  // The same under each setting of [train] recompute: keeping every layer's activations
  // ("none") and keeping each layer's input only ("layers").
  int64_t activations_kept = 0, activations_recomputed = 0;
  int64_t total() const { return parameters + gradients + moments + activations; }
};

struct RunCost {
  model::ModelCost model;  // parameters by kind, FLOPs per token (6N + attention) at seq_len
  int64_t seq_len = 0, steps = 0;  // seq_len: the stream's first length
  // Per window length the steps use (one unless the stream has a sequence-length curriculum).
  std::vector<train::LengthFlops> lengths;
  double tokens = 0;                // Σ over steps of windows(step) · L(step) (input positions)
  double total_flops = 0;           // Σ over lengths of tokens · flops_per_token
  double tokens_per_parameter = 0;  // tokens / total parameters
  int64_t processes = 1;
  std::vector<ProcessMemory> memory;  // one per process
};

// A step rate measured by training: `steps` real steps of the recipe on its data, in a temporary
// run directory removed afterwards. The first step (warm-up: allocation, caches) is left out.
struct StepRate {
  int64_t steps = 0;               // measured (after the first)
  double median_step_seconds = 0;  // of those steps (the step itself: no checkpoint, no eval)
  double seconds_per_token = 0;    // median over those steps of step seconds / input tokens
};
// steps >= 2. Throws trail::Error when the recipe or data cannot train.
StepRate MeasureStepRate(const std::string& recipe_path, const std::string& manifest_path,
                         int64_t steps);

// The recipe's model must have its vocabulary size. processes in 1..mesh ranks.
RunCost EstimateRunCost(const train::Recipe& recipe, const data::StreamConfig& stream,
                        int64_t processes);

}  // namespace trail::plan
