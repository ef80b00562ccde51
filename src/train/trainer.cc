#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "data/eval_stream.h"
#include "data/manifest.h"
#include "data/packing.h"
#include "data/stream.h"
#include "repops/kernels.h"
#include "train/checkpoint.h"
#include "train/recipe.h"
#include "train/spike_monitor.h"
#include "train/step.h"
#include "train/trajectory.h"

namespace trail::train {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

std::string FileSha(const std::string& path) { return ToHex(Sha256OfFile(path)); }

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) / 60) % 60);
  return buf;
}

// Everything a run needs in memory: recipe, data, engine, evaluation sets.
struct Run {
  Run(const std::string& recipe_path, const std::string& manifest_path, bool verify)
      : manifest_path(fs::absolute(manifest_path).string()),
        manifest_sha(FileSha(manifest_path)),
        stream(data::LoadManifest(manifest_path), data::StreamOptions{verify}),
        recipe(LoadRecipe(recipe_path, stream.manifest().tokenizer.vocab_size)),
        engine(recipe, stream) {
    for (const data::EvalSet& e : stream.manifest().validation) {
      evals.emplace_back(e.domain, std::make_unique<data::EvalStream>(
                                       stream.manifest(), "validation", e.domain,
                                       data::StreamOptions{verify}));
    }
  }
  RunIdentity id() const { return {recipe.sha256, manifest_sha}; }

  // Entropy (nats) of the target tokens of each validation domain's evaluated windows: the loss
  // of the best unigram model of that very text, the baseline a language model must beat.
  std::map<std::string, double> UnigramEntropy() {
    std::map<std::string, double> out;
    const data::StreamConfig& sc = stream.manifest().stream;
    data::PackedBatch pb;
    data::RawWindow raw;
    for (auto& [domain, es] : evals) {
      std::map<int32_t, int64_t> counts;
      int64_t total = 0;
      const int64_t n = std::min<int64_t>(recipe.loop.eval_windows, es->num_windows());
      for (int64_t i = 0; i < n; ++i) {
        pb.Resize(1, sc.seq_len);
        es->Window(static_cast<uint64_t>(i), raw);
        data::PackRow(raw, sc.semantics, pb, 0);
        for (int32_t l : pb.labels) {
          if (l != data::kIgnoreLabel) ++counts[l], ++total;
        }
      }
      double h = 0;
      for (const auto& [tok, c] : counts) {
        const double p = double(c) / double(total);
        h -= p * std::log(p);
      }
      out[domain] = h;
    }
    return out;
  }

  // Mean loss per target over the first eval_windows windows of each validation domain.
  std::map<std::string, double> Evaluate(const model::ParameterSet& params) {
    std::map<std::string, double> out;
    const data::StreamConfig& sc = stream.manifest().stream;
    const int64_t rows = sc.micro_batch_windows;
    data::PackedBatch pb;
    data::RawWindow raw;
    for (auto& [domain, es] : evals) {
      const int64_t n = std::min<int64_t>(recipe.loop.eval_windows, es->num_windows());
      double nll = 0;
      int64_t valid = 0;
      for (int64_t i = 0; i < n; i += rows) {
        pb.Resize(rows, sc.seq_len);
        for (int64_t r = 0; r < rows; ++r) {
          if (i + r < n) {
            es->Window(static_cast<uint64_t>(i + r), raw);
            data::PackRow(raw, sc.semantics, pb, r);
          } else {
            data::PackPaddingRow(pb, r, stream.pad_token());
          }
        }
        const repops::CrossEntropySums s = engine.Score(params, pb);
        nll += s.nll_sum;
        valid += s.valid;
      }
      out[domain] = valid > 0 ? nll / double(valid) : 0.0;
    }
    return out;
  }

  std::string manifest_path, manifest_sha;
  data::CanonicalStream stream;
  Recipe recipe;
  StepEngine engine;
  std::vector<std::pair<std::string, std::unique_ptr<data::EvalStream>>> evals;
};

std::string WeightNormsJson(const model::ParameterSet& p) {
  nlohmann::json j = nlohmann::json::object();
  const repops::Kernels& k = repops::ActiveKernels();
  std::map<std::string, double> groups;
  for (const Tensor& t : p.tensors()) {
    std::string g = t.name();
    if (g.rfind("layers.", 0) == 0) g = g.substr(0, g.find('.', 7));
    groups[g] += double(k.sum_sq(t.data<float>(), static_cast<size_t>(t.numel())));
  }
  for (auto& [g, v] : groups) j[g] = std::sqrt(v);
  return j.dump();
}

