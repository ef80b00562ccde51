// A local cache of published files, shared between audits (`--cache DIR`; docs/audit.md, "The
// cache"). Its invariant: **a cached byte is used only after this process has checked it
// against the chunk hash of the publication being audited.** Nothing is trusted because it was
// trusted before, and nothing written while auditing one publication can change what is read
// for another.
//
// Layout (version 2: DIR/v2/; anything else under DIR, such as an older layout, is never read):
//   roots/<root>/files/<path>  a sparse file of the published size. <root> is the publication's
//                              root (the SHA-256 of its signed statement, audit/publication.h):
//                              only bytes verified against that statement's chunk hashes are
//                              ever written there, so every writer writes the same bytes
//   roots/<root>/have/<path>   one byte per chunk of that publication's chunk size: '1' once the
//                              chunk's bytes were written, synced and verified
//   sha256/<file sha>/<root>   "<chunk_bytes> <path>\n": a copy of a file with that SHA-256 in
//                              another publication's files, from which bytes may be reused
// Ensure() takes each chunk of a range in turn: a marked chunk is read back and hashed (a
// mismatch drops its mark: it is fetched again); a missing one is copied from the same byte
// range of another publication's copy of the file when those bytes hash to this publication's
// chunk hash; else it is fetched (a run of missing chunks in one request), verified, written,
// synced and marked. A crash or a dropped connection loses only the chunks in flight.
// Processes that share a cache take turns on a file (flock on its have/ file).
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "fetch/remote_file.h"
#include "fetch/source.h"

namespace trail::fetch {

// Progress in bytes with a rate and an ETA, on stderr when it is a terminal, at most twice a
// second (a log gets the caller's summary instead).
class Progress {
 public:
  explicit Progress(bool quiet);
  void Plan(uint64_t bytes) { total_ += bytes; }
  void Done(uint64_t bytes);
  void Finish();

 private:
  bool quiet_;
  uint64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(),
                                        last_ = start_;  // the first line after 0.5 s: a rate
  bool printed_ = false;
};

class ChunkCache {
 public:
  // The cache in `dir` for the publication whose root is `root` (64 hex digits); every file
  // asked for belongs to that publication.
  ChunkCache(std::string dir, std::string root, Source& source, Progress& progress);

  // The bytes of [begin, end) of f whose chunks are not marked (whole chunks): an upper bound of
  // what Ensure() downloads, for progress.
  uint64_t MissingBytes(const RemoteFile& f, uint64_t begin, uint64_t end);
  // Makes the chunks covering [begin, end) of f present and verified; returns the local path
  // of the (possibly sparse) file. Throws FetchError naming the file and byte range of any
  // chunk whose bytes are not the published ones (kind kNotPublished), or that cannot be
  // fetched (kUnavailable).
  std::string Ensure(const RemoteFile& f, uint64_t begin, uint64_t end);
  // Every chunk, and then the whole file's SHA-256.
  std::string EnsureWhole(const RemoteFile& f);

  // The folder whose files are the publication's paths (roots/<root>/files).
  std::string files_dir() const;
  uint64_t fetched_bytes() const { return fetched_; }  // downloaded by this cache object
  uint64_t reused_bytes() const { return reused_; }    // copied from another publication's copy
  uint64_t dropped_bytes() const { return dropped_; }  // marked, but not the published bytes

 private:
  class Object;
  class Donors;
  std::string DataPath(const RemoteFile& f) const;   // roots/<root>/files/<path>
  std::string MarksPath(const RemoteFile& f) const;  // roots/<root>/have/<path>
  void Index(const RemoteFile& f) const;

  std::string dir_, root_;
  Source& source_;
  Progress& progress_;
  uint64_t fetched_ = 0, reused_ = 0, dropped_ = 0;
  // Chunks this object verified (fetched, reused or read back): not hashed again.
  std::set<std::pair<std::string, uint64_t>> verified_;
};

}  // namespace trail::fetch
