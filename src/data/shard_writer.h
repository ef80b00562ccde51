// Writes a token shard (shard_format.h) deterministically and atomically: documents are
// appended in call order, the file appears under its name only when Finish() succeeds.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "data/shard_format.h"

namespace trail::data {

struct ShardWriterOptions {
  uint32_t token_bytes = 2;  // 2 (uint16 ids) or 4 (uint32 ids)
  uint32_t vocab_size = 0;   // every id must be < vocab_size; ≤ 65536 for 2-byte tokens
  ContractHash contract{};   // the tokenizer contract these ids were produced under
};

// What a finished shard is: the manifest records these.
struct ShardSummary {
  std::string path;
  std::string sha256;  // hex of the trailing content hash
  uint64_t num_docs = 0, num_tokens = 0;
};

class ShardWriter {
 public:
  ShardWriter(std::string path, const ShardWriterOptions& opt);
  ~ShardWriter();

  // Appends one document. `key` is its stable lineage key (unique within the shard, UTF-8,
  // non-empty); `domain` its source/domain id. Documents must be non-empty.
  void Add(const std::string& key, uint32_t domain, std::span<const uint32_t> tokens);
  ShardSummary Finish();

 private:
  void FlushTokens();

  std::string path_;
  ShardWriterOptions opt_;
  AtomicFile file_;
  std::vector<uint8_t> token_buf_;
  std::vector<DocRecord> docs_;
  std::string keys_;
  uint64_t num_tokens_ = 0;
  bool finished_ = false;
};

}  // namespace trail::data