class Appender {
 public:
  explicit Appender(const std::string& path) : f_(std::fopen(path.c_str(), "ab")) {
    TRAIL_CHECK(f_ != nullptr, path, ": cannot open for appending");
  }
  ~Appender() { std::fclose(f_); }
  void Line(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), f_);
    std::fputc('\n', f_);
    std::fflush(f_);
  }
 private:
  std::FILE* f_;
};

// Keeps the lines of metrics.jsonl whose step is < `step` (a resume re-executes the rest).
void TrimMetrics(const std::string& path, int64_t step) {
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

// run.json of an existing run, and its genesis hash.
nlohmann::json ReadRunInfo(const std::string& run_dir, Digest* genesis) {
  const std::string path = run_dir + "/run.json";
  try {
    nlohmann::json info = nlohmann::json::parse(ReadFileToString(path));
    *genesis = DigestFromHex(info.at("genesis").get<std::string>(), path + ": genesis");
    return info;
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL(path, ": malformed: ", e.what());
  }
  return {};
}

// Runs the state's next step and chains its record: returns the trajectory line.
std::string StepAndChain(StepEngine& engine, TrainState& st, StepResult& r) {
  r = engine.Run(st);
  const std::string body = TrajectoryBody(r);
  st.chain = ChainNext(st.chain, body);
  return TrajectoryLine(body, st.chain);
}

void Say(bool quiet, const std::string& s) {
  if (!quiet) std::fprintf(stderr, "%s\n", s.c_str());
}

}  // namespace

