#include "train/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/file_util.h"
#include "train/recipe.h"

namespace trail::train {
namespace fs = std::filesystem;

RunDirectory::RunDirectory(std::string dir) : dir_(std::move(dir)) {
  TRAIL_CHECK(!dir_.empty(), "no run directory given (--run DIR)");
}

bool RunDirectory::HoldsRun() const { return fs::exists(trajectory_path()); }

bool RunDirectory::CanResume() const {
  return fs::exists(recipe_path()) && fs::exists(trajectory_path());
}

void RunDirectory::Create(const std::string& recipe_source, const std::string& recipe_text,
                          const nlohmann::json& info) const {
  fs::create_directories(dir_ + "/checkpoints");
  if (fs::absolute(recipe_source) != fs::absolute(recipe_path())) {
    WriteFileAtomic(recipe_path(), recipe_text);
  }
  WriteFileAtomic(info_path(), info.dump(2) + "\n");
  WriteFileAtomic(metrics_path(), "");
}

void RunDirectory::MarkStarted() const { WriteFileAtomic(trajectory_path(), ""); }

RunInfo RunDirectory::ReadInfo() const {
  const std::string path = info_path();
  TRAIL_CHECK(fs::exists(path), path, " not found: ", dir_, " is not a trail run directory");
  RunInfo info;
  try {
    info.json = nlohmann::json::parse(ReadFileToString(path));
    info.genesis = DigestFromHex(info.json.at("genesis").get<std::string>(), path + ": genesis");
    info.data_manifest = info.json.value("data_manifest", std::string());
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed: ", e.what());
  }
  return info;
}

std::vector<TrajectoryRecord> RunDirectory::ReadTrajectory(const Digest& genesis,
                                                           bool drop_torn_tail) const {
  const std::string path = trajectory_path();
  uint64_t complete = 0;
  std::vector<TrajectoryRecord> recs = train::ReadTrajectory(path, &genesis, &complete);
  if (drop_torn_tail && complete < fs::file_size(path)) fs::resize_file(path, complete);
  return recs;
}

namespace {

// The chain a checkpoint at `step` must record: genesis at 0, else the record of step - 1.
std::string ChainAt(int64_t step, const Digest& genesis,
                    const std::vector<TrajectoryRecord>& recs) {
  return ToHex(step == 0 ? genesis : recs[static_cast<size_t>(step - 1)].chain);
}

void CheckCheckpoints(const RunDirectory& rd, const RunInfo& info,
                      const std::vector<TrajectoryRecord>& recs, RunCheck& out) {
  const RunIdentity id{info.json.value("recipe_sha256", std::string()),
                       info.json.value("manifest_sha256", std::string())};
  for (int64_t step : ListCheckpoints(rd.dir())) {
    const std::string dir = CheckpointDir(rd.dir(), step);
    try {
      const CheckpointMeta meta = VerifyCheckpointFiles(dir);
      TRAIL_CHECK(meta.step == step, dir, ": meta.json says step ", meta.step);
      TRAIL_CHECK(meta.id.recipe_sha256 == id.recipe_sha256 &&
                      meta.id.manifest_sha256 == id.manifest_sha256,
                  dir, ": a checkpoint of another recipe or data than run.json names");
      TRAIL_CHECK(step <= static_cast<int64_t>(recs.size()), dir, ": step ", step,
                  " is beyond the trajectory's ", recs.size(), " records");
      TRAIL_CHECK(meta.trajectory_chain == ChainAt(step, info.genesis, recs), dir,
                  ": its trajectory chain differs from the trajectory's at step ", step);
      out.checkpoints.push_back(step);
    } catch (const Error& e) {
      out.problems.push_back(e.what());
    }
  }
}

}  // namespace

namespace {

// A run continuing an imported model keeps the import's record, which its recipe names by
// SHA-256, and checkpoint 0, the base's parameters (docs/import.md).
void CheckImportedBase(const RunDirectory& rd, RunCheck& out) {
  InitConfig init;
  try {
    init = ParseRecipeInit(ReadFileToString(rd.recipe_path()), rd.recipe_path());
  } catch (const Error& e) {
    return out.problems.push_back(e.what());
  }
  if (!init.imported) return;
  const std::string copy = rd.import_path();
  if (!fs::exists(copy) || ToHex(Sha256OfFile(copy)) != init.import_sha256) {
    out.problems.push_back(copy + ": missing, or not the import record the recipe's [init] names");
  }
  if (!fs::exists(CheckpointDir(rd.dir(), 0))) {
    out.problems.push_back(CheckpointDir(rd.dir(), 0) +
                           ": missing (the imported base's parameters, kept by the trainer)");
  }
}

}  // namespace

RunCheck RunDirectory::Verify() const {
  RunCheck out;
  RunInfo info;
  try {
    info = ReadInfo();
  } catch (const Error& e) {
    out.problems.push_back(e.what());
    return out;
  }
  auto check_file = [&](const std::string& path, const char* key) {
    if (!fs::exists(path)) return out.problems.push_back(path + ": missing");
    const std::string want = info.json.value(key, std::string());
    if (ToHex(Sha256OfFile(path)) != want) {
      out.problems.push_back(path + ": SHA-256 differs from run.json's " + key);
    }
  };
  check_file(recipe_path(), "recipe_sha256");
  if (!info.data_manifest.empty() && fs::exists(info.data_manifest)) {
    check_file(info.data_manifest, "manifest_sha256");
  }
  if (fs::exists(manifest_path())) check_file(manifest_path(), "manifest_sha256");
  CheckImportedBase(*this, out);
  std::vector<TrajectoryRecord> recs;
  try {
    recs = ReadTrajectory(info.genesis, /*drop_torn_tail=*/false);
    out.steps = static_cast<int64_t>(recs.size());
  } catch (const Error& e) {
    out.problems.push_back(e.what());
    return out;  // the checkpoints' chains cannot be checked against a broken trajectory
  }
  CheckCheckpoints(*this, info, recs, out);
  return out;
}

void RunDirectory::TrimMetrics(int64_t step) const {
  const std::string path = metrics_path();
  if (!fs::exists(path)) return;
  const std::string text = ReadFileToString(path);
  std::string kept;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("step", int64_t{-1}) < step) kept += line + "\n";
    } catch (const nlohmann::json::exception&) {
    }
  }
  WriteFileAtomic(path, kept);
}

