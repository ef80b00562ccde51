// trajectory.jsonl: one record per step with everything an auditor compares — the batch hash,
// loss / LR / gradient-norm bits, gradient, parameter and optimizer-state hashes — chained:
// H_s = SHA-256(H_{s-1} ‖ body_s), where body_s is the record's line without its "chain" field.
// H_{-1} (the genesis) = SHA-256("trail.trajectory.v1" ‖ recipe sha ‖ manifest sha ‖ initial
// parameter hash), all hex. Records are written with a fixed key order, so equal steps give
// equal lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/hash.h"
#include "train/step.h"

namespace trail::train {

Digest GenesisHash(const std::string& recipe_sha, const std::string& manifest_sha,
                   const Digest& initial_params);

// The record body (no chain) of a step, and the full line (with chain, no newline).
std::string TrajectoryBody(const StepResult& r);
std::string TrajectoryLine(const std::string& body, const Digest& chain);
Digest ChainNext(const Digest& prev, const std::string& body);

struct TrajectoryRecord {
  int64_t step = 0;
  std::string line;  // without the newline
  Digest chain{};
};

// Reads the complete records of a trajectory file, checking every record's chained hash from
// `genesis` (nullptr: from the first record on, for a segment). A torn last line (a crash
// mid-write) is not returned; *complete_bytes says where the complete records end.
std::vector<TrajectoryRecord> ReadTrajectory(const std::string& path, const Digest* genesis,
                                             uint64_t* complete_bytes = nullptr);

// Field-by-field difference of two record lines ("" when equal): names the first field that
// differs, for the error an auditor reads.
std::string FirstDifference(const std::string& expected, const std::string& actual);

}  // namespace trail::train
