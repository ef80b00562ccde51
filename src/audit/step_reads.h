// What replaying steps reads, computed without replaying: the steps executed on the way (from
// the starting points at hand) and the token ranges of each shard that the windows of those
// steps read. A remote audit fetches exactly these (remote_run.h); a plan prices them.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "data/manifest.h"
#include "data/shard_reader.h"

namespace trail::audit {

// A point a replay can start from: a checkpoint, or step 0 from the recipe's initial parameters.
struct StartPoint {
  int64_t step = 0;
  bool checkpoint = false;
};

// The starting points at hand, oldest first: step 0 from the recipe, then each of
// `checkpoints` (ascending; a checkpoint at step 0 comes after the recipe's start, so it is
// preferred to it).
std::vector<StartPoint> StartPoints(const std::vector<int64_t>& checkpoints);

// The one rule of where a replay up to `target` starts, which the fetch (remote_run.h) and the
// replay (replay.h) both follow: the newest of starts[0, below) at or before `target` whose
// index is not in `rejected`; its index, -1 when there is none.
int NewestStart(const std::vector<StartPoint>& starts, int64_t target, size_t below,
                const std::set<int>& rejected);

// Every step a replay of `steps` (ascending) executes when each starts from the newest of
// `checkpoints` at or before it (step 0 from the recipe when none), ascending and distinct.
std::vector<int64_t> ReplayedSteps(const std::vector<int64_t>& steps,
                                   const std::vector<int64_t>& checkpoints);

// The start of each of `steps` while no starting point is rejected (NewestStart): the newest of
// `checkpoints` at or before it, -1 when none (step 0 from the recipe).
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
