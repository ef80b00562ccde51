// A local cache of published files, shared between audits (`--cache DIR`). Each file is kept
// once, under objects/<sha256>: a sparse file of its published size, beside
// objects/<sha256>.have, one byte per chunk ('1' once that chunk's bytes are written, synced
// and verified against the chunk's published SHA-256). A crash or a dropped connection loses
// only the chunks in flight; the next audit fetches only the chunks not marked. Processes that
// share a cache take turns on a file (flock on its .have).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

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
  ChunkCache(std::string dir, Source& source, Progress& progress);

  // The bytes of [begin, end) of f that are not yet in the cache (whole chunks).
  uint64_t MissingBytes(const RemoteFile& f, uint64_t begin, uint64_t end);
  // Makes the chunks covering [begin, end) of f present and verified; returns the local path
  // of the (possibly sparse) file. Throws FetchError naming the file and byte range of any
  // chunk whose bytes are not the published ones.
  std::string Ensure(const RemoteFile& f, uint64_t begin, uint64_t end);
  // Every chunk, and then the whole file's SHA-256.
  std::string EnsureWhole(const RemoteFile& f);

  uint64_t fetched_bytes() const { return fetched_; }  // downloaded by this cache object
  const std::string& dir() const { return dir_; }

 private:
  std::string ObjectPath(const RemoteFile& f) const;

  std::string dir_;
  Source& source_;
  Progress& progress_;
  uint64_t fetched_ = 0;
};

}  // namespace trail::fetch
