#include "audit/replay.h"

#include <algorithm>
#include <chrono>

#include "audit/bisect.h"
#include "audit/published_run.h"
#include "audit/replay_data.h"
#include "audit/replayer.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timing.h"
#include "repops/devices.h"
#include "train/loaded_run.h"
#include "train/step_trace.h"

namespace trail::audit {
namespace {

using Clock = std::chrono::steady_clock;

// Bisects this machine's trace of a differing step against the run's recorded one and adds the
// first diverging operation to the step's verdict.
void NameDivergence(ReplayReport& report, const train::StepTrace& local, const ReplayOptions& o,
                    collectives::Communicator& comm) {
  const train::StepTrace recorded = train::ReadStepTrace(train::TracePath(o.run_dir, local.step));
  const Divergence d = comm.size() == 1 ? BisectWithRun(recorded, local, o.run_dir, o.data)
                                        : Bisect(recorded, local);
  report.divergence = DivergenceText(d);
  for (StepVerdict& v : report.steps) {
    if (v.step == local.step) v.detail += "; " + report.divergence;
  }
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kMatch:
      return "match";
    case Verdict::kDiffers:
      return "differs";
    case Verdict::kUnverified:
      return "unverified";
  }
  return "?";
}

int64_t ReplayReport::first_failure() const {
  int64_t first = -1;
  auto take = [&](int64_t s) { first = first < 0 ? s : std::min(first, s); };
  for (const StepVerdict& v : steps) {
    if (v.verdict != Verdict::kMatch) take(v.step);
  }
  for (const Finding& f : findings) {
    if (f.step >= 0) take(f.step);
  }
  return first;
}

bool ReplayReport::ok() const {
  if (!findings.empty() || !attestation.problems.empty()) return false;
  for (const StepVerdict& v : steps) {
    if (v.verdict != Verdict::kMatch) return false;
  }
  return !steps.empty();
}

const StepVerdict* ReplayReport::Find(int64_t step) const {
  for (const StepVerdict& v : steps) {
    if (v.step == step) return &v;
  }
  return nullptr;
}

ReplayReport ReplaySteps(const ReplayOptions& o) {
  collectives::Communicator& comm = o.comm != nullptr ? *o.comm : collectives::SingleProcess();
  const bool quiet = o.quiet || comm.rank() != 0;
  const PublishedRun run = OpenPublishedRun(o.run_dir);
  ReplayReport report;
  report.run_dir = o.run_dir, report.genesis = ToHex(run.info.genesis);
  report.final_chain = run.final_chain(), report.recorded_steps = run.steps();
  report.attestation = run.attestation;
  report.threads = static_cast<int64_t>(KernelPool().num_threads());
  report.processes = comm.size();
  const int64_t recorded = run.recorded_lines;
  TRAIL_CHECK(!o.steps.empty(), "audit: no steps to replay");
  TRAIL_CHECK(o.steps.back() < recorded, "audit: step ", o.steps.back(), " is beyond the ",
              recorded, " steps ", run.rd.trajectory_path(), " records");
  const Clock::time_point t0 = Clock::now();
  ReplayData data = DataForReplay(run, o.data);
  for (const auto& [shard, what] : o.fetched.differing_shards) data.differing.emplace(shard, what);
  report.publication = o.fetched.origin;
  train::LoadedRun loaded(
      run.rd.recipe_path(), data.manifest,
      data::StreamOptions{o.verify_shards, data.differing_paths()}, comm,
      repops::MakeBackend(o.device, o.kernels != nullptr ? *o.kernels : repops::ActiveKernels()),
      o.recompute);
  report.backend = loaded.engine.backend().description();  // e.g. "cpu (AVX3_DL)"
  report.load_seconds += SecondsSince(t0);
  Replayer replayer(run, loaded, o, report, quiet, data);
  if (!run.trajectory_problem.empty()) {
    report.findings.push_back({run.steps(), run.trajectory_problem});
    replayer.MarkBroken(run.steps());
  }
  for (const std::string& p : run.attestation.problems) report.findings.push_back({-1, p});
  for (int64_t s : o.steps) replayer.Reach(s);
  for (auto& [step, v] : replayer.verdicts()) report.steps.push_back(std::move(v));
  for (const auto& [shard, what] : data.differing) {
    if (!replayer.differing_read().count(shard)) {
      report.findings.push_back({-1, StrCat("shard ", shard,
                                            " differs from the data the run "
                                            "trained on (",
                                            what, "); no replayed step reads it")});
    }
  }
  if (!replayer.divergent_trace().ops.empty()) {
    NameDivergence(report, replayer.divergent_trace(), o, comm);
  }
  return report;
}

}  // namespace trail::audit
