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

#include "collectives/communicator.h"
#include "core/state_hash.h"
#include "train/state.h"

namespace trail::train {

struct RunIdentity {
  std::string recipe_sha256, manifest_sha256;
};

std::string CheckpointDir(const std::string& run_dir, int64_t step);

// The files of a checkpoint directory (docs/training.md, "Checkpoints"): the one schema every
// writer, reader, publisher and fetch uses. meta.json (written last) records the SHA-256 of the
// two safetensors files under these names.
inline constexpr const char* kCheckpointMetaFile = "meta.json";
inline constexpr const char* kCheckpointModelFile = "model.safetensors";  // the parameters
inline constexpr const char* kCheckpointOptimFile = "optim.safetensors";  // AdamW's moments
inline constexpr const char* kCheckpointFiles[] = {kCheckpointMetaFile, kCheckpointModelFile,
                                                   kCheckpointOptimFile};

void SaveCheckpoint(const std::string& run_dir, const TrainState& st, const RunIdentity& id);

// One process's share of a checkpoint that every process of a job writes (StepEngine::
// CheckpointShareOf): its flat range of the state, the tensors' names and shapes, and the state
// hashes the step computed together.
struct CheckpointShare {
  std::vector<TensorMeta> param_metas, moment_metas;  // moment_metas: adam_m.*, then adam_v.*
  std::vector<int64_t> bounds;      // process q holds flat elements [bounds[q], bounds[q + 1])
  std::vector<float> params, m, v;  // this process's range of each
  Digest params_hash{}, optim_hash{};
};

// SaveCheckpoint's files, byte for byte, written by every process of the job `comm` at once, with
// no process holding more than its own range: process 0 creates the temporary directory and both
// files (their headers, at full length); every process writes its range of the parameters into
// model.safetensors and of both moments into optim.safetensors at their offsets, and syncs; once
// all have, process 0 hashes the files, writes meta.json (its "layout" records the writers'
// ranges) and renames the directory into place. A process that dies on the way leaves only the
// temporary directory, which ListCheckpoints never lists. Every process calls it with its share
// (st's scalars are process 0's to record). Throws trail::Error on every process when any fails.
void SaveCheckpointShared(const std::string& run_dir, const TrainState& st, const RunIdentity& id,
                          collectives::Communicator& comm, const CheckpointShare& share);

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

// Checks all LoadCheckpoint checks without reading the state (files against meta.json, layout
// against a model of `parameters`, identity; not the state hashes) and returns the step.
int64_t VerifyCheckpoint(const std::string& dir, const RunIdentity& id, int64_t parameters);

// A process's flat range [begin, begin + count) of a checkpoint's parameters and of each AdamW
// moment (what a job with sharded parameters resumes from: nothing else of the files is read),
// with the state hashes meta.json records.
struct CheckpointRanges {
  std::vector<float> params, m, v;
  Digest params_hash{}, optim_hash{};
};
// Verifies the checkpoint as LoadCheckpoint does but for the state hashes (files against
// meta.json, layout, identity), sets st's scalars (step, cursor, tokens, updates, norm history,
// monitor state, chain) and reads the range at its offsets in the files, whose tensors must be
// `params` (names, dtypes, shapes in canonical order) and "adam_m."/"adam_v." of them, back to
// back in that order. The state hashes are the caller's to check with the other processes
// (StepEngine::LoadCheckpointShared). Throws trail::Error saying what is wrong.
CheckpointRanges LoadCheckpointRanges(const std::string& dir, const RunIdentity& id, TrainState& st,
                                      std::span<const TensorMeta> params, int64_t begin,
                                      int64_t count);

// The model's parameters alone, for inference (model.safetensors; optim.safetensors may be
// absent): the checkpoint must belong to the run `id`, the file must match meta.json's SHA-256
// and the loaded parameters its state hash. Returns the checkpoint's step; throws trail::Error
// naming the file at fault.
int64_t LoadCheckpointParams(const std::string& dir, const RunIdentity& id,
                             model::ParameterSet& params);

// Deletes all but the newest `keep` checkpoints, and with keep_step0 never checkpoint 0 (a run
// continuing an imported model: its base's parameters, where a replay of its first steps starts).
void ApplyRetention(const std::string& run_dir, int64_t keep, bool keep_step0);

}  // namespace trail::train
