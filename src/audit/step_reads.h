// What replaying steps reads, computed without replaying: the steps executed on the way (from
// the starting points at hand) and the token ranges of each shard that the windows of those
// steps read. A remote audit fetches exactly these (remote_run.h); a plan prices them.
#pragma once

#include <cstdint>
#include <vector>

#include "data/manifest.h"
#include "data/shard_reader.h"

namespace trail::audit {

// Every step a replay of `steps` (ascending) executes when each starts from the newest of
// `checkpoints` at or before it (step 0 from the recipe when none), ascending and distinct.
std::vector<int64_t> ReplayedSteps(const std::vector<int64_t>& steps,
                                   const std::vector<int64_t>& checkpoints);

// The start of each of `steps`: the newest of `checkpoints` at or before it, -1 when none.
std::vector<int64_t> StartingCheckpoints(const std::vector<int64_t>& steps,
                                         const std::vector<int64_t>& checkpoints);

struct ShardReads {
  size_t source = 0, shard = 0;  // indices in the manifest's sources and their shards
  uint64_t tokens_offset = 0;    // where the shard's token array starts (bytes)
  uint32_t token_bytes = 2;
  data::TokenReadLog ranges;  // token index ranges [begin, end)
};

// Runs the canonical stream over the windows of `steps` with a read log on every training
// shard (their token bytes need not be present: only the headers and indexes are read beyond
// the logged ranges). The same code the replay runs, so the ranges are exactly its reads.
std::vector<ShardReads> TokenReadsOfSteps(const data::Manifest& m,
                                          const std::vector<int64_t>& steps);

}  // namespace trail::audit