TrainSummary RunTraining(const TrainOptions& opt) {
  TRAIL_CHECK(!opt.run_dir.empty(), "train: --run DIR is required");
  const std::string run_dir = opt.run_dir;
  std::string manifest_path = opt.manifest_path;
  if (manifest_path.empty() && opt.resume && fs::exists(run_dir + "/run.json")) {
    Digest unused{};
    manifest_path = ReadRunInfo(run_dir, &unused).value("data_manifest", std::string());
  }
  TRAIL_CHECK(!manifest_path.empty(), "train: --data MANIFEST is required");
  const std::string traj_path = run_dir + "/trajectory.jsonl";
  const std::string metrics_path = run_dir + "/metrics.jsonl";
  const std::string run_recipe = run_dir + "/recipe.toml";
  if (!opt.resume) {
    TRAIL_CHECK(!opt.recipe_path.empty(), "train: --recipe R.toml is required");
    TRAIL_CHECK(!fs::exists(traj_path), run_dir,
                " already holds a run (trajectory.jsonl); pass --resume to continue it");
  } else {
    TRAIL_CHECK(fs::exists(run_recipe) && fs::exists(traj_path), run_dir,
                " holds no run to resume (recipe.toml / trajectory.jsonl missing)");
    if (!opt.recipe_path.empty()) {
      TRAIL_CHECK(FileSha(opt.recipe_path) == FileSha(run_recipe), opt.recipe_path,
                  " differs from the run's recipe.toml: a run resumes with its own recipe");
    }
  }
  Run run(opt.resume ? run_recipe : opt.recipe_path, manifest_path, opt.verify_shards);
  const Recipe& R = run.recipe;
  const model::ModelCost cost = model::Cost(R.model, run.stream.seq_len());
  TrainState st(R.model);
  SpikeMonitor monitor(R.monitor);
  std::vector<TrajectoryRecord> expected;  // recorded steps a resume must reproduce
  TrainSummary sum;

  const std::map<std::string, double> unigram = run.UnigramEntropy();
  if (!opt.resume) {
    fs::create_directories(run_dir + "/checkpoints");
    if (fs::absolute(opt.recipe_path) != fs::absolute(run_recipe)) {
      WriteFileAtomic(run_recipe, R.text);
    }
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
    WriteFileAtomic(run_dir + "/run.json", info.dump(2) + "\n");
    WriteFileAtomic(traj_path, "");
    WriteFileAtomic(metrics_path, "");
    st.monitor_state = monitor.StateJson();
    SaveCheckpoint(run_dir, st, run.id());
  } else {
    // The newest checkpoint that verifies; damaged ones are set aside, never deleted.
    std::vector<int64_t> steps = ListCheckpoints(run_dir);
    bool loaded = false;
    for (auto it = steps.rbegin(); it != steps.rend() && !loaded; ++it) {
      const std::string dir = CheckpointDir(run_dir, *it);
      // A checkpoint of another recipe or data is a wrong run, not damage: LoadCheckpoint
      // refuses it and the resume stops.
      std::optional<RunIdentity> owner;
      try {
        owner = CheckpointIdentity(dir);
      } catch (const Error&) {
      }
      try {
        LoadCheckpoint(dir, run.id(), st);
        loaded = true;
        Say(opt.quiet, "resume: from checkpoint step " + std::to_string(st.step));
      } catch (const Error& e) {
        if (owner && (owner->recipe_sha256 != run.id().recipe_sha256 ||
                      owner->manifest_sha256 != run.id().manifest_sha256)) {
          throw;
        }
        Say(opt.quiet, std::string("resume: skipping invalid checkpoint: ") + e.what());
        fs::rename(dir, dir + ".invalid");
      }
    }
    TRAIL_CHECK(loaded, run_dir, ": no valid checkpoint to resume from");
    if (opt.fault == ResumeFault::kDropCursor) st.window_cursor = 0;
    if (opt.fault == ResumeFault::kDropTokens) st.tokens = 0;
    monitor.RestoreState(st.monitor_state);
    Digest genesis{};
    ReadRunInfo(run_dir, &genesis);
    uint64_t complete = 0;
    std::vector<TrajectoryRecord> recs = ReadTrajectory(traj_path, &genesis, &complete);
    if (complete < fs::file_size(traj_path)) fs::resize_file(traj_path, complete);  // torn line
    TRAIL_CHECK(static_cast<int64_t>(recs.size()) >= st.step, traj_path, " holds ", recs.size(),
                " steps but the checkpoint is at step ", st.step);
    TRAIL_CHECK(st.step == 0 || recs[st.step - 1].chain == st.chain, traj_path,
                ": the chained hash at step ", st.step - 1, " differs from the checkpoint's");
    expected.assign(recs.begin() + st.step, recs.end());
    TrimMetrics(metrics_path, st.step);
  }

  Say(opt.quiet, "model: " + std::to_string(cost.parameters) + " parameters, " +
                     Fmt("%.3g", cost.flops_per_token) + " FLOPs/token (6N + attention), " +
                     "activations " + Fmt("%.1f", run.engine.activation_bytes() / 1048576.0) +
                     " MiB; mesh " + std::to_string(R.mesh.replicas) + " replicas x " +
                     std::to_string(R.mesh.shards) + " shards; backend " +
                     repops::ActiveKernels().name);
  if (!unigram.empty()) {
    std::string u;
    for (const auto& [d, h] : unigram) u += " " + d + "=" + Fmt("%.3f", h);
    Say(opt.quiet, "validation unigram entropy (the loss to beat):" + u);
  }
  Appender traj(traj_path), metrics(metrics_path);
  const int64_t last = opt.stop_after >= 0 ? std::min(R.loop.steps, opt.stop_after) : R.loop.steps;
  const auto t_start = Clock::now();
  const int64_t first_step = st.step;
  int64_t tokens_run = 0;
  while (st.step < last) {
    StepResult r;
    const std::string line = StepAndChain(run.engine, st, r);
    const int64_t idx = r.step - (expected.empty() ? 0 : expected.front().step);
    if (!expected.empty() && idx < static_cast<int64_t>(expected.size())) {
      const std::string diff = FirstDifference(expected[idx].line, line);
      TRAIL_CHECK(diff.empty(), "resume diverged at step ", r.step, ": ", diff,
                  " — the resumed state does not reproduce the recorded trajectory");
      ++sum.steps_verified_on_resume;
    } else {
      traj.Line(line);
    }
    tokens_run += r.input_tokens;
    const double elapsed = std::chrono::duration<double>(Clock::now() - t_start).count();
    const double tok_s = double(tokens_run) / std::max(elapsed, 1e-9);
    nlohmann::json m = {{"step", r.step}, {"loss", r.loss}, {"lr", r.lr},
                        {"tokens", r.tokens_before + r.input_tokens}, {"targets", r.target_tokens},
                        {"grad_norm", r.grad_norm}, {"grad_norm_clipped", r.grad_norm * r.clip_coef},
                        {"clip_coef", r.clip_coef}, {"skipped", r.skipped ? r.skip_reason : ""},
                        {"tok_s", tok_s}, {"step_s", r.seconds}, {"hash_s", r.hash_seconds}};
    if (R.model.z_loss > 0) m["z_loss"] = r.z_loss;
    std::vector<std::string> alert_text;
    nlohmann::json alerts = nlohmann::json::array();
    for (const Alert& a : monitor.Observe(r.step, r.loss)) {
      alerts.push_back(nlohmann::json::parse(a.ToJson()));
      alert_text.push_back(a.kind + " at step " + std::to_string(a.step));
    }
    if (r.skipped) alert_text.push_back("update skipped (" + r.skip_reason + ")");
    if (!alerts.empty()) m["alerts"] = alerts;
    const bool is_last = st.step == R.loop.steps;
    const bool log_now = st.step % R.loop.log_every == 0 || is_last || st.step == first_step + 1;
    if (log_now) m["weight_norms"] = nlohmann::json::parse(WeightNormsJson(st.params));
    const bool eval_now = !run.evals.empty() &&
                          ((R.loop.eval_every > 0 && st.step % R.loop.eval_every == 0) || is_last);
    std::string val_text;
    if (eval_now) {
      double mean = 0;
      nlohmann::json val = nlohmann::json::object();
      for (const auto& [domain, loss] : run.Evaluate(st.params)) {
        val[domain] = loss;
        mean += loss / double(run.evals.size());
        val_text += " " + domain + "=" + Fmt("%.3f", loss);
      }
      m["val"] = val;
      sum.last_val_loss = mean;
    }
    metrics.Line(m.dump());
    if (log_now || eval_now || !alert_text.empty()) {
      // Remaining windows over the rate so far (the batch schedule may still grow).
      uint64_t left = 0;
      for (int64_t s = st.step; s < last; ++s) left += run.engine.WindowsAt(s);
      const double eta = double(left * run.stream.seq_len()) / std::max(tok_s, 1e-9);
      std::string s = "step " + std::to_string(st.step) + "/" + std::to_string(R.loop.steps) +
                      "  loss " + Fmt("%.4f", r.loss) + "  lr " + Fmt("%.2e", r.lr) +
                      "  |g| " + Fmt("%.3f", r.grad_norm) + "  " + Fmt("%.0f", tok_s) +
                      " tok/s  ETA " + Duration(eta);
      if (!val_text.empty()) s += "  val" + val_text;
      for (const std::string& a : alert_text) s += "  ALERT " + a;
      Say(opt.quiet, s);
    }
    const bool ckpt_now = (R.loop.checkpoint_every > 0 && st.step % R.loop.checkpoint_every == 0) ||
                          is_last;
    if (ckpt_now) {
      st.monitor_state = monitor.StateJson();
      SaveCheckpoint(run_dir, st, run.id());
      ApplyRetention(run_dir, R.loop.keep_checkpoints);
    }
  }
  sum.steps_done = st.step;
  sum.final_chain = ToHex(st.chain);
  sum.final_params = ToHex(st.params.StateHash());
  return sum;
}

