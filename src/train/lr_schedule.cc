#include "train/lr_schedule.h"

#include <algorithm>

#include "core/error.h"
#include "repops/math.h"

namespace trail::train {

float LrSchedule::At(int64_t t) const {
  const double peak = peak_lr, floor = double(peak_lr) * double(min_lr_ratio);
  if (t < warmup_tokens) return static_cast<float>(peak * double(t + 1) / double(warmup_tokens));
  switch (decay) {
    case DecayKind::kConstant:
      return peak_lr;
    case DecayKind::kCosine: {
      if (t >= total_tokens) return static_cast<float>(floor);
      const double p = double(t - warmup_tokens) / double(total_tokens - warmup_tokens);
      const double c = repops::Cos(static_cast<float>(3.141592653589793 * p));
      return static_cast<float>(floor + (peak - floor) * 0.5 * (1.0 + c));
    }
    case DecayKind::kWsd: {
      const int64_t start = total_tokens - wsd_decay_tokens;
      if (t < start) return peak_lr;
      if (t >= total_tokens) return static_cast<float>(floor);
      const double p = double(t - start) / double(wsd_decay_tokens);
      return static_cast<float>(peak + (floor - peak) * p);
    }
  }
  return peak_lr;
}

void LrSchedule::Validate() const {
  TRAIL_CHECK(peak_lr > 0, "schedule: lr must be > 0");
  TRAIL_CHECK(warmup_tokens >= 0, "schedule: warmup_tokens must be >= 0");
  TRAIL_CHECK(min_lr_ratio >= 0 && min_lr_ratio <= 1, "schedule: min_lr_ratio must be in [0, 1]");
  if (decay != DecayKind::kConstant) {
    TRAIL_CHECK(total_tokens > warmup_tokens, "schedule: total_tokens (", total_tokens,
                ") must exceed warmup_tokens (", warmup_tokens, ") for ", DecayName(decay),
                " decay");
  }
  if (decay == DecayKind::kWsd) {
    TRAIL_CHECK(wsd_decay_tokens > 0 && wsd_decay_tokens <= total_tokens - warmup_tokens,
                "schedule: wsd_decay_tokens must be in (0, total_tokens - warmup_tokens]");
  }
}

DecayKind ParseDecayKind(const std::string& s) {
  if (s == "constant") return DecayKind::kConstant;
  if (s == "cosine") return DecayKind::kCosine;
  if (s == "wsd") return DecayKind::kWsd;
  TRAIL_FAIL("schedule: decay must be constant, cosine or wsd, got '", s, "'");
  return DecayKind::kConstant;
}

const char* DecayName(DecayKind k) {
  switch (k) {
    case DecayKind::kConstant:
      return "constant";
    case DecayKind::kCosine:
      return "cosine";
    case DecayKind::kWsd:
      return "wsd";
  }
  return "?";
}

}  // namespace trail::train
