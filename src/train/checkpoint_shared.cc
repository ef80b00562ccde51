// SaveCheckpointShared (checkpoint.h): a checkpoint written by every process of a job.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "train/checkpoint.h"
#include "train/checkpoint_files.h"

namespace trail::train {
namespace fs = std::filesystem;
namespace {

// Every process learns whether all succeeded: each sends its error ("" when it succeeded), and
// every process throws, naming the first process that failed and its error.
void AllSucceeded(collectives::Communicator& comm, const std::string& error, const char* what) {
  const std::vector<std::vector<uint8_t>> all =
      comm.AllGather({reinterpret_cast<const uint8_t*>(error.data()), error.size()});
  for (size_t p = 0; p < all.size(); ++p) {
    TRAIL_CHECK(all[p].empty(), "checkpoint: ", what, " failed on process ", p, ": ",
                std::string(all[p].begin(), all[p].end()));
  }
}

// Runs fn; returns what it threw ("" when it succeeded).
template <class F>
std::string ErrorOf(F fn) {
  try {
    fn();
    return "";
  } catch (const std::exception& e) {
    return *e.what() != '\0' ? e.what() : "unknown error";
  }
}

std::vector<SafetensorsEntry> EntriesOf(const std::vector<TensorMeta>& metas) {
  std::vector<SafetensorsEntry> out;
  for (const TensorMeta& m : metas) out.push_back({m.name, m.dtype, m.shape});
  return out;
}

// An open file of the checkpoint being written.
class File {
 public:
  File(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags, 0644)) {
    TRAIL_CHECK(fd_ >= 0, path, ": cannot open for writing: ", std::strerror(errno));
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // n bytes at byte `offset` of the file.
  void WriteAt(const void* data, uint64_t n, uint64_t offset) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t done = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (done < 0 && errno == EINTR) continue;
      TRAIL_CHECK(done > 0, path_, ": cannot write: ", std::strerror(errno));
      p += done, n -= static_cast<uint64_t>(done), offset += static_cast<uint64_t>(done);
    }
  }
  void Resize(uint64_t size) {
    TRAIL_CHECK(::ftruncate(fd_, static_cast<off_t>(size)) == 0, path_,
                ": cannot size the file: ", std::strerror(errno));
  }
  void Sync() { TRAIL_CHECK(::fsync(fd_) == 0, path_, ": cannot sync: ", std::strerror(errno)); }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

void SaveCheckpointShared(const std::string& run_dir, const TrainState& st, const RunIdentity& id,
                          collectives::Communicator& comm, const CheckpointShare& share) {
  const int q = comm.rank();
  TRAIL_CHECK(share.bounds.size() == static_cast<size_t>(comm.size()) + 1,
              "checkpoint: ranges for ", share.bounds.size() - 1, " processes in a job of ",
              comm.size());
  const int64_t n = share.bounds.back(), begin = share.bounds[q];
  const size_t count = static_cast<size_t>(share.bounds[q + 1] - begin);
  TRAIL_CHECK(share.params.size() == count && share.m.size() == count && share.v.size() == count,
              "checkpoint: process ", q, " holds ", share.params.size(), " values of a range of ",
              count);
  const std::string tmp = CheckpointDir(run_dir, st.step) + ".tmp";
  const std::string model_path = tmp + "/" + kCheckpointModelFile,
                    optim_path = tmp + "/" + kCheckpointOptimFile;
  const std::string model_prefix =
      SafetensorsPrefix(EntriesOf(share.param_metas), CheckpointFileMetadata(), model_path);
  const std::string optim_prefix =
      SafetensorsPrefix(EntriesOf(share.moment_metas), CheckpointFileMetadata(), optim_path);
  // Process 0: the directory and both files at full length, headers written.
  AllSucceeded(
      comm, q != 0 ? "" : ErrorOf([&] {
        fs::remove_all(tmp);
        fs::create_directories(tmp);
        for (const auto& [path, prefix, bytes] :
             {std::tuple{model_path, model_prefix, 4 * n}, {optim_path, optim_prefix, 8 * n}}) {
          File f(path, O_WRONLY | O_CREAT | O_TRUNC);
          f.WriteAt(prefix.data(), prefix.size(), 0);
          f.Resize(prefix.size() + static_cast<uint64_t>(bytes));
        }
      }),
      "creating the files");
  // Every process: its range of the parameters, of adam_m (the first n moments) and adam_v.
  AllSucceeded(comm, ErrorOf([&] {
                 File model(model_path, O_WRONLY), optim(optim_path, O_WRONLY);
                 model.WriteAt(share.params.data(), 4 * count, model_prefix.size() + 4 * begin);
                 optim.WriteAt(share.m.data(), 4 * count, optim_prefix.size() + 4 * begin);
                 optim.WriteAt(share.v.data(), 4 * count, optim_prefix.size() + 4 * (n + begin));
                 model.Sync();
                 optim.Sync();
               }),
               "writing the ranges");
  // Process 0, once every range is on disk: meta.json and the rename.
  nlohmann::json ranges = nlohmann::json::array();
  for (size_t p = 0; p + 1 < share.bounds.size(); ++p)
    ranges.push_back({share.bounds[p], share.bounds[p + 1]});
  const nlohmann::json layout = {
      {"writers", comm.size()}, {"flat_elements", n}, {"flat_ranges", ranges}};
  AllSucceeded(comm, q != 0 ? "" : ErrorOf([&] {
                 WriteMetaAndCommit(run_dir, tmp, st, id, share.params_hash, share.optim_hash,
                                    &layout);
               }),
               "committing");
}

}  // namespace trail::train
