// The loss-spike monitor: a rolling median / MAD detector on a stream of
// values (the training loss), with unconditional alerts for NaN/Inf and a classification of
// each flagged jump once the next values show whether it fell back (spike) or stayed up
// (sustained_shift). It only raises alerts; it never changes training.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace trail::train {

struct MonitorConfig {
  int64_t window = 32;      // rolling history of accepted values
  int64_t min_history = 5;  // no verdicts before this many values
  double threshold = 6.0;   // flag when (x - median) / (1.4826 MAD) exceeds this
  int64_t confirm = 3;      // values after a flag that decide spike vs sustained_shift
  double min_scale = 1e-3;  // MAD floor, relative to |median| (a flat history still has a scale)
};

struct Alert {
  int64_t step = 0;  // the step whose value raised it (for a classification: the flag's)
  std::string kind;  // "non_finite", "anomaly" (flagged, pending), "spike", "sustained_shift"
  double value = 0, median = 0, scale = 0, z = 0;
  std::string ToJson() const;
};

class SpikeMonitor {
 public:
  explicit SpikeMonitor(const MonitorConfig& c = {}) : c_(c) {}
  // Feeds the value of `step`; returns the alerts it raises (possibly a classification of an
  // earlier anomaly together with this step's own verdict).
  std::vector<Alert> Observe(int64_t step, double value);

  // Exact state, for checkpoints (a resumed run raises the same alerts).
  std::string StateJson() const;
  void RestoreState(const std::string& json);

 private:
  struct Pending {
    Alert flag;
    std::vector<double> after;
  };
  MonitorConfig c_;
  std::deque<double> history_;
  std::optional<Pending> pending_;
};

}  // namespace trail::train