void RunDirectory::LoadNewestValidCheckpoint(
    const RunIdentity& id, TrainState& st,
    const std::function<void(const std::string&)>& say) const {
  NewestValidCheckpoint(
      id, [&](const std::string& dir) { LoadCheckpoint(dir, id, st); }, say);
}

int64_t RunDirectory::NewestValidCheckpoint(
    const RunIdentity& id, const std::function<void(const std::string& dir)>& check,
    const std::function<void(const std::string&)>& say) const {
  const std::vector<int64_t> steps = ListCheckpoints(dir_);
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const std::string dir = CheckpointDir(dir_, *it);
    // A checkpoint of another recipe or data is a wrong run, not damage: the search stops.
    std::optional<RunIdentity> owner;
    try {
      owner = CheckpointIdentity(dir);
    } catch (const Error&) {
    }
    try {
      check(dir);
      say("resume: from checkpoint step " + std::to_string(*it));
      return *it;
    } catch (const Error& e) {
      if (owner && (owner->recipe_sha256 != id.recipe_sha256 ||
                    owner->manifest_sha256 != id.manifest_sha256)) {
        throw;
      }
      say(std::string("resume: skipping invalid checkpoint: ") + e.what());
      fs::rename(dir, dir + ".invalid");
    }
  }
  TRAIL_FAIL(dir_, ": no valid checkpoint to resume from");
}

RunLock::RunLock(const std::string& dir) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  TRAIL_CHECK(fd_ >= 0, path, ": cannot open: ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    TRAIL_CHECK(err != EWOULDBLOCK, dir,
                " is being written by another trail process (a training job still running, or "
                "processes left over from a killed launcher): stop it, then resume");
    TRAIL_FAIL(path, ": cannot lock: ", std::strerror(err));
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

LineAppender::LineAppender(const std::string& path) : f_(std::fopen(path.c_str(), "ab")) {
  TRAIL_CHECK(f_ != nullptr, path, ": cannot open for appending");
}

LineAppender::~LineAppender() { std::fclose(f_); }

void LineAppender::Line(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
}

}  // namespace trail::train
