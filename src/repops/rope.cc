#include "repops/rope.h"

#include "core/error.h"
#include "repops/math.h"
#include "repops/parallel.h"

namespace trail::repops {

void RopeScaling::Validate() const {
  if (!enabled()) return;
  TRAIL_CHECK(factor >= 1.0f, "RoPE scaling: factor must be >= 1, got ", factor);
  TRAIL_CHECK(low_freq_factor > 0.0f && high_freq_factor > low_freq_factor,
              "RoPE scaling: need 0 < low_freq_factor < high_freq_factor, got ", low_freq_factor,
              " and ", high_freq_factor);
  TRAIL_CHECK(original_max_pos > 0, "RoPE scaling: original_max_pos must be > 0, got ",
              original_max_pos);
}

std::vector<float> RopeInvFreq(int64_t hd, float theta, const RopeScaling& scaling) {
  TRAIL_CHECK(hd > 0 && hd % 2 == 0, "RoPE head dimension must be even, got ", hd);
  scaling.Validate();
  const float log_theta = Log(theta);
  std::vector<float> inv(static_cast<size_t>(hd / 2));
  for (size_t i = 0; i < inv.size(); ++i)
    inv[i] = Exp(-((static_cast<float>(2 * i) / static_cast<float>(hd)) * log_theta));
  if (!scaling.enabled()) return inv;
  const float L = static_cast<float>(scaling.original_max_pos);
  const float lo = L / scaling.low_freq_factor, hi = L / scaling.high_freq_factor;
  constexpr float kTwoPi = 6.2831855f;  // 2π rounded to binary32 (0x40C90FDB)
  for (float& f : inv) {
    const float w = kTwoPi / f;
    if (w < hi) continue;
    if (w > lo) {
      f = f / scaling.factor;
      continue;
    }
    const float s =
        (L / w - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor);
    f = (((1.0f - s) * f) / scaling.factor) + (s * f);
  }
  return inv;
}

RopeTable MakeRopeTable(int64_t max_pos, int64_t hd, float theta, const RopeScaling& scaling) {
  RopeTable t;
  t.max_pos = max_pos;
  t.half = hd / 2;
  const std::vector<float> inv_freq = RopeInvFreq(hd, theta, scaling);
  t.cos.resize(max_pos * t.half);
  t.sin.resize(max_pos * t.half);
  for (int64_t p = 0; p < max_pos; ++p)
    for (int64_t i = 0; i < t.half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];
      t.cos[p * t.half + i] = Cos(angle);
      t.sin[p * t.half + i] = Sin(angle);
    }
  return t;
}

void RopeApply(float* x, int64_t rows, int64_t hd, const int32_t* pos, const RopeTableView& t,
               bool backward) {
  TRAIL_CHECK(hd == 2 * t.half, "RoPE table built for head dimension ", 2 * t.half, ", used with ",
              hd);
  const int64_t h = t.half;
  ForEachRow(rows, [&](int64_t r) {
    TRAIL_CHECK(pos[r] >= 0 && pos[r] < t.max_pos, "RoPE position ", pos[r], " outside [0, ",
                t.max_pos, ")");
    const float* c = t.cos + pos[r] * h;
    const float* s = t.sin + pos[r] * h;
    float* xr = x + r * hd;
    for (int64_t i = 0; i < h; ++i) {
      const float x0 = xr[i], x1 = xr[i + h];
      if (!backward) {
        xr[i] = x0 * c[i] - x1 * s[i];
        xr[i + h] = x0 * s[i] + x1 * c[i];
      } else {
        xr[i] = x0 * c[i] + x1 * s[i];
        xr[i + h] = x1 * c[i] - x0 * s[i];
      }
    }
  });
}

}  // namespace trail::repops
