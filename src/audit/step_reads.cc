#include "audit/step_reads.h"

#include <algorithm>
#include <set>

#include "data/batch_schedule.h"
#include "data/stream.h"

namespace trail::audit {

std::vector<StartPoint> StartPoints(const std::vector<int64_t>& checkpoints) {
  std::vector<StartPoint> out = {{0, false}};
  for (int64_t c : checkpoints) out.push_back({c, true});
  return out;
}

int NewestStart(const std::vector<StartPoint>& starts, int64_t target, size_t below,
                const std::set<int>& rejected) {
  for (int i = static_cast<int>(std::min(below, starts.size())) - 1; i >= 0; --i) {
    if (starts[static_cast<size_t>(i)].step <= target && !rejected.count(i)) return i;
  }
  return -1;
}

std::vector<int64_t> StartingCheckpoints(const std::vector<int64_t>& steps,
                                         const std::vector<int64_t>& checkpoints) {
  const std::vector<StartPoint> starts = StartPoints(checkpoints);
  std::vector<int64_t> out;
  for (int64_t s : steps) {
    const int i = NewestStart(starts, s, starts.size(), {});
    out.push_back(i >= 0 && starts[static_cast<size_t>(i)].checkpoint ? starts[i].step : -1);
  }
  return out;
}

std::vector<int64_t> ReplayedSteps(const std::vector<int64_t>& steps,
                                   const std::vector<int64_t>& checkpoints) {
  const std::vector<int64_t> starts = StartingCheckpoints(steps, checkpoints);
  std::set<int64_t> replayed;
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int64_t s = std::max<int64_t>(starts[i], 0); s <= steps[i]; ++s) replayed.insert(s);
  }
  return {replayed.begin(), replayed.end()};
}

std::vector<ShardReads> TokenReadsOfSteps(const data::Manifest& m,
                                          const std::vector<int64_t>& steps) {
  data::CanonicalStream stream(m, data::StreamOptions{false});
  std::vector<ShardReads> out;
  for (size_t i = 0; i < stream.num_sources(); ++i) {
    for (size_t j = 0; j < m.sources[i].shards.size(); ++j) {
      const data::ShardReader& sh = stream.source(i).shard(static_cast<uint32_t>(j));
      out.push_back({i, j, sh.header().tokens_offset, sh.header().token_bytes, {}});
    }
  }
  size_t k = 0;  // out is in source, shard order: LogReadsTo each its own vector
  for (size_t i = 0; i < stream.num_sources(); ++i) {
    for (size_t j = 0; j < m.sources[i].shards.size(); ++j) {
      stream.source(i).shard(static_cast<uint32_t>(j)).LogReadsTo(&out[k++].ranges);
    }
  }
  const data::BatchSchedule schedule(m.stream.schedule);
  data::RawWindow raw;
  for (int64_t step : steps) {
    const data::WindowRange r = schedule.StepWindows(step);
    for (uint64_t w = r.begin; w < r.end; ++w) stream.Window(w, raw);
  }
  for (size_t i = 0; i < stream.num_sources(); ++i) {
    for (size_t j = 0; j < m.sources[i].shards.size(); ++j) {
      stream.source(i).shard(static_cast<uint32_t>(j)).LogReadsTo(nullptr);
    }
  }
  return out;
}

}  // namespace trail::audit
