#include "train/trainer.h"

#include <cstdio>
#include <filesystem>
#include <cstring>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/resident_memory.h"
#include "core/file_util.h"
#include "repops/kernels.h"
#include "train/checkpoint.h"
#include "train/loaded_run.h"
#include "train/run_attestation.h"
#include "train/run_dir.h"
#include "train/run_flops.h"
#include "train/spike_monitor.h"
#include "train/step.h"
#include "train/step_report.h"
#include "train/step_trace.h"
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

// A fresh run: random initial parameters, the genesis hash; process 0 writes run.json and
// checkpoint 0 (with sharded parameters every process writes checkpoint 0, after AdoptState).
void StartFresh(const TrainOptions& opt, const RunDirectory& rd, LoadedRun& run,
                const std::map<std::string, double>& unigram, TrainState& st, bool lead,
                std::optional<RunLock>& lock) {
  const Recipe& R = run.recipe;
  const model::ModelCost cost = model::Cost(R.model, run.stream.max_seq_len());
  const double flops_per_token =
      MeanFlopsPerToken(R.model, run.stream.manifest().stream, R.loop.steps);
  run.engine.InitParameters(st);  // sharded: each process keeps its range, never the whole
  st.chain = GenesisHash(R.sha256, run.manifest_sha, run.engine.ParamsHash(st));
  if (!lead) return;
  const nlohmann::json info = {{"format", "trail.run.v1"},
                               {"recipe", "recipe.toml"},
                               {"recipe_sha256", R.sha256},
                               {"data_manifest", run.manifest_path},
                               {"manifest_sha256", run.manifest_sha},
                               {"genesis", ToHex(st.chain)},
                               {"parameters", cost.parameters},
                               {"flops_per_token", flops_per_token},
                               {"repops", "repops v1"},
                               {"mesh", {{"replicas", R.mesh.replicas}, {"shards", R.mesh.shards}}},
                               {"val_unigram_entropy", unigram}};
  rd.Create(opt.recipe_path, R.text, info);
  // The run keeps the manifest it hashed: an audit on another copy of the data names the shards
  // that differ from it (audit/published_run.h).
  const std::string manifest = ReadFileToString(run.manifest_path);
  TRAIL_CHECK(ToHex(Sha256({reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size()})) ==
                  run.manifest_sha,
              run.manifest_path, " changed while the run started");
  WriteFileAtomic(rd.manifest_path(), manifest);
  lock.emplace(rd.dir());
  if (run.engine.params_sharded()) return;  // checkpoint 0 is written by every process
  SaveCheckpoint(rd.dir(), st, run.id());
  rd.MarkStarted();
}

// A resume: process 0 picks the newest valid checkpoint (setting damaged ones aside) and the
// others load the same one; the trajectory checked against it (a torn last line cut off),
// metrics trimmed. Returns, on process 0, the recorded steps after the checkpoint, which the
// resumed run must reproduce exactly.
std::vector<TrajectoryRecord> Resume(const TrainOptions& opt, const RunDirectory& rd,
                                     LoadedRun& run, TrainState& st,
                                     collectives::Communicator& comm,
                                     std::optional<RunLock>& lock) {
  const bool lead = comm.rank() == 0;
  // Sharded parameters: process 0 verifies the files only, and every process reads its ranges.
  const bool ranges = run.engine.params_sharded();
  const int64_t parameters = st.params.numel();
  if (lead) {
    lock.emplace(rd.dir());
    const auto say = [&](const std::string& s) { Say(opt.quiet, s); };
    if (ranges) {
      st.step = rd.NewestValidCheckpoint(
          run.id(), [&](const std::string& d) { VerifyCheckpoint(d, run.id(), parameters); }, say);
    } else {
      rd.LoadNewestValidCheckpoint(run.id(), st, say);
    }
  }
  const std::vector<uint8_t> step(reinterpret_cast<const uint8_t*>(&st.step),
                                  reinterpret_cast<const uint8_t*>(&st.step) + sizeof st.step);
  const std::vector<uint8_t> chosen = comm.AllGather(lead ? step : std::vector<uint8_t>{})[0];
  int64_t s = 0;
  std::memcpy(&s, chosen.data(), sizeof s);
  if (ranges) {
    run.engine.LoadCheckpointShared(CheckpointDir(rd.dir(), s), run.id(), st);
  } else if (!lead) {
    LoadCheckpoint(CheckpointDir(rd.dir(), s), run.id(), st);
  }
  if (!lead) return {};
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
  const model::ModelCost cost = model::Cost(R.model, run.stream.max_seq_len());
  const data::StreamConfig& sc = run.stream.manifest().stream;
  Say(quiet,
      "model: " + std::to_string(cost.parameters) + " parameters, " +
          FormatNumber("%.3g", MeanFlopsPerToken(R.model, sc, R.loop.steps)) +
          " FLOPs/token (6N + attention" +
          (sc.seq_len_phases.empty() ? "" : ", mean over the length phases") + "), " +
          "activations " + FormatNumber("%.1f", run.engine.activation_bytes() / 1048576.0) +
          " MiB" + (R.loop.recompute == model::Recompute::kLayers ? " (layers recomputed)" : "") +
          "; mesh " + std::to_string(R.mesh.replicas) + " replicas x " +
          std::to_string(R.mesh.shards) + " shards on " + std::to_string(run.engine.comm().size()) +
          " process(es); backend " + run.engine.backend().description());
  if (unigram.empty()) return;
  std::string u;
  for (const auto& [d, h] : unigram) u += " " + d + "=" + FormatNumber("%.3f", h);
  Say(quiet, "validation unigram entropy (the loss to beat):" + u);
}

}  // namespace

