// What the two checkpoint writers (checkpoint.cc: one process; checkpoint_shared.cc: every
// process of a job) share: the files' safetensors metadata, directory syncs, and the last act of
// a save.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/hash.h"
#include "core/safetensors.h"
#include "train/checkpoint.h"

namespace trail::train {

// {"format": "pt", "trail": "trail.checkpoint.v1"}: the __metadata__ of both safetensors files.
const SafetensorsMetadata& CheckpointFileMetadata();

// fsync of a directory (its entries), so a rename into it survives a crash.
void SyncDir(const std::string& dir);

// meta.json for the files in tmp (hashed here), then tmp renamed into place as step st.step's
// checkpoint. layout: how several processes wrote the files (null: one process did).
void WriteMetaAndCommit(const std::string& run_dir, const std::string& tmp, const TrainState& st,
                        const RunIdentity& id, const Digest& params_hash, const Digest& optim_hash,
                        const nlohmann::json* layout);

}  // namespace trail::train
