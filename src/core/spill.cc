#include "core/spill.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/le_bytes.h"

namespace trail {
namespace {

std::string Errno() { return std::strerror(errno); }

uint64_t FileSize(int fd, const std::string& path) {
  struct stat st;
  TRAIL_CHECK(::fstat(fd, &st) == 0, path, ": cannot stat: ", Errno());
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace

SpillWriter::SpillWriter(const std::string& path, size_t buffer_bytes)
    : path_(path), cap_(std::max<size_t>(4096, buffer_bytes)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  TRAIL_CHECK(fd_ >= 0, path, ": cannot create: ", Errno());
  buf_.reserve(cap_);
}

SpillWriter::~SpillWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillWriter::Flush() {
  size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TRAIL_CHECK(n > 0, path_, ": write failed: ", Errno());
    done += static_cast<size_t>(n);
  }
  written_ += buf_.size();
  buf_.clear();
}

void SpillWriter::Append(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  if (buf_.size() + n > cap_) Flush();
  if (n >= cap_) {  // large writes go straight through
    buf_.assign(p, n);
    Flush();
    return;
  }
  buf_.append(p, n);
}

void SpillWriter::AppendRecord(std::string_view record) {
  uint8_t len[8];
  PutU64(len, record.size());
  Append(len, 8);
  Append(record.data(), record.size());
}

void SpillWriter::Close(bool sync) {
  if (fd_ < 0) return;
  Flush();
  if (sync) TRAIL_CHECK(::fsync(fd_) == 0, path_, ": fsync failed: ", Errno());
  ::close(fd_);
  fd_ = -1;
}

SpillReader::SpillReader(const std::string& path, size_t buffer_bytes)
    : path_(path), cap_(std::max<size_t>(4096, buffer_bytes)) {
  buf_.reset(new char[cap_]);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TRAIL_CHECK(fd_ >= 0, path, ": cannot open: ", Errno());
  size_ = FileSize(fd_, path);
}

SpillReader::~SpillReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool SpillReader::Fill() {
  std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  for (;;) {
    const ssize_t n = ::read(fd_, buf_.get() + end_, cap_ - end_);
    if (n < 0 && errno == EINTR) continue;
    TRAIL_CHECK(n >= 0, path_, ": read failed: ", Errno());
    end_ += static_cast<size_t>(n);
    return n > 0;
  }
}

bool SpillReader::Read(void* out, size_t n) {
  char* o = static_cast<char*>(out);
  size_t got = 0;
  while (got < n) {
    if (pos_ == end_ && !Fill()) {
      TRAIL_CHECK(got == 0, path_, ": ends inside a record at byte ", offset_);
      return false;
    }
    const size_t take = std::min(n - got, end_ - pos_);
    std::memcpy(o + got, buf_.get() + pos_, take);
    pos_ += take;
    got += take;
    offset_ += take;
  }
  return true;
}

bool SpillReader::ReadRecord(std::string& record) {
  uint8_t len[8];
  if (!Read(len, 8)) return false;
  const uint64_t n = GetU64(len);
  TRAIL_CHECK(n <= size_ - std::min(size_, offset_), path_, ": a record of ", n, " bytes at byte ",
              offset_ - 8, " runs past the end of the file (", size_, " bytes)");
  record.resize(n);
  TRAIL_CHECK(n == 0 || Read(record.data(), n), path_, ": ends inside a record");
  return true;
}

PositionalReader::PositionalReader(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TRAIL_CHECK(fd_ >= 0, path, ": cannot open: ", Errno());
  size_ = FileSize(fd_, path);
}

PositionalReader::~PositionalReader() {
  if (fd_ >= 0) ::close(fd_);
}

void PositionalReader::ReadAt(uint64_t offset, void* out, size_t n) const {
  char* o = static_cast<char*>(out);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, o + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    TRAIL_CHECK(r > 0, path_, ": short read at byte ", offset + got);
    got += static_cast<size_t>(r);
  }
}

std::string PositionalReader::ReadRecordAt(uint64_t offset) const {
  uint8_t len[8];
  ReadAt(offset, len, 8);
  const uint64_t n = GetU64(len);
  TRAIL_CHECK(size_ >= 8 && offset <= size_ - 8 && n <= size_ - 8 - offset, path_, ": a record of ",
              n, " bytes at byte ", offset, " runs past the end of the file (", size_, " bytes)");
  std::string r(n, '\0');
  if (!r.empty()) ReadAt(offset + 8, r.data(), r.size());
  return r;
}

}  // namespace trail
