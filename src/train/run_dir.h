// A run directory (docs/training.md, "A run on disk"):
//   recipe.toml        the recipe the run trains with (a copy, byte for byte)
//   base.import.json   with an imported base only: a copy of its import.json, byte for byte
//                      (train/imported_base.h), which the recipe's [init] names by SHA-256
//   manifest.json      a copy of the data manifest the run trained on, byte for byte (runs from
//                      before it was kept lack it; an audit compares a copy of the data with it)
//   run.json           format "trail.run.v1": recipe and its SHA-256, the data manifest's
//                      absolute path and SHA-256, the genesis hash H_0, parameter count,
//                      FLOPs per token, repops version, mesh, validation unigram entropies
//   trajectory.jsonl   one chained record per step (trajectory.h)
//   metrics.jsonl      one JSON object per executed step (step_report.h)
//   checkpoints/step_NNNNNNNN/   (checkpoint.h)
// This module owns the layout: creating a run, opening one, reading run.json and the
// trajectory, trimming metrics for a resume and finding the newest checkpoint that verifies.
// The trainer uses it now; replay and distributed training use the same paths.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/hash.h"
#include "train/checkpoint.h"
#include "train/state.h"
#include "train/trajectory.h"

namespace trail::train {

struct RunInfo {
  nlohmann::json json;        // run.json as written
  Digest genesis{};           // H_0 of the chained trajectory
  std::string data_manifest;  // "" when run.json names none
};

// What RunDirectory::Verify found: the facts it established and every problem, each naming the
// file at fault. ok() when there is no problem.
struct RunCheck {
  int64_t steps = 0;                 // complete trajectory records, chained from genesis
  std::vector<int64_t> checkpoints;  // steps of the checkpoints whose files verified
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

class RunDirectory {
 public:
  explicit RunDirectory(std::string dir);

  const std::string& dir() const { return dir_; }
  std::string recipe_path() const { return dir_ + "/recipe.toml"; }
  std::string info_path() const { return dir_ + "/run.json"; }
  std::string trajectory_path() const { return dir_ + "/trajectory.jsonl"; }
  std::string metrics_path() const { return dir_ + "/metrics.jsonl"; }
  std::string manifest_path() const { return dir_ + "/manifest.json"; }
  // The import.json of the base a continued pretraining started from (absent otherwise).
  std::string import_path() const { return dir_ + "/base.import.json"; }

  bool HoldsRun() const;   // a trajectory exists: the run has started
  bool CanResume() const;  // recipe.toml and trajectory.jsonl exist

  // Lays out a fresh run: checkpoints/, recipe.toml (unless recipe_source already is it),
  // run.json and an empty metrics file, each written atomically. The run has not started yet:
  // a process killed before MarkStarted leaves a directory that a fresh `train` reuses.
  void Create(const std::string& recipe_source, const std::string& recipe_text,
              const nlohmann::json& info) const;
  // Writes the empty trajectory, the commit point of a start (after checkpoint 0 is saved).
  void MarkStarted() const;

  // run.json; throws trail::Error naming the file when it is missing or malformed.
  RunInfo ReadInfo() const;

  // The trajectory's complete records, checked against the genesis hash and chained. With
  // drop_torn_tail, a torn last line (a crash mid-write) is cut off the file.
  std::vector<TrajectoryRecord> ReadTrajectory(const Digest& genesis, bool drop_torn_tail) const;

  // Checks the run as published, without executing a step: run.json readable; recipe.toml's
  // SHA-256 is the one run.json records (and the data manifest's, when the file run.json names
  // exists); the trajectory chains from the genesis hash; every checkpoint's files match its
  // meta.json, it belongs to this recipe and data, and its chain is the trajectory's at its step.
  // (A broken trajectory is reported alone: the checkpoints have nothing to be checked against.)
  // The audit's replay (audit/replay.h) is what checks that the steps themselves reproduce.
  RunCheck Verify() const;

  // Keeps the lines of metrics.jsonl whose step is < `step` (a resume re-executes the rest).
  void TrimMetrics(int64_t step) const;

  // Loads the newest checkpoint that verifies into `st`. A damaged checkpoint is renamed to
  // <dir>.invalid (never deleted) and the next older one tried; a checkpoint of another recipe
  // or data stops the search with that error. `say` gets one line per decision. Throws when
  // none verifies.
  void LoadNewestValidCheckpoint(const RunIdentity& id, TrainState& st,
                                 const std::function<void(const std::string&)>& say) const;
  // The same search with `check(dir)` (which throws trail::Error for a checkpoint it refuses) in
  // place of loading: returns the step of the newest that passes.
  int64_t NewestValidCheckpoint(const RunIdentity& id,
                                const std::function<void(const std::string& dir)>& check,
                                const std::function<void(const std::string&)>& say) const;

 private:
  std::string dir_;
};

// An exclusive lock on a run directory (flock on <dir>/.lock) held by the one process that
// writes it, so a second trainer on the same run — a resume started while an earlier job, or
// processes orphaned by a killed launcher, still run — is refused instead of interleaving its
// records. The kernel releases it when the holder dies, so a crash never leaves it stale.
class RunLock {
 public:
  explicit RunLock(const std::string& dir);  // throws trail::Error when held elsewhere
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Appends lines to a file, flushed after each line (trajectory.jsonl, metrics.jsonl).
class LineAppender {
 public:
  explicit LineAppender(const std::string& path);
  ~LineAppender();
  LineAppender(const LineAppender&) = delete;
  LineAppender& operator=(const LineAppender&) = delete;
  void Line(const std::string& s);

 private:
  std::FILE* f_;
};

}  // namespace trail::train
