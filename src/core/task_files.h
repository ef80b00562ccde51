// What every job split into "task i of N" shares (the corpus build, data tokenize): tasks are
// stateless processes that any scheduler runs (a Slurm job array, `xargs -P`), in any order and
// concurrently, each rerunnable alone, exchanging files through a shared directory.
//  - TaskSlice: which of the job's input files a task reads — contiguous in input order, so
//    tasks' outputs in task order are the outputs in input order.
//  - TaskLock: one process per task at a time.
//  - Sealed manifests: the JSON file a task writes last, which says it is complete. It carries
//    manifest_sha256 = SHA-256 of its compact JSON text (nlohmann's dump() without indentation)
//    with that field removed, so a truncated or edited manifest is told from an intact one.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trail {

// A range of input file indices [begin, end).
struct FileRange {
  uint32_t begin = 0, end = UINT32_MAX;
  bool contains(uint32_t i) const { return i >= begin && i < end; }
};

// The files of task `task` of `tasks`: each file goes to the task whose equal share of the
// input bytes holds the file's midpoint (by count when every file is empty), so slices are
// contiguous, balanced by bytes, and some are empty when there are more tasks than files.
// Throws unless task < tasks.
FileRange TaskSlice(const std::vector<uint64_t>& file_bytes, uint32_t task, uint32_t tasks);

// "task-00003": a task's directory name (five digits, more when needed).
std::string TaskName(uint32_t task);

// The sizes of a job's input files (what TaskSlice divides); throws naming a missing one.
std::vector<uint64_t> InputFileSizes(const std::vector<std::string>& paths);

// Problems found in a phase's tasks as the lines of an error: each on its own indented line,
// the first 20, then how many more.
std::string ProblemLines(const std::vector<std::string>& problems);

// An exclusive lock (flock) on `path`, created if missing, released when destroyed; throws,
// saying another process runs the task, when it is held.
class TaskLock {
 public:
  explicit TaskLock(const std::string& path);
  ~TaskLock();
  TaskLock(const TaskLock&) = delete;
  TaskLock& operator=(const TaskLock&) = delete;

 private:
  int fd_ = -1;
};

// Adds manifest_sha256 and writes the manifest atomically (fsynced, renamed).
void WriteSealedManifest(const std::string& path, nlohmann::ordered_json manifest);
// The manifest without manifest_sha256 when the file exists, is at most max_bytes, parses and
// its seal holds; null otherwise (missing, damaged, edited).
nlohmann::ordered_json ReadSealedManifest(const std::string& path,
                                          uint64_t max_bytes = 256ull << 20);
// SHA-256 (hex) of the compact JSON text: the seal, and a digest of a verified manifest.
std::string JsonSha256(const nlohmann::ordered_json& j);

}  // namespace trail
