#include "fetch/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trail::fetch {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A directory on this machine holding the publication's files.
class DirectorySource : public Source {
 public:
  explicit DirectorySource(std::string root) : root_(std::move(root)) {}

  std::string Read(const std::string& path, uint64_t offset, uint64_t length,
                   uint64_t file_size) override {
    const int fd = Open(path);
    struct stat st {};
    ::fstat(fd, &st);
    if (static_cast<uint64_t>(st.st_size) != file_size) {
      ::close(fd);
      throw FetchError(Describe(path) + " holds " + std::to_string(st.st_size) +
                           " bytes, not the " + std::to_string(file_size) +
                           " the publication lists",
                       FetchError::Kind::kNotPublished);
    }
    std::string out(length, '\0');
    uint64_t done = 0;
    while (done < length) {
      const ssize_t n = ::pread(fd, out.data() + done, length - done, offset + done);
      if (n <= 0) {
        ::close(fd);
        throw FetchError(Describe(path) + ": read failed at byte " + std::to_string(offset + done));
      }
      done += static_cast<uint64_t>(n);
    }
    ::close(fd);
    return out;
  }

  std::string ReadSmall(const std::string& path, uint64_t max_bytes) override {
    const int fd = Open(path);
    struct stat st {};
    ::fstat(fd, &st);
    ::close(fd);
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      throw FetchError(Describe(path) + " is " + std::to_string(st.st_size) +
                       " bytes, beyond the limit of " + std::to_string(max_bytes));
    }
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    return Read(path, 0, size, size);
  }

  std::string Describe(const std::string& path) const override { return root_ + "/" + path; }

 private:
  int Open(const std::string& path) {
    const int fd = ::open(Describe(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw FetchError(Describe(path) + ": cannot open: " + std::strerror(errno));
    }
    return fd;
  }

  std::string root_;
};

}  // namespace

bool IsUrl(const std::string& location) {
  return StartsWith(location, "http://") || StartsWith(location, "https://") ||
         StartsWith(location, "file://");
}

std::unique_ptr<Source> OpenSource(const std::string& location, const SourceOptions& o) {
  std::string base = location;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (StartsWith(base, "http://") || StartsWith(base, "https://")) {
    return OpenHttpSource(base, o);
  }
  if (StartsWith(base, "file://")) {
    base = base.substr(7);
    if (base.empty() || base[0] != '/') {
      throw FetchError(location + ": a file:// URL needs an absolute path (file:///dir/bundle)");
    }
  } else if (base.find("://") != std::string::npos) {
    throw FetchError(location + ": unsupported URL scheme (use https://, http:// or file://)");
  }
  return std::make_unique<DirectorySource>(base);
}

}  // namespace trail::fetch
