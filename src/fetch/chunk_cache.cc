#include "fetch/chunk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "core/file_util.h"
#include "core/hash.h"

namespace trail::fetch {
namespace {

namespace fs = std::filesystem;

// Largest request: runs of missing chunks are fetched this many bytes at a time at most.
constexpr uint64_t kMaxRequestBytes = 8u << 20;

std::string HexSha256(std::string_view bytes) {
  return ToHex(Sha256({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// n bytes at `at` of fd into out; false when the file holds fewer.
bool ReadAt(int fd, uint64_t at, uint64_t n, std::string& out) {
  out.resize(n);
  uint64_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(at + done));
    if (r <= 0) return false;
    done += static_cast<uint64_t>(r);
  }
  return true;
}

// A relative path without empty, "." or ".." parts (what an index record may name).
bool InsideRelative(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == ".." || part == "." || part.empty()) return false;
  }
  return true;
}

}  // namespace

// A file of this publication and its chunk marks, locked for this process while open.
class ChunkCache::Object {
 public:
  Object(const std::string& data, const std::string& marks, const RemoteFile& f) : f_(f) {
    std::error_code ec;
    fs::create_directories(fs::path(data).parent_path(), ec);
    fs::create_directories(fs::path(marks).parent_path(), ec);
    marks_fd_ = ::open(marks.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    data_fd_ = ::open(data.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (marks_fd_ < 0 || data_fd_ < 0 || ::flock(marks_fd_, LOCK_EX) != 0 ||
        ::ftruncate(data_fd_, static_cast<off_t>(f.size)) != 0) {
      throw FetchError(data + ": cannot use the cache file: " + std::strerror(errno));
    }
    marks_.assign(f.num_chunks(), '0');  // what the marks file does not hold is missing
    if (::pread(marks_fd_, marks_.data(), marks_.size(), 0) < 0) marks_.assign(marks_.size(), '0');
  }
  ~Object() {
    ::close(data_fd_);
    ::close(marks_fd_);  // releases the lock
  }

  bool Has(uint64_t chunk) const { return marks_[chunk] == '1'; }

  // Chunk c's bytes as the file holds them now.
  std::string Read(uint64_t c) const {
    std::string out;
    if (!ReadAt(data_fd_, f_.ChunkBegin(c), f_.ChunkEnd(c) - f_.ChunkBegin(c), out)) out.clear();
    return out;
  }

  void Mark(uint64_t first, uint64_t n, char mark) {
    for (uint64_t c = first; c < first + n; ++c) marks_[c] = mark;
    if (::pwrite(marks_fd_, marks_.data() + first, n, static_cast<off_t>(first)) !=
        static_cast<ssize_t>(n)) {
      throw FetchError("cannot write the cache's chunk marks: " +
                       std::string(std::strerror(errno)));
    }
  }

  // Writes verified chunks [first, first + n) from `bytes`, syncs them, then marks them.
  void Store(uint64_t first, uint64_t n, const std::string& bytes) {
    const uint64_t at = f_.ChunkBegin(first);
    if (::pwrite(data_fd_, bytes.data(), bytes.size(), static_cast<off_t>(at)) !=
            static_cast<ssize_t>(bytes.size()) ||
        ::fdatasync(data_fd_) != 0) {
      throw FetchError("cannot write the cache: " + std::string(std::strerror(errno)));
    }
    Mark(first, n, '1');
  }

 private:
  const RemoteFile& f_;
  int marks_fd_ = -1, data_fd_ = -1;
  std::string marks_;
};

// Copies of a file with the same SHA-256 in other publications' files (sha256/<sha>/<root>
// records), opened read-only. Their bytes are candidates only: Find() returns bytes that hash
// to the chunk hash asked for, whoever wrote them.
class ChunkCache::Donors {
 public:
  Donors(const std::string& v2, const std::string& root, const RemoteFile& f) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(v2 + "/sha256/" + f.sha256, ec)) {
      const std::string other = e.path().filename().string();
      if (other == root || !IsHex64(other)) continue;
      const std::string record = ReadRecord(e.path().string());
      uint64_t chunk_bytes = 0;
      char path[4097] = {0};
      if (std::sscanf(record.c_str(), "%llu %4096s",
                      reinterpret_cast<unsigned long long*>(&chunk_bytes), path) != 2 ||
          chunk_bytes < 4096 || !InsideRelative(path)) {
        continue;
      }
      const std::string base = v2 + "/roots/" + other;
      Donor d{::open((base + "/files/" + path).c_str(), O_RDONLY | O_CLOEXEC),
              ::open((base + "/have/" + path).c_str(), O_RDONLY | O_CLOEXEC), chunk_bytes};
      if (d.data_fd >= 0 && d.marks_fd >= 0) {
        donors_.push_back(d);
      } else {
        Close(d);
      }
    }
  }
  ~Donors() {
    for (Donor& d : donors_) Close(d);
  }

  // Bytes [a, b) from a copy whose marks cover them and that hash to `want`; "" when none.
  std::string Find(uint64_t a, uint64_t b, const std::string& want) const {
    std::string marks, bytes;
    for (const Donor& d : donors_) {
      const uint64_t first = a / d.chunk_bytes, last = (b - 1) / d.chunk_bytes;
      if (!ReadAt(d.marks_fd, first, last - first + 1, marks) ||
          marks.find_first_not_of('1') != std::string::npos) {
        continue;
      }
      if (ReadAt(d.data_fd, a, b - a, bytes) && HexSha256(bytes) == want) return bytes;
    }
    return "";
  }

