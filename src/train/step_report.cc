#include "train/step_report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "data/batch_schedule.h"

namespace trail::train {
namespace {

// L2 norm of each parameter group: a layer ("layers.3") or a top-level tensor.
}  // namespace

nlohmann::json WeightNorms(StepEngine& engine, TrainState& st) {
  std::map<std::string, double> groups;
  engine.VisitParameters(st, [&](const DeviceTensor& t) {
    std::string g = t.name();
    if (g.rfind("layers.", 0) == 0) g = g.substr(0, g.find('.', 7));
    groups[g] += double(engine.backend().SumSq(t.data<float>(), t.numel()));
  });
  nlohmann::json j = nlohmann::json::object();
  for (auto& [g, v] : groups) j[g] = std::sqrt(v);
  return j;
}

bool LogsAfter(const LoopConfig& loop, int64_t first_step, int64_t steps_done) {
  return steps_done % loop.log_every == 0 || steps_done == loop.steps ||
         steps_done == first_step + 1;
}

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) / 60) % 60);
  return buf;
}

std::string FormatNumber(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

void Say(bool quiet, const std::string& line) {
  if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
}

StepReporter::StepReporter(LoadedRun& run, SpikeMonitor& monitor, const std::string& metrics_path,
                           int64_t first_step, int64_t last_step, bool quiet)
    : run_(run),
      monitor_(monitor),
      metrics_(metrics_path),
      first_step_(first_step),
      last_step_(last_step),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()) {}

bool EvaluatesAfter(const LoopConfig& loop, int64_t steps_done, bool has_validation) {
  return has_validation &&
         ((loop.eval_every > 0 && steps_done % loop.eval_every == 0) || steps_done == loop.steps);
}

double StepReporter::Record(const StepResult& r, const TrainState& st,
                            const std::map<std::string, double>& validation,
                            const nlohmann::json& weight_norms) {
  const LoopConfig& loop = run_.recipe.loop;
  tokens_run_ += r.input_tokens;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double tok_s = double(tokens_run_) / std::max(elapsed, 1e-9);
  nlohmann::json m = {{"step", r.step},
                      {"loss", r.loss},
                      {"lr", r.lr},
                      {"tokens", r.tokens_before + r.input_tokens},
                      {"targets", r.target_tokens},
                      {"grad_norm", r.grad_norm},
                      {"grad_norm_clipped", r.grad_norm * r.clip_coef},
                      {"clip_coef", r.clip_coef},
                      {"skipped", SkipReasonName(r.skip)},
                      {"tok_s", tok_s},
                      {"step_s", r.seconds},
                      {"hash_s", r.hash_seconds},
                      {"comm_s", r.comm_seconds},
                      {"sent_bytes", r.bytes_sent}};
  if (run_.recipe.model.z_loss > 0) m["z_loss"] = r.z_loss;
  std::vector<std::string> alert_text;
  nlohmann::json alerts = nlohmann::json::array();
  for (const Alert& a : monitor_.Observe(r.step, r.loss)) {
    alerts.push_back(nlohmann::json::parse(a.ToJson()));
    alert_text.push_back(a.kind + " at step " + std::to_string(a.step));
  }
  if (r.skipped()) {
    alert_text.push_back(std::string("update skipped (") + SkipReasonName(r.skip) + ")");
  }
  if (!alerts.empty()) m["alerts"] = alerts;
  const bool log_now = LogsAfter(loop, first_step_, st.step);
  if (!weight_norms.is_null()) m["weight_norms"] = weight_norms;
  const bool eval_now = !validation.empty();
  std::string val_text;
  double val_mean = -1;
  if (eval_now) {
    val_mean = 0;
    nlohmann::json val = nlohmann::json::object();
    for (const auto& [domain, loss] : validation) {
      val[domain] = loss;
      val_mean += loss / double(run_.evals.size());
      val_text += " " + domain + "=" + FormatNumber("%.3f", loss);
    }
    m["val"] = val;
  }
  metrics_.Line(m.dump());
  if (quiet_ || !(log_now || eval_now || !alert_text.empty())) return val_mean;
  // Remaining input tokens over the rate so far (batches and windows may still grow).
  const uint64_t left = data::ScheduledTokens(run_.stream.manifest().stream, st.step, last_step_);
  const double eta = double(left) / std::max(tok_s, 1e-9);
  std::string s = "step " + std::to_string(st.step) + "/" + std::to_string(loop.steps) + "  loss " +
                  FormatNumber("%.4f", r.loss) + "  lr " + FormatNumber("%.2e", r.lr) + "  |g| " +
                  FormatNumber("%.3f", r.grad_norm) + "  " + FormatNumber("%.0f", tok_s) +
                  " tok/s  ETA " + FormatDuration(eta);
  if (!val_text.empty()) s += "  val" + val_text;
  for (const std::string& a : alert_text) s += "  ALERT " + a;
  Say(false, s);
  return val_mean;
}

}  // namespace trail::train