TrainSummary RunTraining(const TrainOptions& opt) {
  collectives::Communicator& comm = opt.comm != nullptr ? *opt.comm : collectives::SingleProcess();
  const bool lead = comm.rank() == 0;
  TrainOptions o = opt;
  o.quiet = opt.quiet || !lead;  // one process speaks for the job
  const RunDirectory rd(o.run_dir);
  const std::string manifest = ManifestToUse(o, rd);
  CheckStartable(o, rd);
  comm.Barrier();  // every process has checked the directory before process 0 writes to it
  LoadedRun run(o.resume ? rd.recipe_path() : o.recipe_path, manifest,
                data::StreamOptions{o.verify_shards, {}}, comm, o.device);
  const Recipe& R = run.recipe;
  std::optional<SigningKey> key;  // loaded first, so a bad key fails before any step
  if (lead && !o.sign_key.empty()) key.emplace(SigningKey::Load(o.sign_key));
  TRAIL_CHECK(!key || key->has_private(), o.sign_key,
              " is a public key: signing the run's attestation needs the private .key file");
  TrainState st(R.model, run.engine.backend(),
                run.engine.params_sharded() ? model::Memory::kUnbound : model::Memory::kAllocated);
  SpikeMonitor monitor(R.monitor);
  const std::map<std::string, double> unigram =
      lead ? run.UnigramEntropy() : std::map<std::string, double>{};
  std::vector<TrajectoryRecord> expected;  // recorded steps a resume must reproduce
  std::optional<RunLock> lock;             // held by process 0, which writes the run
  if (o.resume) {
    expected = Resume(o, rd, run, st, comm, lock);
    monitor.RestoreState(st.monitor_state);
  } else {
    st.monitor_state = monitor.StateJson();
    StartFresh(o, rd, run, unigram, st, lead, lock);
  }
  run.engine.AdoptState(st);  // several processes: each keeps its range of the moments
  if (!o.resume && run.engine.params_sharded()) {  // checkpoint 0 from every process's range
    SaveCheckpointShared(rd.dir(), st, run.id(), comm, run.engine.CheckpointShareNow(st));
    if (lead) rd.MarkStarted();
  }
  SayModel(o.quiet, run, unigram);

  TrainSummary sum;
  const Digest genesis = o.trace_every > 0 && lead ? rd.ReadInfo().genesis : Digest{};
  std::optional<LineAppender> traj;
  const int64_t last = o.stop_after >= 0 ? std::min(R.loop.steps, o.stop_after) : R.loop.steps;
  const int64_t first_step = st.step;
  std::optional<StepReporter> reporter;
  if (lead) {
    traj.emplace(rd.trajectory_path());
    reporter.emplace(run, monitor, rd.metrics_path(), st.step, last, o.quiet);
  }
  while (st.step < last) {
    StepResult r;
    std::string line;
    if (o.trace_every > 0 && st.step % o.trace_every == 0) {
      StepTrace trace;
      line = TracedStepAndChain(run.engine, st, r, genesis, trace);
      if (lead) {
        WriteStepTrace(TracePath(rd.dir(), r.step), trace);
        if (key) SignStepTrace(TracePath(rd.dir(), r.step), trace, *key);
      }
    } else {
      line = StepAndChain(run.engine, st, r);
    }
    const int64_t idx = r.step - (expected.empty() ? 0 : expected.front().step);
    if (lead && idx < static_cast<int64_t>(expected.size())) {
      const std::string diff = FirstDifference(expected[idx].line, line);
      TRAIL_CHECK(diff.empty(), "resume diverged at step ", r.step, ": ", diff,
                  " — the resumed state does not reproduce the recorded trajectory");
      ++sum.steps_verified_on_resume;
    } else if (lead) {
      traj->Line(line);
    }
    // Every process scores its share of the validation windows (LoadedRun::Evaluate).
    const std::map<std::string, double> validation =
        EvaluatesAfter(R.loop, st.step, !run.evals.empty()) ? run.Evaluate(st.params)
                                                            : std::map<std::string, double>{};
    // Every process takes part where the parameters are sharded (gathered unit by unit).
    const nlohmann::json norms =
        LogsAfter(R.loop, first_step, st.step) ? WeightNorms(run.engine, st) : nlohmann::json();
    if (lead) {
      const double val = reporter->Record(r, st, validation, norms);
      if (val >= 0) sum.last_val_loss = val;
    }
    const bool ckpt_now = (R.loop.checkpoint_every > 0 && st.step % R.loop.checkpoint_every == 0) ||
                          st.step == R.loop.steps;
    if (ckpt_now) {
      if (lead) st.monitor_state = monitor.StateJson();
      if (comm.size() > 1 || run.engine.params_sharded()) {  // each writes its range
        SaveCheckpointShared(rd.dir(), st, run.id(), comm, run.engine.CheckpointShareOf(st, r));
      } else {
        SaveCheckpoint(rd.dir(), st, run.id());
      }
      if (lead) ApplyRetention(rd.dir(), R.loop.keep_checkpoints);
    }
  }
  if (lead && st.step == R.loop.steps) {
    WriteRunAttestation(rd, RunStatement(rd, run.manifest_path), key ? &*key : nullptr);
  }
  sum.steps_done = st.step;
  sum.final_chain = ToHex(st.chain);
  sum.final_params = ToHex(run.engine.ParamsHash(st));
  const uint64_t peak = PeakResidentBytes();
  sum.peak_resident_bytes = collectives::AllGatherItems<uint64_t>(comm, std::span(&peak, 1));
  sum.gathered_param_bytes = run.engine.gathered_param_bytes();
  return sum;
}

}  // namespace trail::train
