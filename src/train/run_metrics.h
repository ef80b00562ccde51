// A run's metrics.jsonl (written by step_report.h) read back as columns, for the report's
// charts and the planner's loss points: one entry per executed step, in file order (a resumed
// run's file holds each step once; run_dir.h trims it on resume).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trail::train {

struct Samples {  // a quantity recorded on some steps only
  std::vector<double> tokens, values;
  std::vector<int64_t> steps;
};

struct RunMetrics {
  std::vector<int64_t> step;
  std::vector<double> tokens, loss, lr, grad_norm, grad_norm_clipped, tok_s;
  std::vector<std::string> skipped;             // "" or the reason the update was skipped
  std::map<std::string, Samples> val;           // per validation domain (evaluation steps)
  std::map<std::string, Samples> weight_norms;  // per tensor group (log steps)
  std::vector<nlohmann::json> alerts;           // the spike monitor's, with their step
};

// Throws trail::Error naming the file and line for a line that is not a metrics object.
RunMetrics ReadRunMetrics(const std::string& path);

}  // namespace trail::train
