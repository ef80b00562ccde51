#include "audit/plan_cost.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "audit/step_reads.h"
#include "core/error.h"
#include "data/shard_reader.h"
#include "train/checkpoint.h"
#include "train/step_trace.h"

namespace trail::audit {
namespace {

// The chunks of each file a fetch needs.
class ChunkCount {
 public:
  explicit ChunkCount(const Publication& pub) : pub_(pub) {}
  void Range(const fetch::RemoteFile& f, uint64_t begin, uint64_t end) {
    const auto [first, last] = f.ChunksOf(begin, end);
    for (uint64_t c = first; c < last; ++c) chunks_[f.path].insert(c);
  }
  void Whole(const std::string& path) {
    if (const fetch::RemoteFile* f = pub_.Find(path)) Range(*f, 0, f->size);
  }
  uint64_t Bytes() const {
    uint64_t n = 0;
    for (const auto& [path, cs] : chunks_) {
      const fetch::RemoteFile& f = pub_.Get(path);
      for (uint64_t c : cs) n += f.ChunkEnd(c) - f.ChunkBegin(c);
    }
    return n;
  }

 private:
  const Publication& pub_;
  std::map<std::string, std::set<uint64_t>> chunks_;
};

}  // namespace

AuditorCost ReplayCost(const std::vector<int64_t>& steps, const std::vector<int64_t>& checkpoints) {
  AuditorCost c;
  c.steps = static_cast<int64_t>(steps.size());
  const std::vector<int64_t> starts = StartingCheckpoints(steps, checkpoints);
  int64_t next = -1;  // the step the replay's state would run next (-1: no state)
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t best = std::max<int64_t>(starts[i], 0);
    if (next < 0 || next > steps[i] || best > next) ++c.loads, next = best;
    c.replayed += steps[i] - next + 1;
    next = steps[i] + 1;
  }
  return c;
}

uint64_t FetchBytes(const Publication& pub, const std::vector<int64_t>& steps,
                    const std::string& manifest_path) {
  ChunkCount count(pub);
  for (const char* f :
       {"run/run.json", "run/recipe.toml", "run/trajectory.jsonl", "run/attestation.json"}) {
    count.Whole(f);
  }
  for (int64_t s : steps) {
    count.Whole(train::TracePath("run", s));
    count.Whole(train::TracePath("run", s) + ".sig");
  }
  for (int64_t c : StartingCheckpoints(steps, pub.checkpoints)) {
    if (c < 0) continue;
    for (const char* f : train::kCheckpointFiles) {
      count.Whole(BundleCheckpointPath(c, f));
    }
  }
  count.Whole(pub.manifest);
  const data::Manifest m = data::LoadManifest(manifest_path);
  for (const data::ShardRef* r : ManifestShards(m)) {  // header, index, keys and trailer
    const fetch::RemoteFile& f = pub.Get(BundleShardPath(*r));
    data::ShardExpectations header_only;
    header_only.verify_hash = false;
    const data::ShardReader sh(m.ShardPath(*r), header_only);
    count.Range(f, 0, data::kShardHeaderBytes);
    count.Range(f, sh.header().index_offset, f.size);
  }
  for (const ShardReads& r : TokenReadsOfSteps(m, ReplayedSteps(steps, pub.checkpoints))) {
    const fetch::RemoteFile& f = pub.Get(BundleShardPath(m.sources[r.source].shards[r.shard]));
    for (const auto& [b, e] : r.ranges) {
      count.Range(f, r.tokens_offset + b * r.token_bytes, r.tokens_offset + e * r.token_bytes);
    }
  }
  return count.Bytes();
}

}  // namespace trail::audit
