// Philox4x32-10 (Salmon et al., SC'11): a counter-based generator. Every random value in trail is
// a pure function of (seed, stream, index), never of generator state or of how work is split.
#pragma once

#include <array>
#include <cstdint>

namespace trail {

using PhiloxBlock = std::array<uint32_t, 4>;

// One block of four 32-bit words: key = seed (low word, high word), counter = (index low,
// index high, stream low, stream high).
PhiloxBlock Philox4x32(uint64_t seed, uint64_t stream, uint64_t index);

// The i-th 32-bit word of stream `stream`: word (i mod 4) of block i/4.
inline uint32_t PhiloxWord(uint64_t seed, uint64_t stream, uint64_t i) {
  return Philox4x32(seed, stream, i >> 2)[i & 3];
}

// Uniform in [0, 1): the top 24 bits scaled by 2^-24 (exact in binary32).
inline float UniformFromBits(uint32_t u) { return static_cast<float>(u >> 8) * 0x1p-24f; }
// Uniform in (0, 1]: never zero, for logarithms.
inline float UniformOpenZeroFromBits(uint32_t u) {
  return static_cast<float>((u >> 8) + 1) * 0x1p-24f;
}

// Stable 64-bit stream id for a name (FNV-1a), so a parameter's init depends on its name only.
uint64_t StreamIdForName(const char* name);

}  // namespace trail
