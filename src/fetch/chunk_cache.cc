#include "fetch/chunk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/hash.h"

namespace trail::fetch {
namespace {

// Largest request: runs of missing chunks are fetched this many bytes at a time at most.
constexpr uint64_t kMaxRequestBytes = 8u << 20;

// An object file and its chunk marks, locked for this process while open.
class Object {
 public:
  Object(const std::string& path, const RemoteFile& f) : f_(f) {
    marks_fd_ = ::open((path + ".have").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    data_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (marks_fd_ < 0 || data_fd_ < 0 || ::flock(marks_fd_, LOCK_EX) != 0 ||
        ::ftruncate(data_fd_, static_cast<off_t>(f.size)) != 0) {
      throw FetchError(path + ": cannot use the cache file: " + std::strerror(errno));
    }
    marks_.assign(f.num_chunks(), '0');  // what the marks file does not hold is missing
    if (::pread(marks_fd_, marks_.data(), marks_.size(), 0) < 0) marks_.assign(marks_.size(), '0');
  }
  ~Object() {
    ::close(data_fd_);
    ::close(marks_fd_);  // releases the lock
  }

  bool Has(uint64_t chunk) const { return marks_[chunk] == '1'; }

  // Writes verified chunks [first, first + n) from `bytes`, syncs them, then marks them.
  void Store(uint64_t first, uint64_t n, const std::string& bytes) {
    const uint64_t at = f_.ChunkBegin(first);
    if (::pwrite(data_fd_, bytes.data(), bytes.size(), static_cast<off_t>(at)) !=
            static_cast<ssize_t>(bytes.size()) ||
        ::fdatasync(data_fd_) != 0) {
      throw FetchError("cannot write the cache: " + std::string(std::strerror(errno)));
    }
    for (uint64_t c = first; c < first + n; ++c) marks_[c] = '1';
    ::pwrite(marks_fd_, marks_.data() + first, n, static_cast<off_t>(first));
  }

 private:
  const RemoteFile& f_;
  int marks_fd_ = -1, data_fd_ = -1;
  std::string marks_;
};

}  // namespace

Progress::Progress(bool quiet) : quiet_(quiet || !::isatty(STDERR_FILENO)) {}

void Progress::Done(uint64_t bytes) {
  done_ += bytes;
  const auto now = std::chrono::steady_clock::now();
  if (quiet_ || now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  const double rate = s > 0 ? done_ / s : 0;
  const double eta = rate > 0 && total_ > done_ ? (total_ - done_) / rate : 0;
  std::fprintf(stderr, "\rfetch: %.1f of %.1f MB (%.0f%%), %.1f MB/s, ETA %.0f s   ", done_ / 1e6,
               total_ / 1e6, total_ ? 100.0 * done_ / total_ : 100.0, rate / 1e6, eta);
  printed_ = true;
}

void Progress::Finish() {
  if (printed_) std::fprintf(stderr, "\n");
  printed_ = false;
}

ChunkCache::ChunkCache(std::string dir, Source& source, Progress& progress)
    : dir_(std::move(dir)), source_(source), progress_(progress) {
  std::error_code ec;
  std::filesystem::create_directories(dir_ + "/objects", ec);
  if (ec) throw FetchError(dir_ + ": cannot create the cache: " + ec.message());
}

std::string ChunkCache::ObjectPath(const RemoteFile& f) const {
  return dir_ + "/objects/" + f.sha256;
}

uint64_t ChunkCache::MissingBytes(const RemoteFile& f, uint64_t begin, uint64_t end) {
  const auto [first, last] = f.ChunksOf(begin, end);
  if (first == last) return 0;
  const Object o(ObjectPath(f), f);
  uint64_t missing = 0;
  for (uint64_t c = first; c < last; ++c) {
    if (!o.Has(c)) missing += f.ChunkEnd(c) - f.ChunkBegin(c);
  }
  return missing;
}

std::string ChunkCache::Ensure(const RemoteFile& f, uint64_t begin, uint64_t end) {
  const std::string path = ObjectPath(f);
  const auto [first, end_chunk] = f.ChunksOf(begin, end);
  if (first == end_chunk) return path;
  Object o(path, f);
  const uint64_t last = end_chunk - 1;
  for (uint64_t c = first; c <= last;) {
    if (o.Has(c)) {
      ++c;
      continue;
    }
    uint64_t n = 1;  // a run of missing chunks, one request
    while (c + n <= last && !o.Has(c + n) &&
           f.ChunkEnd(c + n) - f.ChunkBegin(c) <= kMaxRequestBytes) {
      ++n;
    }
    const uint64_t a = f.ChunkBegin(c), b = f.ChunkEnd(c + n - 1);
    const std::string bytes = source_.Read(f.path, a, b - a, f.size);
    for (uint64_t k = c; k < c + n; ++k) {
      const std::string problem = f.CheckChunk(
          k, std::string_view(bytes).substr(f.ChunkBegin(k) - a, f.ChunkEnd(k) - f.ChunkBegin(k)));
      if (!problem.empty()) throw FetchError(source_.Describe(f.path) + ": " + problem);
    }
    o.Store(c, n, bytes);
    fetched_ += bytes.size();
    progress_.Done(bytes.size());
    c += n;
  }
  return path;
}

std::string ChunkCache::EnsureWhole(const RemoteFile& f) {
  const std::string path = Ensure(f, 0, f.size);
  if (f.size == 0) {
    ::close(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  }
  const std::string got = ToHex(Sha256OfFile(path));
  if (got != f.sha256) {
    throw FetchError(source_.Describe(f.path) + ": SHA-256 " + got + " is not the published " +
                     f.sha256 + " although every chunk matched (a publication whose chunk and " +
                     "file hashes disagree)");
  }
  return path;
}

}  // namespace trail::fetch
