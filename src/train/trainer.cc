#include "train/trainer.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "repops/kernels.h"
#include "train/checkpoint.h"
#include "train/loaded_run.h"
#include "train/run_dir.h"
#include "train/spike_monitor.h"
#include "train/step.h"
#include "train/step_report.h"
#include "train/trajectory.h"

namespace trail::train {
namespace fs = std::filesystem;
namespace {

// The manifest to train on: --data, or on resume the one the run recorded.
std::string ManifestToUse(const TrainOptions& opt, const RunDirectory& rd) {
  std::string manifest = opt.manifest_path;
  if (manifest.empty() && opt.resume && fs::exists(rd.info_path())) {
    manifest = rd.ReadInfo().data_manifest;
  }
  TRAIL_CHECK(!manifest.empty(), "train: --data MANIFEST is required");
  return manifest;
}

void CheckStartable(const TrainOptions& opt, const RunDirectory& rd) {
  if (!opt.resume) {
    TRAIL_CHECK(!opt.recipe_path.empty(), "train: --recipe R.toml is required");
    TRAIL_CHECK(!rd.HoldsRun(), rd.dir(),
                " already holds a run (trajectory.jsonl); pass --resume to continue it");
    return;
  }
  TRAIL_CHECK(rd.CanResume(), rd.dir(),
              " holds no run to resume (recipe.toml / trajectory.jsonl missing)");
  if (!opt.recipe_path.empty()) {
    TRAIL_CHECK(Sha256OfFile(opt.recipe_path) == Sha256OfFile(rd.recipe_path()), opt.recipe_path,
                " differs from the run's recipe.toml: a run resumes with its own recipe");
  }
}

// A fresh run: random initial parameters, the genesis hash, run.json, checkpoint 0.
void StartFresh(const TrainOptions& opt, const RunDirectory& rd, LoadedRun& run,
                const std::map<std::string, double>& unigram, TrainState& st) {
  const Recipe& R = run.recipe;
  const model::ModelCost cost = model::Cost(R.model, run.stream.seq_len());
  st.params.InitRandom(R.model);
  st.chain = GenesisHash(R.sha256, run.manifest_sha, st.params.StateHash());
  const nlohmann::json info = {
      {"format", "trail.run.v1"},
      {"recipe", "recipe.toml"},
      {"recipe_sha256", R.sha256},
      {"data_manifest", run.manifest_path},
      {"manifest_sha256", run.manifest_sha},
      {"genesis", ToHex(st.chain)},
      {"parameters", cost.parameters},
      {"flops_per_token", cost.flops_per_token},
      {"repops", "repops v1"},
      {"mesh", {{"replicas", R.mesh.replicas}, {"shards", R.mesh.shards}}},
      {"val_unigram_entropy", unigram}};
  rd.Create(opt.recipe_path, R.text, info);
  SaveCheckpoint(rd.dir(), st, run.id());
}

// A resume: the newest valid checkpoint, the trajectory checked against it (a torn last line
// cut off), metrics trimmed. Returns the recorded steps after the checkpoint, which the resumed
// run must reproduce exactly.
std::vector<TrajectoryRecord> Resume(const TrainOptions& opt, const RunDirectory& rd,
                                     LoadedRun& run, TrainState& st) {
  rd.LoadNewestValidCheckpoint(run.id(), st, [&](const std::string& s) { Say(opt.quiet, s); });
  if (opt.fault == ResumeFault::kDropCursor) st.window_cursor = 0;
  if (opt.fault == ResumeFault::kDropTokens) st.tokens = 0;
  const std::vector<TrajectoryRecord> recs =
      rd.ReadTrajectory(rd.ReadInfo().genesis, /*drop_torn_tail=*/true);
  TRAIL_CHECK(static_cast<int64_t>(recs.size()) >= st.step, rd.trajectory_path(), " holds ",
              recs.size(), " steps but the checkpoint is at step ", st.step);
  TRAIL_CHECK(st.step == 0 || recs[st.step - 1].chain == st.chain, rd.trajectory_path(),
              ": the chained hash at step ", st.step - 1, " differs from the checkpoint's");
  rd.TrimMetrics(st.step);
  return {recs.begin() + st.step, recs.end()};
}

void SayModel(bool quiet, LoadedRun& run, const std::map<std::string, double>& unigram) {
  const Recipe& R = run.recipe;
  const model::ModelCost cost = model::Cost(R.model, run.stream.seq_len());
  Say(quiet, "model: " + std::to_string(cost.parameters) + " parameters, " +
                 FormatNumber("%.3g", cost.flops_per_token) + " FLOPs/token (6N + attention), " +
                 "activations " + FormatNumber("%.1f", run.engine.activation_bytes() / 1048576.0) +
                 " MiB; mesh " + std::to_string(R.mesh.replicas) + " replicas x " +
                 std::to_string(R.mesh.shards) + " shards; backend " +
                 repops::ActiveKernels().name);
  if (unigram.empty()) return;
  std::string u;
  for (const auto& [d, h] : unigram) u += " " + d + "=" + FormatNumber("%.3f", h);
  Say(quiet, "validation unigram entropy (the loss to beat):" + u);
}

}  // namespace

TrainSummary RunTraining(const TrainOptions& opt) {
  const RunDirectory rd(opt.run_dir);
  const std::string manifest = ManifestToUse(opt, rd);
  CheckStartable(opt, rd);
  LoadedRun run(opt.resume ? rd.recipe_path() : opt.recipe_path, manifest, opt.verify_shards);
  const Recipe& R = run.recipe;
  TrainState st(R.model);
  SpikeMonitor monitor(R.monitor);
  const std::map<std::string, double> unigram = run.UnigramEntropy();
  std::vector<TrajectoryRecord> expected;  // recorded steps a resume must reproduce
  if (opt.resume) {
    expected = Resume(opt, rd, run, st);
    monitor.RestoreState(st.monitor_state);
  } else {
    st.monitor_state = monitor.StateJson();
    StartFresh(opt, rd, run, unigram, st);
  }
  SayModel(opt.quiet, run, unigram);

  TrainSummary sum;
  LineAppender traj(rd.trajectory_path());
  const int64_t last = opt.stop_after >= 0 ? std::min(R.loop.steps, opt.stop_after) : R.loop.steps;
  StepReporter reporter(run, monitor, rd.metrics_path(), st.step, last, opt.quiet);
  while (st.step < last) {
    StepResult r;
    const std::string line = StepAndChain(run.engine, st, r);
    const int64_t idx = r.step - (expected.empty() ? 0 : expected.front().step);
    if (idx < static_cast<int64_t>(expected.size())) {
      const std::string diff = FirstDifference(expected[idx].line, line);
      TRAIL_CHECK(diff.empty(), "resume diverged at step ", r.step, ": ", diff,
                  " — the resumed state does not reproduce the recorded trajectory");
      ++sum.steps_verified_on_resume;
    } else {
      traj.Line(line);
    }
    const double val = reporter.Record(r, st);
    if (val >= 0) sum.last_val_loss = val;
    const bool ckpt_now = (R.loop.checkpoint_every > 0 && st.step % R.loop.checkpoint_every == 0) ||
                          st.step == R.loop.steps;
    if (ckpt_now) {
      st.monitor_state = monitor.StateJson();
      SaveCheckpoint(rd.dir(), st, run.id());
      ApplyRetention(rd.dir(), R.loop.keep_checkpoints);
    }
  }
  sum.steps_done = st.step;
  sum.final_chain = ToHex(st.chain);
  sum.final_params = ToHex(st.params.StateHash());
  return sum;
}

}  // namespace trail::train
