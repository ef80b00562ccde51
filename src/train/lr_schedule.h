// Learning rate as a function of tokens consumed (not steps), so a change of batch size does
// not shift the schedule. Linear warmup, then constant, cosine or WSD (warmup-stable-decay).
#pragma once

#include <cstdint>
#include <string>

namespace trail::train {

enum class DecayKind { kConstant, kCosine, kWsd };

struct LrSchedule {
  float peak_lr = 1e-3f;
  int64_t warmup_tokens = 0;
  DecayKind decay = DecayKind::kCosine;
  int64_t total_tokens = 0;      // where decay ends (cosine, wsd); lr stays at the floor after
  float min_lr_ratio = 0.1f;     // floor = peak_lr * min_lr_ratio
  int64_t wsd_decay_tokens = 0;  // wsd: length of the final linear decay

  // Deterministic on every platform: IEEE double + - * / and trail's own Cos (no libm).
  //   warmup:  peak * (t + 1) / warmup                         for t < warmup
  //   cosine:  floor + (peak - floor) * 0.5 * (1 + Cos(pi * p)),  p = (t - warmup) / (total -
  //   warmup) wsd:     peak until total - decay, then linear to floor at total
  float At(int64_t tokens) const;
  void Validate() const;
};

DecayKind ParseDecayKind(const std::string& s);
const char* DecayName(DecayKind k);

}  // namespace trail::train
