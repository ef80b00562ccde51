// Files the way trail's writers need them: atomic replacement and read-only memory maps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trail {

// A read-only memory map of a whole file. Errors (missing file, unreadable) name the path.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void Release();
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Writes to `path + ".tmp-<pid>"`; Commit() flushes it to disk and renames it over `path`, so a
// crash leaves either the old file or the new one, never a torn one. Dropping an uncommitted
// file removes the temporary.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(const void* data, size_t n);
  void WriteAt(uint64_t offset, const void* data, size_t n);  // overwrite already-written bytes
  uint64_t size() const { return size_; }
  const std::string& temp_path() const { return tmp_; }
  void Commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool committed_ = false;
};

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "trail");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes a whole small file atomically.
void WriteFileAtomic(const std::string& path, const std::string& contents);
std::string ReadFileToString(const std::string& path);

}  // namespace trail
