// An IsoFLOP sweep (docs/plan.md, "Sweep"): for each compute budget C and each model width, a
// recipe whose token count spends C, so the runs' final losses give `plan fit` points along
// curves of equal compute (Hoffmann et al.'s approach 2 grid, fitted with approach 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/stream_config.h"
#include "train/recipe.h"

namespace trail::plan {

struct SweepSpec {
  std::string base_recipe;      // the recipe every run starts from (optimizer, mesh, …)
  std::vector<double> budgets;  // training FLOPs per run
  std::vector<int64_t> widths;  // d_model per run; layers, heads and d_ff/d_model from the base
  int64_t min_steps = 10;       // a (budget, width) that would train fewer steps is left out
};

struct SweepRun {
  std::string name;  // c<budget>-d<width>, e.g. c1.0e+12-d64
  double budget = 0;
  int64_t d_model = 0, d_ff = 0, parameters = 0, steps = 0;
  double tokens = 0;  // what the steps consume (≥ budget / FLOPs per token, the first step over)
  double flops = 0;   // FLOPs per token × tokens
  std::string recipe_text;
};

struct Sweep {
  std::vector<SweepRun> runs;
  std::vector<std::string> skipped;  // why a (budget, width) was left out
};

// The base recipe's vocabulary comes from `vocab` (the data's tokenizer) when it has none.
// Each run's recipe is the base with [model] d_model and d_ff, [train] steps and, when the base
// decays (cosine or wsd), [schedule] total_tokens = the run's tokens and warmup_tokens scaled
// by the same factor, replaced. Throws trail::Error for a width the heads do not divide evenly
// or an empty grid.
Sweep PlanSweep(const SweepSpec& spec, const data::StreamConfig& stream, int64_t vocab);

}  // namespace trail::plan
