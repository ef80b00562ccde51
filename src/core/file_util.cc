#include "core/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace trail {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

void FsyncDirOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  TRAIL_CHECK(fd >= 0, path, ": cannot open: ", ErrnoText());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = ErrnoText();
    ::close(fd);
    TRAIL_FAIL(path, ": cannot stat: ", why);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const std::string why = ErrnoText();
      ::close(fd);
      TRAIL_FAIL(path, ": cannot map: ", why);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() { Release(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)), data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    Release();
    path_ = std::move(o.path_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void MappedFile::Release() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp-" + std::to_string(::getpid())) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  TRAIL_CHECK(fd_ >= 0, tmp_, ": cannot create: ", ErrnoText());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::Write(const void* data, size_t n) { WriteAt(size_, data, n); }

void AtomicFile::WriteAt(uint64_t offset, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    TRAIL_CHECK(w > 0, tmp_, ": write failed: ", ErrnoText());
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
    if (offset > size_) size_ = offset;
  }
}

void AtomicFile::Commit() {
  TRAIL_CHECK(!committed_, tmp_, ": committed twice");
  TRAIL_CHECK(::fsync(fd_) == 0, tmp_, ": fsync failed: ", ErrnoText());
  ::close(fd_);
  fd_ = -1;
  TRAIL_CHECK(::rename(tmp_.c_str(), path_.c_str()) == 0, "cannot rename ", tmp_, " to ", path_,
              ": ", ErrnoText());
  committed_ = true;
  FsyncDirOf(path_);
}

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  TRAIL_CHECK(::mkdtemp(tmpl.data()) != nullptr, tmpl,
              ": cannot create a temporary directory: ", ErrnoText());
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFileAtomic(const std::string& path, const std::string& contents) {
  AtomicFile f(path);
  f.Write(contents.data(), contents.size());
  f.Commit();
}

// Sized from fstat and read straight into the string (a stream copy made the bytes twice); a
// file that grows or shrinks while it is read is read to its actual end.
std::string ReadFileToString(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TRAIL_CHECK(fd >= 0, path, ": cannot open: ", ErrnoText());
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  for (;;) {
    // At the expected end, one more byte says whether there is more (the file grew, or it is
    // not a regular file) before the string grows.
    char probe = 0;
    const bool at_end = got == out.size();
    const ssize_t n =
        at_end ? ::read(fd, &probe, 1) : ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      TRAIL_CHECK(n == 0, path, ": read failed: ", ErrnoText());
      break;
    }
    if (at_end) {
      out.resize(std::max<size_t>(2 * out.size(), 1 << 16));
      out[got] = probe;
    }
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace trail
