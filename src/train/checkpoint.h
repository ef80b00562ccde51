// Checkpoints: run/checkpoints/step_NNNNNNNN/{model.safetensors, optim.safetensors, meta.json}.
// A checkpoint is written into a temporary directory (every file fsynced) and renamed into
// place, so a crash leaves either the whole checkpoint or none. meta.json records the step,
// window cursor, tokens consumed, optimizer and spike-protocol state, the monitor's state, the
// trajectory chain, the recipe and data-manifest hashes, the state hashes and each file's
// SHA-256, and the resume tier it guarantees (3: a bitwise-identical continuation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/state.h"

namespace trail::train {

struct RunIdentity {
  std::string recipe_sha256, manifest_sha256;
};

std::string CheckpointDir(const std::string& run_dir, int64_t step);

void SaveCheckpoint(const std::string& run_dir, const TrainState& st, const RunIdentity& id);

// Steps of the checkpoints present (complete directories), ascending.
std::vector<int64_t> ListCheckpoints(const std::string& run_dir);

// The recipe and manifest hashes a checkpoint's meta.json names (throws if it cannot be read).
RunIdentity CheckpointIdentity(const std::string& dir);

// What a checkpoint's meta.json says, after its files were checked against it (format, both
// safetensors files' SHA-256) without loading a model; throws trail::Error naming the problem.
struct CheckpointMeta {
  int64_t step = 0;
  RunIdentity id;
  std::string trajectory_chain;  // hex: the chain after step - 1 (the genesis hash at step 0)
};
CheckpointMeta VerifyCheckpointFiles(const std::string& dir);

// Loads and verifies one checkpoint into `st` (whose config must match): file hashes, shapes,
// state hashes, and that it belongs to this recipe and data. Throws trail::Error saying what
// is wrong; `st` is unspecified after a failure.
void LoadCheckpoint(const std::string& dir, const RunIdentity& id, TrainState& st);

// The model's parameters alone, for inference (model.safetensors; optim.safetensors may be
// absent): the checkpoint must belong to the run `id`, the file must match meta.json's SHA-256
// and the loaded parameters its state hash. Returns the checkpoint's step; throws trail::Error
// naming the file at fault.
int64_t LoadCheckpointParams(const std::string& dir, const RunIdentity& id,
                             model::ParameterSet& params);

// Deletes all but the newest `keep` checkpoints.
void ApplyRetention(const std::string& run_dir, int64_t keep);

}  // namespace trail::train
