// The corpus build's second phase: merge the document runs by key — each document gets its
// ordinal (its rank in key order), a key read twice is quarantined as duplicate_id (the first
// read stays) — and exact dedup: documents still kept are grouped by content hash through an
// external sort, and in each group the smallest ordinal survives.
// Files it leaves in the work directory: locations.bin (a Location per ordinal: where the
// document's record sits in the runs) and exact.bin (an ExactDup per exact duplicate, by
// ordinal), which near dedup and the final pass read.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "corpus/pipeline/build_budget.h"
#include "corpus/pipeline/build_report.h"

namespace trail::corpus {

// Too many runs to merge at once are merged in consecutive groups first (consecutive, so a
// repeated key still meets its first read first), level after level; the checkpointed runs of
// the first level stay as they are. Returns the runs to merge.
std::vector<std::string> MergeDocRunGroups(std::vector<std::string> runs, const Budget& budget,
                                           const std::string& work);

struct ExactDedupResult {
  uint64_t documents = 0, bytes_in = 0;    // documents with an ordinal, and their raw bytes
  std::unordered_set<uint32_t> survivors;  // ordinals that have exact duplicates
};

// `files` are the build's input files (for quarantine records). Counts drops by stage in the
// report (the per-document stages' too: their verdicts are read back from the runs) and adds
// repeated keys to its quarantine, the exact-dedup time and spilled bytes.
ExactDedupResult ExactDedup(const std::vector<std::string>& runs, size_t run_buffer,
                            const std::vector<std::string>& files, const Budget& budget,
                            const std::string& work, BuildReport& report);

}  // namespace trail::corpus
