// Reads a token shard through a read-only memory map. Opening validates the layout, checks the
// trailing SHA-256 over the whole file, and (when given) the expected content hash and tokenizer
// contract; every failure is a trail::Error that names the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/file_util.h"
#include "data/shard_format.h"

namespace trail::data {

struct ShardExpectations {
  std::optional<std::string> sha256;     // hex, as recorded in the manifest
  std::optional<ContractHash> contract;  // the manifest's tokenizer contract
  std::optional<uint32_t> token_bytes;
  bool verify_hash = true;  // rehash the file on open
};

// Decodes and checks the 128-byte header at p of a shard file of `size` bytes (the section
// offsets must add up to the size); ShardReader's first check, usable before the rest of the
// file is at hand.
ShardHeader ParseShardHeader(const uint8_t* p, uint64_t size, const std::string& path);

// Token ranges [begin, end) of the token array, as CopyTokens read them.
using TokenReadLog = std::vector<std::pair<uint64_t, uint64_t>>;

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
  // Every later CopyTokens appends its range to *log (nullptr: none, the default). Planning
  // which bytes of a remote shard a computation reads runs the computation with a log.
  void LogReadsTo(TokenReadLog* log) const { read_log_ = log; }

 private:
  MappedFile file_;
  ShardHeader header_;
  const uint8_t* index_ = nullptr;
  const char* keys_ = nullptr;
  const uint16_t* u16_ = nullptr;
  const uint32_t* u32_ = nullptr;
  mutable TokenReadLog* read_log_ = nullptr;
};

// A piece of the stream (docs/data.md §3.1): `bos` BOS marks (0 or 1), then `count` document
// tokens from index `first` of a shard's token array, then the EOS (when the piece has one).
struct PieceLayout {
  uint64_t first = 0, count = 0, bos = 0;
  int32_t bos_id = -1, eos_id = -1;
};
// Writes the piece's stream tokens [offset, offset + n) into out.
void CopyPieceTokens(const ShardReader& sh, const PieceLayout& p, uint64_t offset, uint64_t n,
                     int32_t* out);

}  // namespace trail::data
