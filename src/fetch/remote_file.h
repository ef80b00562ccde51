// A file whose bytes are known by hash before they are fetched (a publication lists them,
// audit/publication.h): its size, SHA-256, and the SHA-256 of every chunk_bytes piece, so a
// reader that fetches a byte range verifies the chunks it covers without the rest of the file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace trail::fetch {

struct RemoteFile {
  std::string path;  // relative to the publication's root, '/'-separated
  uint64_t size = 0;
  std::string sha256;  // hex, of the whole file
  uint64_t chunk_bytes = 0;
  std::vector<std::string> chunks;  // hex; ceil(size / chunk_bytes) of them (none when empty)

  uint64_t num_chunks() const { return chunks.size(); }
  uint64_t ChunkBegin(uint64_t i) const { return i * chunk_bytes; }
  uint64_t ChunkEnd(uint64_t i) const { return std::min(size, (i + 1) * chunk_bytes); }
  // The chunks [first, last) holding bytes [begin, end) of the file (end clamped to its size;
  // first == last when the range is empty).
  std::pair<uint64_t, uint64_t> ChunksOf(uint64_t begin, uint64_t end) const {
    end = std::min(end, size);
    if (begin >= end) return {0, 0};
    return {begin / chunk_bytes, (end - 1) / chunk_bytes + 1};
  }
  // "" when `bytes` are chunk i's published bytes; else what is wrong, naming the byte range.
  std::string CheckChunk(uint64_t i, std::string_view bytes) const;
};

// Thrown when bytes cannot be fetched or are not the published ones: a server that is down,
// a transfer that fails after every retry, an answer that is not the range asked for, bytes
// whose hash is not the publication's. The CLI exits with its own code for it (docs/audit.md).
class FetchError : public Error {
 public:
  explicit FetchError(const std::string& message) : Error(message) {}
};

}  // namespace trail::fetch
