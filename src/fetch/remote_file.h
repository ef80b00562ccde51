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

// Thrown when a publication's bytes cannot be used, in two kinds an auditor acts on differently
// (docs/audit.md, "Exit status"):
//   kUnavailable   the bytes could not be had: a server that is down, a transfer that fails
//                  after every retry, an HTTP error, an answer that is not the range asked for
//                  (a wrong Content-Range, more or fewer bytes than asked). Retry, or another
//                  mirror.
//   kNotPublished  bytes were served as asked but are not the published ones: a chunk or a
//                  whole file whose SHA-256 is not the publication's, a file of another size.
//                  The source serves other bytes than the publication lists; nothing of them
//                  is kept.
// The message names the file (its URL) and, for a chunk, its byte range and index.
class FetchError : public Error {
 public:
  enum class Kind { kUnavailable, kNotPublished };
  explicit FetchError(const std::string& message, Kind kind = Kind::kUnavailable)
      : Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace trail::fetch
