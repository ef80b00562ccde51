#include "train/spike_monitor.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/median.h"
#include "core/json_read.h"

namespace trail::train {

std::string Alert::ToJson() const {
  nlohmann::json j = {{"step", step},     {"kind", kind},   {"value", value},
                      {"median", median}, {"scale", scale}, {"z", z}};
  if (!std::isfinite(value)) j["value"] = std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  return j.dump();
}

std::vector<Alert> SpikeMonitor::Observe(int64_t step, double x) {
  std::vector<Alert> out;
  if (!std::isfinite(x)) {
    out.push_back({step, "non_finite", x, 0, 0, 0});
    return out;  // never enters the history
  }
  const std::vector<double> hist(history_.begin(), history_.end());
  double med = 0, scale = 0, z = 0;
  const bool can_judge = static_cast<int64_t>(hist.size()) >= c_.min_history;
  if (can_judge) {
    med = Median(hist);
    std::vector<double> dev;
    for (double h : hist) dev.push_back(std::fabs(h - med));
    scale = std::max(1.4826 * Median(dev), c_.min_scale * std::fabs(med));
    if (scale == 0) scale = c_.min_scale;
    z = (x - med) / scale;
  }
  if (pending_) {
    // Judge the pending flag against the baseline it was flagged on.
    Pending& p = *pending_;
    p.after.push_back(x);
    if (static_cast<int64_t>(p.after.size()) >= c_.confirm) {
      const double after_med = Median(p.after);
      const bool stayed_high = (after_med - p.flag.median) / p.flag.scale > c_.threshold;
      Alert a = p.flag;
      a.kind = stayed_high ? "sustained_shift" : "spike";
      out.push_back(a);
      if (stayed_high) {
        // The new level is the baseline from now on.
        history_.assign(p.after.begin(), p.after.end());
      } else {
        for (double v : p.after) {
          if ((v - p.flag.median) / p.flag.scale <= c_.threshold) history_.push_back(v);
        }
      }
      pending_.reset();
      while (static_cast<int64_t>(history_.size()) > c_.window) history_.pop_front();
    }
    return out;
  }
  if (can_judge && z > c_.threshold) {
    Alert a{step, "anomaly", x, med, scale, z};
    out.push_back(a);
    pending_ = Pending{a, {}};
    return out;
  }
  history_.push_back(x);
  while (static_cast<int64_t>(history_.size()) > c_.window) history_.pop_front();
  return out;
}

std::string SpikeMonitor::StateJson() const {
  nlohmann::json j = {{"history", std::vector<double>(history_.begin(), history_.end())}};
  if (pending_) {
    const Alert& f = pending_->flag;
    j["pending"] = {{"step", f.step},   {"value", f.value}, {"median", f.median},
                    {"scale", f.scale}, {"z", f.z},         {"after", pending_->after}};
  }
  return j.dump();
}

void SpikeMonitor::RestoreState(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    const auto h = j.at("history").get<std::vector<double>>();
    history_.assign(h.begin(), h.end());
    pending_.reset();
    if (j.contains("pending")) {
      const auto& p = j.at("pending");
      pending_ = Pending{{JsonInteger<int64_t>(p.at("step"), "monitor state: step"), "anomaly",
                          p.at("value").get<double>(), p.at("median").get<double>(),
                          p.at("scale").get<double>(), p.at("z").get<double>()},
                         p.at("after").get<std::vector<double>>()};
    }
  } catch (const nlohmann::json::exception& e) {
    TRAIL_FAIL("spike monitor state is malformed: ", e.what());
  }
}

}  // namespace trail::train
