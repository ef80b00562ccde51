// Where a publication's bytes come from: a local directory (a path or a file:// URL) or an
// HTTP(S) server (libcurl: http:// and https:// URLs, e.g. a Hugging Face repository's
// resolve/main/ prefix or a bucket's public prefix). A source reads byte ranges of files named
// relative to its root and trusts nothing it is told: the caller says how many bytes the range
// must hold, and a source returns exactly those or throws FetchError.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fetch/remote_file.h"

namespace trail::fetch {

struct SourceOptions {
  int connect_timeout_s = 10;
  int stall_timeout_s = 30;  // abort a transfer that moves less than 1 KB/s for this long
  int retries = 4;           // after the first try; waits 0.5 s, 1 s, 2 s, 4 s between them
  double first_backoff_s = 0.5;
};

class Source {
 public:
  virtual ~Source() = default;
  // Bytes [offset, offset + length) of `path`, a file of `file_size` bytes.
  virtual std::string Read(const std::string& path, uint64_t offset, uint64_t length,
                           uint64_t file_size) = 0;
  // A whole file of unknown size, refused beyond max_bytes (publication.json).
  virtual std::string ReadSmall(const std::string& path, uint64_t max_bytes) = 0;
  virtual std::string Describe(const std::string& path) const = 0;  // its URL, for messages
};

// True for http://, https:// and file:// locations.
bool IsUrl(const std::string& location);
// A source for a URL or a local directory path; throws FetchError for an unsupported scheme.
std::unique_ptr<Source> OpenSource(const std::string& location, const SourceOptions& o = {});
// The HTTP(S) source (fetch/http_source.cc; FetchError when this build has no libcurl).
std::unique_ptr<Source> OpenHttpSource(const std::string& base_url, const SourceOptions& o);

}  // namespace trail::fetch