 private:
  struct Donor {
    int data_fd, marks_fd;
    uint64_t chunk_bytes;
  };
  static void Close(const Donor& d) {
    if (d.data_fd >= 0) ::close(d.data_fd);
    if (d.marks_fd >= 0) ::close(d.marks_fd);
  }
  static std::string ReadRecord(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string out;
    if (fd >= 0) {
      out.resize(4200);
      const ssize_t n = ::read(fd, out.data(), out.size());
      out.resize(n > 0 ? static_cast<size_t>(n) : 0);
      ::close(fd);
    }
    return out;
  }
  std::vector<Donor> donors_;
};

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

ChunkCache::ChunkCache(std::string dir, std::string root, Source& source, Progress& progress)
    : dir_(std::move(dir)), root_(std::move(root)), source_(source), progress_(progress) {
  if (!IsHex64(root_))
    throw FetchError("the cache is keyed by a publication root of 64 hex digits");
  std::error_code ec;
  fs::create_directories(files_dir(), ec);
  if (ec) throw FetchError(dir_ + ": cannot create the cache: " + ec.message());
}

std::string ChunkCache::files_dir() const { return dir_ + "/v2/roots/" + root_ + "/files"; }

std::string ChunkCache::DataPath(const RemoteFile& f) const { return files_dir() + "/" + f.path; }

std::string ChunkCache::MarksPath(const RemoteFile& f) const {
  return dir_ + "/v2/roots/" + root_ + "/have/" + f.path;
}

// Records where this publication keeps a file of f's SHA-256, for other publications to reuse.
void ChunkCache::Index(const RemoteFile& f) const {
  const std::string record = dir_ + "/v2/sha256/" + f.sha256 + "/" + root_;
  std::error_code ec;
  if (fs::exists(record, ec)) return;
  fs::create_directories(fs::path(record).parent_path(), ec);
  WriteFileAtomic(record, std::to_string(f.chunk_bytes) + " " + f.path + "\n");
}

uint64_t ChunkCache::MissingBytes(const RemoteFile& f, uint64_t begin, uint64_t end) {
  const auto [first, last] = f.ChunksOf(begin, end);
  if (first == last) return 0;
  const Object o(DataPath(f), MarksPath(f), f);
  uint64_t missing = 0;
  for (uint64_t c = first; c < last; ++c) {
    if (!o.Has(c)) missing += f.ChunkEnd(c) - f.ChunkBegin(c);
  }
  return missing;
}

std::string ChunkCache::Ensure(const RemoteFile& f, uint64_t begin, uint64_t end) {
  const std::string path = DataPath(f);
  const auto [first, end_chunk] = f.ChunksOf(begin, end);
  if (first == end_chunk) return path;
  Object o(path, MarksPath(f), f);
  Index(f);
  std::unique_ptr<Donors> donors;  // opened when a chunk is first missing
  std::vector<bool> need(end_chunk - first, false);
  for (uint64_t c = first; c < end_chunk; ++c) {
    if (verified_.count({f.path, c})) continue;
    const uint64_t a = f.ChunkBegin(c), b = f.ChunkEnd(c);
    if (o.Has(c)) {
      if (HexSha256(o.Read(c)) == f.chunks[c]) {  // verified at this use
        verified_.insert({f.path, c});
        continue;
      }
      o.Mark(c, 1, '0');  // not the published bytes: dropped, fetched again
      dropped_ += b - a;
    }
    if (!donors) donors = std::make_unique<Donors>(dir_ + "/v2", root_, f);
    const std::string bytes = donors->Find(a, b, f.chunks[c]);
    if (!bytes.empty()) {
      o.Store(c, 1, bytes);
      verified_.insert({f.path, c});
      reused_ += bytes.size();
      progress_.Done(bytes.size());
      continue;
    }
    need[c - first] = true;
  }
  for (uint64_t c = first; c < end_chunk;) {
    if (!need[c - first]) {
      ++c;
      continue;
    }
    uint64_t n = 1;  // a run of missing chunks, one request
    while (c + n < end_chunk && need[c + n - first] &&
           f.ChunkEnd(c + n) - f.ChunkBegin(c) <= kMaxRequestBytes) {
      ++n;
    }
    const uint64_t a = f.ChunkBegin(c), b = f.ChunkEnd(c + n - 1);
    const std::string bytes = source_.Read(f.path, a, b - a, f.size);
    for (uint64_t k = c; k < c + n; ++k) {
      const std::string problem = f.CheckChunk(
          k, std::string_view(bytes).substr(f.ChunkBegin(k) - a, f.ChunkEnd(k) - f.ChunkBegin(k)));
      if (!problem.empty()) {
        throw FetchError(source_.Describe(f.path) + ": " + problem,
                         FetchError::Kind::kNotPublished);
      }
    }
    o.Store(c, n, bytes);
    for (uint64_t k = c; k < c + n; ++k) verified_.insert({f.path, k});
    fetched_ += bytes.size();
    progress_.Done(bytes.size());
    c += n;
  }
  return path;
}

std::string ChunkCache::EnsureWhole(const RemoteFile& f) {
  const std::string path = Ensure(f, 0, f.size);
  if (f.size == 0) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    ::close(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  }
  const std::string got = ToHex(Sha256OfFile(path));
  if (got != f.sha256) {
    throw FetchError(source_.Describe(f.path) + ": SHA-256 " + got + " is not the published " +
                         f.sha256 + " although every chunk matched (a publication whose chunk " +
                         "and file hashes disagree)",
                     FetchError::Kind::kNotPublished);
  }
  return path;
}

}  // namespace trail::fetch
