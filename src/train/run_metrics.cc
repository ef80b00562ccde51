#include "train/run_metrics.h"

#include <fstream>

#include "core/error.h"

namespace trail::train {
namespace {

double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

void AddSamples(const nlohmann::json& j, const char* key, int64_t step, double tokens,
                std::map<std::string, Samples>& out) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return;
  for (const auto& [name, value] : it->items()) {
    if (!value.is_number()) continue;
    Samples& s = out[name];
    s.steps.push_back(step);
    s.tokens.push_back(tokens);
    s.values.push_back(value.get<double>());
  }
}

}  // namespace

RunMetrics ReadRunMetrics(const std::string& path) {
  std::ifstream in(path);
  TRAIL_CHECK(in.good(), path, ": cannot be read");
  RunMetrics m;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    TRAIL_CHECK(
        !j.is_discarded() && j.is_object() && j.contains("step") && j["step"].is_number_integer(),
        path, ":", number, ": not a metrics record");
    const int64_t step = j["step"].get<int64_t>();
    const double tokens = NumberOr(j, "tokens", NAN);
    m.step.push_back(step);
    m.tokens.push_back(tokens);
    m.loss.push_back(NumberOr(j, "loss", NAN));
    m.lr.push_back(NumberOr(j, "lr", NAN));
    m.grad_norm.push_back(NumberOr(j, "grad_norm", NAN));
    m.grad_norm_clipped.push_back(NumberOr(j, "grad_norm_clipped", NAN));
    m.tok_s.push_back(NumberOr(j, "tok_s", NAN));
    m.skipped.push_back(j.value("skipped", std::string()));
    AddSamples(j, "val", step, tokens, m.val);
    AddSamples(j, "weight_norms", step, tokens, m.weight_norms);
    if (j.contains("alerts") && j["alerts"].is_array()) {
      for (const auto& a : j["alerts"]) m.alerts.push_back(a);
    }
  }
  return m;
}

}  // namespace trail::train
