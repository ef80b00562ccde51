#include "repops/rope.h"

#include "core/error.h"
#include "repops/math.h"
#include "repops/parallel.h"

namespace trail::repops {

RopeTable MakeRopeTable(int64_t max_pos, int64_t hd, float theta) {
  TRAIL_CHECK(hd > 0 && hd % 2 == 0, "RoPE head dimension must be even, got ", hd);
  RopeTable t;
  t.max_pos = max_pos;
  t.half = hd / 2;
  t.cos.resize(max_pos * t.half);
  t.sin.resize(max_pos * t.half);
  const float log_theta = Log(theta);
  std::vector<float> inv_freq(t.half);
  for (int64_t i = 0; i < t.half; ++i)
    inv_freq[i] = Exp(-((static_cast<float>(2 * i) / static_cast<float>(hd)) * log_theta));
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
