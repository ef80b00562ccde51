#include "core/task_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"

namespace trail {

FileRange TaskSlice(const std::vector<uint64_t>& file_bytes, uint32_t task, uint32_t tasks) {
  TRAIL_CHECK(tasks > 0 && task < tasks, "task ", task, " of ", tasks,
              ": tasks are numbered 0 to tasks - 1");
  unsigned __int128 total = 0;
  for (uint64_t b : file_bytes) total += b;
  const size_t n = file_bytes.size();
  FileRange r{0, 0};
  unsigned __int128 before = 0;
  for (size_t j = 0; j < n; ++j) {
    // Owner of file j: the midpoint's share, (2·before + bytes)·tasks / (2·total), monotone in j.
    const uint32_t owner =
        total == 0 ? static_cast<uint32_t>(j * tasks / n)
                   : static_cast<uint32_t>(std::min<unsigned __int128>(
                         tasks - 1, (2 * before + file_bytes[j]) * tasks / (2 * total)));
    before += file_bytes[j];
    if (owner < task) r.begin = static_cast<uint32_t>(j + 1);
    if (owner <= task) r.end = static_cast<uint32_t>(j + 1);
  }
  r.end = std::max(r.begin, r.end);
  return r;
}

std::string TaskName(uint32_t task) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "task-%05u", task);
  return buf;
}

std::vector<uint64_t> InputFileSizes(const std::vector<std::string>& paths) {
  std::vector<uint64_t> bytes;
  for (const std::string& p : paths) {
    TRAIL_CHECK(std::filesystem::exists(p), "input file ", p, " does not exist");
    bytes.push_back(std::filesystem::file_size(p));
  }
  return bytes;
}

std::string ProblemLines(const std::vector<std::string>& problems) {
  std::string lines;
  for (size_t i = 0; i < problems.size() && i < 20; ++i) lines += "\n  " + problems[i];
  if (problems.size() > 20)
    lines += "\n  ... and " + std::to_string(problems.size() - 20) + " more";
  return lines;
}

TaskLock::TaskLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  TRAIL_CHECK(fd_ >= 0, path, ": cannot open the task's lock file: ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    TRAIL_FAIL("this task is running in another process (", path,
               " is locked); wait for it to end, or end it, then run the task again");
  }
}

TaskLock::~TaskLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

std::string JsonSha256(const nlohmann::ordered_json& j) {
  const std::string s = j.dump();
  return ToHex(Sha256({reinterpret_cast<const uint8_t*>(s.data()), s.size()}));
}

void WriteSealedManifest(const std::string& path, nlohmann::ordered_json manifest) {
  manifest.erase("manifest_sha256");
  manifest["manifest_sha256"] = JsonSha256(manifest);
  WriteFileAtomic(path, manifest.dump(2) + "\n");
}

nlohmann::ordered_json ReadSealedManifest(const std::string& path, uint64_t max_bytes) {
  namespace fs = std::filesystem;
  try {
    if (!fs::exists(path) || fs::file_size(path) > max_bytes) return nullptr;
    nlohmann::ordered_json m = nlohmann::ordered_json::parse(ReadFileToString(path));
    if (!m.is_object() || !m.contains("manifest_sha256")) return nullptr;
    const std::string claimed = m.at("manifest_sha256");
    m.erase("manifest_sha256");
    return JsonSha256(m) == claimed ? m : nlohmann::ordered_json(nullptr);
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace trail
