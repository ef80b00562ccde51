#include "audit/replayer.h"

#include <chrono>
#include <filesystem>

#include "core/error.h"
#include "core/json_read.h"
#include "core/timing.h"
#include "train/checkpoint.h"
#include "train/step_report.h"
#include "train/trajectory.h"

namespace trail::audit {
namespace {

using Clock = std::chrono::steady_clock;

// What a difference in a record's field says about the step, for the auditor reading it (the
// trajectory's schema, train/trajectory.h).
std::string FieldMeaning(const std::string& field) {
  const train::TrajectoryField* f = train::FindTrajectoryField(field);
  return f != nullptr ? f->meaning : "";
}

}  // namespace

Replayer::Replayer(const PublishedRun& run, train::LoadedRun& loaded, const ReplayOptions& options,
                   ReplayReport& report, bool quiet, const ReplayData& data)
    : run_(run), loaded_(loaded), options_(options), report_(report), quiet_(quiet), data_(data) {
  if (!data.differing.empty()) {
    differing_ = std::make_unique<DifferingReads>(
        data.manifest, data::StreamOptions{false, data.differing_paths()}, data.differing_paths());
  }
  starts_ = StartPoints(options.fetched.present() ? options.fetched.checkpoints
                                                  : train::ListCheckpoints(run.rd.dir()));
}

void Replayer::Reach(int64_t target) {
  if (target >= broken_) return Unverified(target, "the trajectory is broken before it");
  const int best = BestStart(target, starts_.size());
  const bool jump = best >= 0 && starts_[best].step > (st_ ? st_->step : -1);
  if (!st_ || st_->step > target || jump) {
    if (!Start(target)) {
      const std::string shard = differing_ ? differing_->ShardReadBy(target) : "";
      if (!shard.empty()) {
        return Unverified(target, StrCat("reads shard ", shard,
                                         ", which differs from the data the run trained on"));
      }
      return Unverified(target, diverged_ >= 0
                                    ? StrCat("no usable checkpoint after step ", diverged_, " (",
                                             diverged_why_, ") and at or before this one")
                                    : "no usable starting point at or before it");
    }
  }
  while (st_->step <= target) {
    CheckPassedCheckpoint(st_->step);
    if (ReadsDifferingData(target)) return;
    const StepVerdict& v = ReplayOne(target);
    if (v.verdict != Verdict::kMatch) {
      diverged_ = v.step, diverged_why_ = "which differs";
      st_.reset();  // a state that left the trajectory is of no further use
      if (v.step < target) Unverified(target, StrCat("follows step ", v.step, ", which differs"));
      return;
    }
  }
}

int Replayer::BestStart(int64_t target, size_t below) const {
  return NewestStart(starts_, target, below, bad_);
}

void Replayer::Prepare(size_t i, int64_t target) {
  if (options_.fetched.prepare) {
    options_.fetched.prepare(starts_[i].step, starts_[i].checkpoint, target);
  }
}

bool Replayer::Start(int64_t target) {
  for (int i = BestStart(target, starts_.size()); i >= 0 && starts_[i].step > diverged_;
       i = BestStart(target, i)) {
    Prepare(static_cast<size_t>(i), target);
    const Clock::time_point t0 = Clock::now();
    const std::string problem = TryStart(starts_[i]);
    report_.load_seconds += SecondsSince(t0);
    const int64_t c = starts_[i].step;
    if (problem.empty()) {
      checked_.insert(i);
      report_.starting_points.push_back(c);
      train::Say(quiet_, StrCat("audit: starting at step ", c,
                                starts_[i].checkpoint ? " from its checkpoint"
                                                      : " from the recipe's initial parameters"));
      return true;
    }
    bad_.insert(i);
    report_.findings.push_back({c, problem});
    train::Say(quiet_, StrCat("audit: step ", c, ": ", problem));
  }
  st_.reset();
  return false;
}

std::string Replayer::Load(const StartPoint& p, train::TrainState& st) {
  const std::string ckpt = train::CheckpointDir(run_.rd.dir(), p.step);
  try {
    if (p.checkpoint) {
      train::LoadCheckpoint(ckpt, loaded_.id(), st);
    } else {
      if (loaded_.recipe.init.imported) {
        return "the recipe imports its initial parameters, so a replay of the first steps starts "
               "from checkpoint 0 (the trainer keeps it), which this run lacks";
      }
      st.params.InitRandom(loaded_.recipe.model);
      st.chain = run_.info.genesis;
    }
  } catch (const Error& e) {
    return e.what();
  }
  return Disagreement(st, p.step, p.checkpoint ? ckpt : "the recipe's initial parameters");
}

std::string Replayer::TryStart(const StartPoint& p) {
  st_ = std::make_unique<train::TrainState>(loaded_.recipe.model, loaded_.engine.backend());
  const std::string problem = Load(p, *st_);
  if (problem.empty()) loaded_.engine.AdoptState(*st_);
  return problem;
}

void Replayer::CheckPassedCheckpoint(int64_t c) {
  for (size_t i = 0; i < starts_.size(); ++i) {
    if (starts_[i].step != c || !starts_[i].checkpoint || checked_.count(i) || bad_.count(i)) {
      continue;
    }
    checked_.insert(i);
    Prepare(i, c);
    const Clock::time_point t0 = Clock::now();
    train::TrainState probe(loaded_.recipe.model, loaded_.engine.backend());
    const std::string problem = Load(starts_[i], probe);
    report_.load_seconds += SecondsSince(t0);
    if (problem.empty()) continue;
    bad_.insert(static_cast<int>(i));
    report_.findings.push_back({c, problem});
    train::Say(quiet_, StrCat("audit: step ", c, ": ", problem));
  }
}

std::string Replayer::Disagreement(const train::TrainState& st, int64_t c,
                                   const std::string& where) {
  const std::string params = ToHex(st.params.StateHash());
  const std::string optim = ToHex(st.OptimizerHash());
  if (c == 0) {
    train::TrainState init(loaded_.recipe.model, loaded_.engine.backend());
    const train::InitConfig& from = loaded_.recipe.init;
    if (!from.imported) init.params.InitRandom(loaded_.recipe.model);
    // An imported base: the recipe names its parameters' state hash, and the run's copy of the
    // import record by SHA-256.
    const Digest initial = from.imported ? DigestFromHex(from.params_sha256, "[init] params_sha256")
                                         : init.params.StateHash();
    if (from.imported) {
      const std::string copy = run_.rd.import_path();
      if (!std::filesystem::exists(copy) || ToHex(Sha256OfFile(copy)) != from.import_sha256) {
        return StrCat(copy, " is missing or is not the import record the recipe's [init] names (",
                      from.import_sha256, ")");
      }
    }
    const Digest genesis = train::GenesisHash(loaded_.recipe.sha256, loaded_.manifest_sha, initial);
    if (genesis != run_.info.genesis) {
      return StrCat("run.json's genesis ", ToHex(run_.info.genesis),
                    " does not commit to this recipe, data manifest and initial parameters (",
                    ToHex(genesis), ")");
    }
    if (params != ToHex(initial)) {
      return StrCat(where, " holds other parameters than the recipe ",
                    from.imported ? "imports" : "initializes");
    }
    if (optim != ToHex(init.OptimizerHash()) || st.chain != run_.info.genesis) {
      return StrCat(where, " is not the state before step 0 (moments or chain)");
    }
    return "";
  }
  const train::TrajectoryRecord& rec = run_.records[static_cast<size_t>(c - 1)];
  const train::RecordedState recorded = train::RecordedStateOf(rec);
  if (!recorded.committed()) {
    return StrCat(where, ": the trajectory records no state hashes after step ", c - 1,
                  " to check it against (a checkpoint at a step the recipe does not commit)");
  }
  const std::pair<std::string, std::string> checks[] = {
      {"trajectory chain", ToHex(st.chain)},
      {"parameter state hash", params},
      {"optimizer state hash", optim},
      {"window cursor", std::to_string(st.window_cursor)}};
  const std::string want[] = {ToHex(rec.chain), recorded.params, recorded.optim,
                              std::to_string(recorded.window_cursor)};
  for (size_t i = 0; i < 4; ++i) {
    if (checks[i].second != want[i]) {
      return StrCat(where, ": its ", checks[i].first, " ", checks[i].second,
                    " differs from the state the trajectory records after step ", c - 1, " (",
                    want[i], ")");
    }
  }
  return "";
}

const StepVerdict& Replayer::ReplayOne(int64_t target) {
  const Clock::time_point t0 = Clock::now();
  const int64_t step = st_->step;
  const std::string recorded = train::TracePath(run_.rd.dir(), step);
  const bool trace = step == options_.trace_step ||
                     (options_.bisect && pending_.ops.empty() && std::filesystem::exists(recorded));
  train::StepResult r;
  train::StepTrace local;
  const std::string line =
      trace ? train::TracedStepAndChain(loaded_.engine, *st_, r, run_.info.genesis, local,
                                        step == options_.trace_step ? options_.capture : -1)
            : train::StepAndChain(loaded_.engine, *st_, r);
  if (step == options_.trace_step) report_.trace = local;
  StepVerdict v;
  v.step = r.step, v.chain = ToHex(st_->chain), v.seconds = SecondsSince(t0);
  const train::RecordDifference d =
      train::DifferingField(run_.records[static_cast<size_t>(r.step)].line, line);
  const std::string diff = d.field.empty()
                               ? ""
                               : StrCat(d.field, ": the run records ", d.expected,
                                        ", the replay computes ", d.actual, FieldMeaning(d.field));
  v.verdict = diff.empty() ? Verdict::kMatch : Verdict::kDiffers;
  v.detail = diff;
  if (!diff.empty() && differing_) {  // other shards' documents may have moved its windows
    v.detail +=
        " (with a copy of the data whose shards differ from the run's, this step may "
        "have read other windows)";
  }
  if (!diff.empty() && trace && options_.bisect && std::filesystem::exists(recorded)) {
    pending_ = local;  // bisected against the recorded trace once the replay is done
  }
  v.requested = r.step == target;
  train::Say(quiet_, StrCat("audit: step ", r.step, " ", VerdictName(v.verdict),
                            diff.empty() ? "" : ": " + diff));
  return Put(std::move(v));
}

bool Replayer::ReadsDifferingData(int64_t target) {
  if (!differing_) return false;
  const int64_t step = st_->step;
  const std::string shard = differing_->ShardReadBy(step);
  if (shard.empty()) return false;
  if (noted_.insert(shard).second) {
    report_.findings.push_back(
        {step, StrCat("shard ", shard, " differs from the data the run trained on (",
                      data_.differing.at(shard), "); step ", step,
                      " is the first replayed step that reads it")});
  }
  StepVerdict v;
  v.step = step, v.requested = step == target;
  v.detail = StrCat("reads shard ", shard, ", which differs from the data the run trained on");
  train::Say(quiet_, StrCat("audit: step ", step, " unverified: ", v.detail));
  Put(std::move(v));
  diverged_ = step, diverged_why_ = "which reads data that differs from the run's";
  st_.reset();
  if (step < target)
    Unverified(target, StrCat("follows step ", step,
                              ", which reads data that "
                              "differs from the run's"));
  return true;
}

void Replayer::Unverified(int64_t step, const std::string& why) {
  StepVerdict v;
  v.step = step, v.requested = true, v.detail = why;
  Put(std::move(v));
}

const StepVerdict& Replayer::Put(StepVerdict v) {
  StepVerdict& slot = verdicts_[v.step];
  const bool requested = slot.requested || v.requested;
  slot = std::move(v);
  slot.requested = requested;
  return slot;
}

}  // namespace trail::audit
