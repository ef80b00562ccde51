#include "plan/run_points.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "train/run_dir.h"
#include "train/run_metrics.h"

namespace trail::plan {
namespace {

using train::ReadRunMetrics;
using train::RunMetrics;

double ParseNumber(const std::string& text, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  TRAIL_CHECK(used > 0 && used == text.size(), where, ": '", text, "' is not a number");
  return v;
}

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) {
    const size_t a = cell.find_first_not_of(" \t\r"), b = cell.find_last_not_of(" \t\r");
    out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return out;
}

}  // namespace

SourcedPoint LossPointOfRun(const std::string& run_dir) {
  const train::RunDirectory run(run_dir);
  const train::RunInfo info = run.ReadInfo();
  SourcedPoint out{run_dir, {}};
  TRAIL_CHECK(info.json.contains("parameters") && info.json["parameters"].is_number(),
              run.info_path(), ": no \"parameters\"");
  out.point.params = info.json["parameters"].get<double>();
  // The last evaluation: the latest step of any domain's samples (the trainer evaluates every
  // domain on the same steps).
  const RunMetrics m = ReadRunMetrics(run.metrics_path());
  int64_t last = -1;
  for (const auto& [domain, samples] : m.val) last = std::max(last, samples.steps.back());
  TRAIL_CHECK(last >= 0, run.metrics_path(),
              ": no step with validation losses yet (the last step always evaluates; set "
              "[train] eval_every for earlier ones)");
  double sum = 0;
  int domains = 0;
  for (const auto& [domain, samples] : m.val) {
    if (samples.steps.back() != last) continue;
    sum += samples.values.back();
    out.point.tokens = samples.tokens.back();
    ++domains;
  }
  out.point.loss = sum / domains;
  return out;
}

std::vector<SourcedPoint> LossPointsFromCsv(const std::string& path) {
  std::ifstream in(path);
  TRAIL_CHECK(in.good(), path, ": cannot be read");
  std::string line;
  int number = 0, col[3] = {-1, -1, -1};
  const char* names[3] = {"params", "tokens", "loss"};
  std::vector<SourcedPoint> out;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = SplitCsv(line);
    const std::string where = path + ":" + std::to_string(number);
    if (col[0] < 0) {
      for (size_t i = 0; i < cells.size(); ++i) {
        for (int k = 0; k < 3; ++k)
          if (cells[i] == names[k]) col[k] = static_cast<int>(i);
      }
      TRAIL_CHECK(col[0] >= 0 && col[1] >= 0 && col[2] >= 0, where,
                  ": the header must name the columns params, tokens and loss");
      continue;
    }
    double v[3];
    for (int k = 0; k < 3; ++k) {
      TRAIL_CHECK(static_cast<size_t>(col[k]) < cells.size(), where, ": no ", names[k], " column");
      v[k] = ParseNumber(cells[static_cast<size_t>(col[k])], where);
    }
    out.push_back({where, {v[0], v[1], v[2]}});
  }
  TRAIL_CHECK(col[0] >= 0, path, ": empty (expected a header params,tokens,loss and rows)");
  return out;
}

}  // namespace trail::plan