ReplayResult ReplaySegment(const std::string& run_dir, const std::string& manifest_path,
                           int64_t from_step, bool quiet) {
  Digest genesis{};
  const nlohmann::json info = ReadRunInfo(run_dir, &genesis);
  const std::string manifest =
      manifest_path.empty() ? info.value("data_manifest", std::string()) : manifest_path;
  TRAIL_CHECK(!manifest.empty(), run_dir, "/run.json names no data manifest: pass --data");
  Run run(run_dir + "/recipe.toml", manifest, true);
  const std::vector<int64_t> ckpts = ListCheckpoints(run_dir);
  TRAIL_CHECK(!ckpts.empty(), run_dir, ": no checkpoints to replay from");
  if (from_step < 0) from_step = ckpts.size() >= 2 ? ckpts[ckpts.size() - 2] : ckpts.back();
  TRAIL_CHECK(std::find(ckpts.begin(), ckpts.end(), from_step) != ckpts.end(), run_dir,
              ": no checkpoint at step ", from_step);
  TrainState st(run.recipe.model);
  LoadCheckpoint(CheckpointDir(run_dir, from_step), run.id(), st);
  const std::vector<TrajectoryRecord> recs =
      ReadTrajectory(run_dir + "/trajectory.jsonl", &genesis);
  int64_t end = static_cast<int64_t>(recs.size());
  for (int64_t c : ckpts) {
    if (c > from_step) {
      end = std::min(end, c);
      break;
    }
  }
  TRAIL_CHECK(end > from_step, run_dir, ": no recorded steps after checkpoint ", from_step);
  Say(quiet, "replay: steps " + std::to_string(from_step) + ".." + std::to_string(end - 1) +
                 " from checkpoint step " + std::to_string(from_step));
  ReplayResult out;
  while (st.step < end) {
    StepResult r;
    const std::string line = StepAndChain(run.engine, st, r);
    const std::string diff = FirstDifference(recs[r.step].line, line);
    if (!diff.empty()) {
      out.diverged = r.step, out.difference = diff;
      Say(quiet, "replay: step " + std::to_string(r.step) + " DIFFERS: " + diff);
      return out;
    }
    ++out.verified;
  }
  Say(quiet, "replay: " + std::to_string(out.verified) + " steps bit-identical; chain " +
                 ToHex(st.chain));
  return out;
}

}  // namespace trail::train
