// trajectory.jsonl: one record per step with everything an auditor compares — the batch hash,
// loss / LR / gradient-norm bits, gradient, parameter and optimizer-state hashes — chained:
// H_s = SHA-256(H_{s-1} ‖ body_s), where body_s is the record's line without its "chain" field.
// H_{-1} (the genesis) = SHA-256("trail.trajectory.v1" ‖ recipe sha ‖ manifest sha ‖ initial
// parameter hash), all hex. Records are written with a fixed key order, so equal steps give
// equal lines.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/hash.h"
#include "train/step.h"

namespace trail::train {

Digest GenesisHash(const std::string& recipe_sha, const std::string& manifest_sha,
                   const Digest& initial_params);

// The one schema of a record: every field in the order it is written, how it is written, where
// an auditor reads it when two records differ, and what a difference says. The writer, the
// differing-field check and replay's findings all read this table.
struct TrajectoryField {
  const char* key;
  // The JSON value of this field in step r's record; nullptr for "chain", which
  // TrajectoryLine appends after the body.
  std::string (*value)(const StepResult& r);
  // Rank in the auditor's reading order (data, scalars, then state hashes); -1: not compared
  // (a decimal rendering whose bits are a field of their own).
  int compare_order;
  // What a difference in it says about the step ("" when the field says it all).
  const char* meaning;
};
std::span<const TrajectoryField> TrajectoryFields();
// The field of that key; nullptr if the schema has none.
const TrajectoryField* FindTrajectoryField(const std::string& key);

// The record body (no chain) of a step, and the full line (with chain, no newline).
std::string TrajectoryBody(const StepResult& r);
std::string TrajectoryLine(const std::string& body, const Digest& chain);
Digest ChainNext(const Digest& prev, const std::string& body);

struct TrajectoryRecord {
  int64_t step = 0;
  std::string line;  // without the newline
  Digest chain{};
};

// What a record commits about the state after its step, read through the schema's keys: the
// parameter and optimizer state hashes (hex; both empty when the record commits none, "params"
// and "optim" null) and the window cursor (the end of "windows"). Throws trail::Error naming
// the step when the line lacks them.
struct RecordedState {
  std::string params, optim;
  uint64_t window_cursor = 0;
  bool committed() const { return !params.empty(); }
};
RecordedState RecordedStateOf(const TrajectoryRecord& record);

// Reads the complete records of a trajectory file, checking every record's chained hash from
// `genesis` (nullptr: from the first record on, for a segment). A torn last line (a crash
// mid-write) is not returned; *complete_bytes says where the complete records end.
std::vector<TrajectoryRecord> ReadTrajectory(const std::string& path, const Digest* genesis,
                                             uint64_t* complete_bytes = nullptr);

// The same, but instead of throwing at the first record that is malformed, out of sequence or
// does not chain, returns the records before it and describes it in *problem ("" when the
// whole file chains): what an auditor needs to localize an altered record.
std::vector<TrajectoryRecord> ReadChainedPrefix(const std::string& path, const Digest* genesis,
                                                std::string* problem,
                                                uint64_t* complete_bytes = nullptr);

// The first field (in the order an auditor reads them: data, scalars, then state hashes) in
// which two record lines differ, with both values as JSON; an empty field when they are equal.
struct RecordDifference {
  std::string field, expected, actual;
};
RecordDifference DifferingField(const std::string& expected, const std::string& actual);
// The same as one phrase: "<field> (expected <value>, got <value>)", "" when equal.
std::string FirstDifference(const std::string& expected, const std::string& actual);

}  // namespace trail::train
