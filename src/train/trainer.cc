#include "train/trainer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/resident_memory.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "repops/devices.h"
#include "train/checkpoint.h"
#include "train/imported_base.h"
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

// A run continuing an import whose data was tokenized with the base's contract keeps that
// contract and its tokenizer.json (both named in import.json) beside its manifest copy, so
// generate, eval and export find the run's tokenizer in the run itself.
void KeepBaseTokenizer(const std::string& base_dir, const data::ContractHash& data_contract,
                       const RunDirectory& rd) {
  const std::string contract = base_dir + "/tokenizer.contract.json";
  const Digest d = Sha256OfFile(contract);
  if (!std::equal(d.begin(), d.end(), data_contract.begin())) return;  // other data: not ours
  for (const char* name : {"tokenizer.json", "tokenizer.contract.json"}) {
    WriteFileAtomic(rd.dir() + "/" + name, ReadFileToString(base_dir + "/" + name));
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
  if (R.init.imported) {
    TRAIL_CHECK(!opt.init_from.empty(), R.path,
                ": the recipe continues an imported model ([init] from = \"import\"); pass "
                "--init-from with the directory trail import wrote");
    const ImportedBase base = ReadImportedBase(opt.init_from);
    CheckRecipeContinues(R, base);
    run.engine.SetParameters(st, LoadImportedParams(base, run.engine.backend()));
  } else {
    TRAIL_CHECK(opt.init_from.empty(), R.path,
                ": --init-from needs a recipe whose [init] names the import; start from the "
                "recipe.toml in ",
                opt.init_from);
    run.engine.InitParameters(st);  // sharded: each process keeps its range, never the whole
  }
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
  // The run keeps the base's record, which its attestation names (run_attestation.h).
  if (R.init.imported) {
    WriteFileAtomic(rd.import_path(),
                    ReadFileToString(opt.init_from + "/" + std::string(kImportRecordFile)));
    KeepBaseTokenizer(opt.init_from, run.stream.manifest().tokenizer.contract, rd);
  }
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

// One run of `trail train` on this process: the directory checked, the run loaded, the state
// started or resumed, then the loop, one named step at a time. Process 0 ("lead") writes the
// run directory and speaks for the job; every process computes.
class TrainingJob {
 public:
  explicit TrainingJob(const TrainOptions& opt)
      : comm_(opt.comm != nullptr ? *opt.comm : collectives::SingleProcess()),
        lead_(comm_.rank() == 0),
        o_(Quieted(opt, lead_)),
        rd_(o_.run_dir),
        run_(o_.resume ? rd_.recipe_path() : o_.recipe_path, CheckedManifest(o_, rd_, comm_),
             data::StreamOptions{o_.verify_shards, {}}, comm_, repops::MakeBackend(o_.device)),
        st_(run_.recipe.model, run_.engine.backend(),
            run_.engine.params_sharded() ? model::Memory::kUnbound : model::Memory::kAllocated),
        monitor_(run_.recipe.monitor) {
    // The key is loaded before any step, so a bad key fails first.
    if (lead_ && !o_.sign_key.empty()) key_.emplace(SigningKey::Load(o_.sign_key));
    TRAIL_CHECK(!key_ || key_->has_private(), o_.sign_key,
                " is a public key: signing the run's attestation needs the private .key file");
  }

  TrainSummary Run() {
    Start();
    const Recipe& R = run_.recipe;
    const int64_t last = o_.stop_after >= 0 ? std::min(R.loop.steps, o_.stop_after) : R.loop.steps;
    first_step_ = st_.step;
    if (lead_) {
      traj_.emplace(rd_.trajectory_path());
      reporter_.emplace(run_, monitor_, rd_.metrics_path(), st_.step, last, o_.quiet);
    }
    while (st_.step < last) {
      StepResult r;
      Record(r, Step(r));
      Observe(r);
      CheckpointIfDue(r);
    }
    return Finish();
  }

 private:
  static TrainOptions Quieted(const TrainOptions& opt, bool lead) {
    TrainOptions o = opt;
    o.quiet = opt.quiet || !lead;  // one process speaks for the job
    return o;
  }
  // The manifest to train on, once every process has checked the directory (before process 0
  // writes to it).
  static std::string CheckedManifest(const TrainOptions& o, const RunDirectory& rd,
                                     collectives::Communicator& comm) {
    const std::string manifest = ManifestToUse(o, rd);
    CheckStartable(o, rd);
    comm.Barrier();
    return manifest;
  }

  // Resume from the newest valid checkpoint, or start fresh; then the engine adopts the state.
  void Start() {
    const std::map<std::string, double> unigram =
        lead_ ? run_.UnigramEntropy() : std::map<std::string, double>{};
    if (o_.resume) {
      // --init-from again on resume: it must be the base the run started from.
      if (!o_.init_from.empty()) CheckRecipeContinues(run_.recipe, ReadImportedBase(o_.init_from));
      expected_ = Resume(o_, rd_, run_, st_, comm_, lock_);
      monitor_.RestoreState(st_.monitor_state);
    } else {
      st_.monitor_state = monitor_.StateJson();
      StartFresh(o_, rd_, run_, unigram, st_, lead_, lock_);
    }
    run_.engine.AdoptState(st_);  // several processes: each keeps its range of the moments
    if (!o_.resume && run_.engine.params_sharded()) {  // checkpoint 0 from every process's range
      SaveCheckpointShared(rd_.dir(), st_, run_.id(), comm_, run_.engine.CheckpointShareNow(st_));
      if (lead_) rd_.MarkStarted();
    }
    SayModel(o_.quiet, run_, unigram);
    if (o_.trace_every > 0 && lead_) genesis_ = rd_.ReadInfo().genesis;
  }

  // The next step, traced (the trace written, and signed with a key) when due: its line.
  std::string Step(StepResult& r) {
    if (o_.trace_every <= 0 || st_.step % o_.trace_every != 0) {
      return StepAndChain(run_.engine, st_, r);
    }
    StepTrace trace;
    const std::string line = TracedStepAndChain(run_.engine, st_, r, genesis_, trace);
    if (lead_) {
      WriteStepTrace(TracePath(rd_.dir(), r.step), trace);
      if (key_) SignStepTrace(TracePath(rd_.dir(), r.step), trace, *key_);
    }
    return line;
  }

  // A resumed step must reproduce its recorded line; a new one is appended to the trajectory.
  void Record(const StepResult& r, const std::string& line) {
    if (!lead_) return;
    const int64_t idx = r.step - (expected_.empty() ? 0 : expected_.front().step);
    if (idx < static_cast<int64_t>(expected_.size())) {
      const std::string diff = FirstDifference(expected_[idx].line, line);
      TRAIL_CHECK(diff.empty(), "resume diverged at step ", r.step, ": ", diff,
                  " — the resumed state does not reproduce the recorded trajectory");
      ++sum_.steps_verified_on_resume;
    } else {
      traj_->Line(line);
    }
  }

  // Validation (every process scores its share), weight norms (every process takes part where
  // the parameters are sharded), then the metrics line.
  void Observe(const StepResult& r) {
    const Recipe& R = run_.recipe;
    const std::map<std::string, double> validation =
        EvaluatesAfter(R.loop, st_.step, !run_.evals.empty()) ? run_.Evaluate(st_.params)
                                                              : std::map<std::string, double>{};
    const nlohmann::json norms =
        LogsAfter(R.loop, first_step_, st_.step) ? WeightNorms(run_.engine, st_) : nlohmann::json();
    if (!lead_) return;
    const double val = reporter_->Record(r, st_, validation, norms);
    if (val >= 0) sum_.last_val_loss = val;
  }

  void CheckpointIfDue(const StepResult& r) {
    const Recipe& R = run_.recipe;
    const bool due = (R.loop.checkpoint_every > 0 && st_.step % R.loop.checkpoint_every == 0) ||
                     st_.step == R.loop.steps;
    if (!due) return;
    if (lead_) st_.monitor_state = monitor_.StateJson();
    if (comm_.size() > 1 || run_.engine.params_sharded()) {  // each writes its range
      SaveCheckpointShared(rd_.dir(), st_, run_.id(), comm_, run_.engine.CheckpointShareOf(st_, r));
    } else {
      SaveCheckpoint(rd_.dir(), st_, run_.id());
    }
    if (lead_) ApplyRetention(rd_.dir(), R.loop.keep_checkpoints, R.init.imported);
  }

  // The attestation once the recipe's last step is done, and the summary.
  TrainSummary Finish() {
    if (lead_ && st_.step == run_.recipe.loop.steps) {
      WriteRunAttestation(rd_, RunStatement(rd_, run_.manifest_path), key_ ? &*key_ : nullptr);
    }
    sum_.steps_done = st_.step;
    sum_.final_chain = ToHex(st_.chain);
    sum_.final_params = ToHex(run_.engine.ParamsHash(st_));
    const uint64_t peak = PeakResidentBytes();
    sum_.peak_resident_bytes = collectives::AllGatherItems<uint64_t>(comm_, std::span(&peak, 1));
    sum_.gathered_param_bytes = run_.engine.gathered_param_bytes();
    return sum_;
  }

  collectives::Communicator& comm_;
  const bool lead_;
  const TrainOptions o_;
  const RunDirectory rd_;
  LoadedRun run_;
  TrainState st_;
  SpikeMonitor monitor_;
  std::optional<SigningKey> key_;
  std::vector<TrajectoryRecord> expected_;  // recorded steps a resume must reproduce
  std::optional<RunLock> lock_;             // held by process 0, which writes the run
  Digest genesis_{};                        // the run's, for traces
  std::optional<LineAppender> traj_;
  std::optional<StepReporter> reporter_;
  int64_t first_step_ = 0;
  TrainSummary sum_;
};

}  // namespace

TrainSummary RunTraining(const TrainOptions& opt) { return TrainingJob(opt).Run(); }

}  // namespace trail::train
