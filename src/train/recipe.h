// The training recipe (recipe.toml): model, optimizer, schedule, logical mesh, loop settings
// and monitor. Loading is strict: unknown keys, wrong types and inconsistent values are errors
// that name the file and the key.
#pragma once

#include <cstdint>
#include <string>

#include "model/config.h"
#include "train/lr_schedule.h"
#include "train/spike_monitor.h"

namespace trail::train {

struct OptimizerConfig {
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  float weight_decay = 0.1f;  // decoupled; applied to matrices (embedding included), not gains
  float clip_norm = 1.0f;     // global-norm clipping of the final accumulated gradient
  // Spike protocol: skip the update when the pre-clip norm exceeds spike_skip_factor times the
  // median of the last spike_window accepted norms (0 = off; needs spike_min_history norms).
  float spike_skip_factor = 0.0f;
  int64_t spike_window = 128;
  int64_t spike_min_history = 16;
};

// The logical data-parallel mesh (DESIGN.md, "Logical topology"): R replicas × S shards, each
// logical rank running the step's micro-batches of its windows. micro_batches, when > 0, is
// asserted against the data's batch schedule at every step.
struct MeshConfig {
  int64_t replicas = 1, shards = 1, micro_batches = 0;
  // Each process holds only its flat range of the parameters and gathers each unit (a layer,
  // the embedding, the head) from all processes just before the forward and the backward use
  // it (train/sharded_params.h). The same bits either way, for any number of processes.
  bool shard_params = false;
  int64_t ranks() const { return replicas * shards; }
};

struct LoopConfig {
  int64_t steps = 100;
  int64_t eval_every = 0;        // 0 = only at the end
  int64_t eval_windows = 64;     // per validation domain (its first windows, in stored order)
  int64_t checkpoint_every = 0;  // 0 = only at the end
  int64_t keep_checkpoints = 3;  // newest kept; older ones deleted
  int64_t log_every = 10;
  // The parameters' and optimizer moments' state hashes are recorded after every step s with
  // (s + 1) a multiple of this, before every checkpoint and after the last step (0: only
  // there); the gradient's every step (docs/training.md, "Trajectory record").
  int64_t state_hash_every = 10;
  // Activation recomputation (model/transformer.h): the same bits either way, less memory for
  // about one more forward of the blocks.
  model::Recompute recompute = model::Recompute::kNone;
  // Whether the record of step s carries the parameter and optimizer state hashes.
  bool CommitsStateAfter(int64_t s) const {
    const int64_t next = s + 1;
    return next == steps || (state_hash_every > 0 && next % state_hash_every == 0) ||
           (checkpoint_every > 0 && next % checkpoint_every == 0);
  }
};

// Where the parameters before step 0 come from: the model's random initialization (init_seed,
// init_std), or a model `trail import` converted (train/imported_base.h), named by the SHA-256
// of its import.json and by the state hash of its parameters — so the recipe, and through it the
// run's genesis hash, commits to the exact base a continued pretraining starts from.
struct InitConfig {
  bool imported = false;      // [init] from = "import" (default "random")
  std::string import_sha256;  // hex SHA-256 of the base's import.json
  std::string params_sha256;  // hex state hash of its parameters
};

struct Recipe {
  std::string path, text, sha256;  // where it came from, its bytes and their SHA-256
  model::ModelConfig model;
  InitConfig init;
  std::string preset;
  OptimizerConfig optimizer;
  LrSchedule schedule;
  MeshConfig mesh;
  LoopConfig loop;
  MonitorConfig monitor;
};

// vocab_size may be omitted in the file; `data_vocab` (the tokenizer's) fills it, and a value
// given must equal it.
Recipe ParseRecipe(const std::string& text, const std::string& path, int64_t data_vocab);
Recipe LoadRecipe(const std::string& path, int64_t data_vocab);
// The [init] section alone (no other section is checked), for a reader without the data.
InitConfig ParseRecipeInit(const std::string& text, const std::string& path);

// The [model] section (header line included) that ParseRecipe reads back to the function `c`
// computes: every key the forward depends on, written explicitly (training-only keys —
// init_std, init_seed, z_loss — and [quant] are left out). Numbers are written in the fewest
// digits that read back to the same binary32. Two configs whose sections are equal compute the
// same function (the converse can fail: two window patterns may select the same layers).
std::string ModelSectionToml(const model::ModelConfig& c);

}  // namespace trail::train
