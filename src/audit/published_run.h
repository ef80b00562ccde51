// A run as an auditor receives it (docs/audit.md, "What an audit reads"): run.json, recipe.toml,
// trajectory.jsonl, checkpoints/, attestation.json, and the data its manifest names — possibly
// a copy published elsewhere. Opening one checks what can be checked without executing a step
// and keeps what it finds; replay (replay.h) checks the steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/run_attestation.h"
#include "train/run_dir.h"
#include "train/trajectory.h"

namespace trail::audit {

struct PublishedRun {
  explicit PublishedRun(const std::string& dir) : rd(dir) {}

  train::RunDirectory rd;
  train::RunInfo info;
  std::vector<train::TrajectoryRecord> records;  // the records that chain from the genesis
  std::string trajectory_problem;  // the first record that does not chain ("" when all do)
  int64_t recorded_lines = 0;      // complete lines of trajectory.jsonl, chained or not
  train::RunAttestationCheck attestation;

  int64_t steps() const { return static_cast<int64_t>(records.size()); }
  // H of the last record that chains (the genesis when there is none), hex.
  std::string final_chain() const;
};

// Reads run.json, checks recipe.toml against its SHA-256, reads the trajectory (keeping the
// records that chain and the first problem) and checks attestation.json. Throws trail::Error
// when the run cannot be audited at all (no run.json, a recipe that is not the run's).
PublishedRun OpenPublishedRun(const std::string& dir);

// The data manifest to replay with: `given` (a copy published elsewhere), else the one
// run.json names. Throws unless its SHA-256 is the one the run recorded.
std::string ManifestForReplay(const PublishedRun& run, const std::string& given);

}  // namespace trail::audit
