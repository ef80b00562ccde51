// Reads a token shard through a read-only memory map. Opening validates the layout, checks the
// trailing SHA-256 over the whole file, and (when given) the expected content hash and tokenizer
// contract; every failure is a trail::Error that names the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/file_util.h"
#include "data/shard_format.h"

namespace trail::data {

struct ShardExpectations {
  std::optional<std::string> sha256;     // hex, as recorded in the manifest
  std::optional<ContractHash> contract;  // the manifest's tokenizer contract
  std::optional<uint32_t> token_bytes;
  bool verify_hash = true;  // rehash the file on open
};

class ShardReader {
 public:
  explicit ShardReader(const std::string& path, const ShardExpectations& expect = {});

  const std::string& path() const { return file_.path(); }
  const ShardHeader& header() const { return header_; }
  uint64_t num_docs() const { return header_.num_docs; }
  uint64_t num_tokens() const { return header_.num_tokens; }
  std::string sha256() const;  // hex of the trailing hash

  DocRecord doc(uint64_t i) const;
  uint32_t doc_length(uint64_t i) const;
  std::string_view doc_key(uint64_t i) const;
  // Token `j` of the shard's token array (documents back to back).
  uint32_t token(uint64_t j) const { return header_.token_bytes == 2 ? u16_[j] : u32_[j]; }
  // Copies tokens [begin, begin+n) of the token array into out as int32.
  void CopyTokens(uint64_t begin, uint64_t n, int32_t* out) const;

 private:
  MappedFile file_;
  ShardHeader header_;
  const uint8_t* index_ = nullptr;
  const char* keys_ = nullptr;
  const uint16_t* u16_ = nullptr;
  const uint32_t* u32_ = nullptr;
};

}  // namespace trail::data
