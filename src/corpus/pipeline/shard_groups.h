// The corpus build's output shards: kept documents, one dolma JSON line each, grouped by
// (split, source) in key order, shard_documents lines per shard. Lines are appended to one
// scratch file per group under the work directory while the final pass runs; Compress() then
// writes <out>/<split>/<source>-NNNNN.jsonl.zst, one zstd frame per shard (level 3, a fixed
// 1 MiB window, the size pledged in the frame header), so the bytes never depend on the memory
// budget or the thread count.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/spill.h"
#include "core/thread_pool.h"
#include "corpus/dedup/near_dedup.h"

namespace trail::corpus {

struct ShardPlace {
  std::string shard;  // "<split>/<source>-NNNNN.jsonl.zst"
  uint64_t line = 0;  // 1-based
};

class ShardGroups {
 public:
  ShardGroups(std::string work, uint64_t shard_documents, std::vector<std::string> source_names);
  ~ShardGroups();

  // Appends a kept document's line (with its newline) to its group; says where it will be.
  ShardPlace Append(Split split, uint32_t source, const std::string& line);
  // Compresses every group into its shards under out_dir, each shard an independent frame of
  // its byte range of the group file, on the pool; returns how many were written.
  uint64_t Compress(const std::string& out_dir, ThreadPool& pool);

 private:
  struct Group {
    std::unique_ptr<SpillWriter> file;
    uint64_t count = 0;
    std::vector<uint64_t> shard_bytes;
  };
  std::string GroupPath(int split, uint32_t source) const;
  std::string ShardName(int split, uint32_t source, uint64_t shard) const;

  std::string work_;
  uint64_t shard_documents_;
  std::vector<std::string> sources_;
  std::map<std::pair<int, uint32_t>, Group> groups_;  // (split, source)
};

}  // namespace trail::corpus
