// Philox4x32-10's ten rounds (Salmon et al., SC'11), written once for every device: the CPU's
// Philox4x32 (core/philox.h) and the CUDA backend's kernels call this same function.
// Counter c = (index low, index high, stream low, stream high), key = seed (low, high).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TRAIL_PHILOX_FN __host__ __device__ __forceinline__
#else
#define TRAIL_PHILOX_FN inline
#endif

namespace trail {

TRAIL_PHILOX_FN void PhiloxRounds(uint64_t seed, uint64_t stream, uint64_t index, uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * c0;
    const uint64_t p1 = uint64_t{kM1} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

}  // namespace trail
