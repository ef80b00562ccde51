// The replay of one run's requested steps (audit/replay.h's ReplaySteps drives it): where each
// replay starts (step_reads.h's one rule over the run's starting points, each checked against
// the trajectory before use, a remote run's fetched first through FetchedSource::prepare), the
// steps executed and compared record by record, and the verdicts, findings and first diverging
// trace they leave. Keeps the state between requested steps, so consecutive steps replay once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "audit/published_run.h"
#include "audit/replay.h"
#include "audit/replay_data.h"
#include "audit/step_reads.h"
#include "train/loaded_run.h"
#include "train/state.h"
#include "train/step_trace.h"

namespace trail::audit {

class Replayer {
 public:
  Replayer(const PublishedRun& run, train::LoadedRun& loaded, const ReplayOptions& options,
           ReplayReport& report, bool quiet, const ReplayData& data);

  // Replays up to `target` and records its verdict (and those of the steps on the way).
  void Reach(int64_t target);

  void MarkBroken(int64_t step) { broken_ = step; }
  // The differing shards some replayed step read (each a finding at the first such step).
  const std::set<std::string>& differing_read() const { return noted_; }
  // Every step's verdict, ascending.
  std::map<int64_t, StepVerdict>& verdicts() { return verdicts_; }
  // This machine's trace of the first step with a recorded trace that differed (empty: none).
  const train::StepTrace& divergent_trace() const { return pending_; }

 private:
  // The newest usable starting point before index `below` at or before `target`; -1 if none.
  int BestStart(int64_t target, size_t below) const;

  // Makes present what starting at starts_[i] to replay up to `target` reads (a remote run).
  void Prepare(size_t i, int64_t target);

  // Loads the newest usable starting point at or before `target` and after any divergence.
  bool Start(int64_t target);

  // "" when the state at `p` is loaded into `st` and agrees with the trajectory, else the
  // problem.
  std::string Load(const StartPoint& p, train::TrainState& st);

  std::string TryStart(const StartPoint& p);

  // A checkpoint the replay passes is checked too: a published state that disagrees with the
  // trajectory is a finding even when no replay starts from it.
  void CheckPassedCheckpoint(int64_t c);

  // How the loaded state disagrees with what the trajectory says it is ("" when it agrees).
  std::string Disagreement(const train::TrainState& st, int64_t c, const std::string& where);

  const StepVerdict& ReplayOne(int64_t target);

  // A step that reads a shard whose copy differs from the run's data is not replayed: it is
  // unverified, and the state after it unknown, so a later step restarts from a checkpoint.
  bool ReadsDifferingData(int64_t target);

  void Unverified(int64_t step, const std::string& why);

  const StepVerdict& Put(StepVerdict v);

  std::map<int64_t, StepVerdict> verdicts_;
  const PublishedRun& run_;
  train::LoadedRun& loaded_;
  const ReplayOptions& options_;
  train::StepTrace pending_;  // this machine's trace of the first traced step that differed
  ReplayReport& report_;
  bool quiet_;
  std::vector<StartPoint> starts_;  // ascending by step
  std::set<int> bad_;               // indices into starts_ found unusable
  std::set<size_t> checked_;        // indices into starts_ already checked
  std::unique_ptr<train::TrainState> st_;
  int64_t diverged_ = -1, broken_ = INT64_MAX;
  std::string diverged_why_ = "which differs";  // why the replay left the trajectory there
  const ReplayData& data_;
  std::unique_ptr<DifferingReads> differing_;  // null when the data is the run's
  std::set<std::string> noted_;                // differing shards a replayed step read
};

}  // namespace trail::audit
