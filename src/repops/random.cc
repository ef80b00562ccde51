#include "repops/random.h"

#include <algorithm>
#include <cmath>

#include "core/philox.h"
#include "repops/math.h"
#include "repops/parallel.h"

namespace trail::repops {

void FillUniform(float* x, int64_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
  const float span = hi - lo;
  ForEachRow((n + 4095) / 4096, [&](int64_t c) {
    for (int64_t i = c * 4096; i < std::min(n, (c + 1) * 4096); ++i)
      x[i] = lo + span * UniformFromBits(PhiloxWord(seed, stream, i));
  });
}

void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean, float stddev) {
  ForEachRow((n + 4095) / 4096, [&](int64_t c) {
    for (int64_t i = c * 4096; i < std::min(n, (c + 1) * 4096); ++i) {
      const PhiloxBlock b = Philox4x32(seed, stream, i);
      const float u1 = UniformOpenZeroFromBits(b[0]);
      const float u2 = UniformFromBits(b[1]);
      const float z = std::sqrt(-2.0f * Log(u1)) * Cos(6.28318548f * u2);
      x[i] = mean + stddev * z;
    }
  });
}

}  // namespace trail::repops
