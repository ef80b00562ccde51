// SplitMix64's finalizer: a fast, well-mixed 64-bit bijection used to build hashes and
// counter-based orders (never for cryptographic purposes).
#pragma once

#include <cstdint>

namespace trail {

inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace trail
