// Random fills from Philox counters: value i of (seed, stream) depends on nothing else.
#pragma once

#include <cstdint>

namespace trail::repops {

// x[i] = lo + (hi - lo) * UniformFromBits(PhiloxWord(seed, stream, i)).
void FillUniform(float* x, int64_t n, uint64_t seed, uint64_t stream, float lo, float hi);

// Box-Muller on block i = Philox4x32(seed, stream, i): u1 = UniformOpenZeroFromBits(w0),
// u2 = UniformFromBits(w1), z = sqrt(-2 * Log(u1)) * Cos(6.28318548f * u2);
// x[i] = mean + stddev * z.
void FillNormal(float* x, int64_t n, uint64_t seed, uint64_t stream, float mean, float stddev);

}  // namespace trail::repops
