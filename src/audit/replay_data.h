// The data a replay reads (docs/audit.md, "What an audit reads"), and which steps read a shard
// whose copy differs from the data the run trained on.
//
// The manifest given (or the one run.json names) is used as it is when its SHA-256 is the run's.
// Otherwise, when the run's own manifest is at hand (<run>/manifest.json, or the path run.json
// names, with the run's SHA-256), the copy is compared with it entry by entry: a copy that
// differs only in shard entries' SHA-256 is replayed through a manifest with the run's bytes
// whose shards are the copy's files, those shards are named, and no step that reads one of
// them is vouched for. A copy that differs anywhere else (other shards, counts, sources, the
// stream) describes other data: no step can be placed, and it is refused naming what differs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "audit/published_run.h"
#include "core/file_util.h"
#include "data/batch_schedule.h"
#include "data/stream.h"

namespace trail::audit {

struct ReplayData {
  std::string manifest;                          // to replay with: its SHA-256 is the run's
  std::map<std::string, std::string> differing;  // shard path -> what differs
  std::shared_ptr<TempDir> staging;              // holds `manifest` when it was built here

  std::set<std::string> differing_paths() const;
};

ReplayData DataForReplay(const PublishedRun& run, const std::string& given);

// Which shards of `differing` the windows of a step read: the canonical stream run over the
// step's windows with read logs (data/shard_reader.h), as the replay would read them.
class DifferingReads {
 public:
  DifferingReads(const std::string& manifest, const data::StreamOptions& shards,
                 const std::set<std::string>& differing);
  // The first differing shard that step reads, "" when it reads none.
  std::string ShardReadBy(int64_t step);

 private:
  data::CanonicalStream stream_;
  data::BatchSchedule schedule_;
  std::map<std::string, data::TokenReadLog> logs_;  // by shard path
  data::RawWindow raw_;
};

}  // namespace trail::audit
