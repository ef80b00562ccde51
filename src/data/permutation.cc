#include "data/permutation.h"

#include "core/error.h"
#include "core/philox.h"

namespace trail::data {

Permutation::Permutation(uint64_t n, uint64_t seed, uint64_t stream) : n_(n) {
  TRAIL_CHECK(n <= (1ull << 62), "permutation domain too large: ", n);
  unsigned bits = 0;
  while (bits < 64 && (1ull << bits) < n) ++bits;
  half_bits_ = (bits + 1) / 2;
  if (half_bits_ == 0) half_bits_ = 1;
  half_mask_ = (1ull << half_bits_) - 1;
  const PhiloxBlock k = Philox4x32(seed, stream, 0);
  for (int r = 0; r < 4; ++r) keys_[r] = Mix64((static_cast<uint64_t>(k[r]) << 32) | r);
}

uint64_t Permutation::Network(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = 0; r < 4; ++r) {
    const uint64_t f = Mix64(right ^ keys_[r]) & half_mask_;
    const uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t Permutation::operator()(uint64_t position) const {
  TRAIL_CHECK(position < n_, "permutation position ", position, " outside [0, ", n_, ")");
  uint64_t x = position;
  // The network is a bijection on [0, 4^h); walking the cycle from a point below n reaches
  // another point below n, so this is a bijection on [0, n). At most 4 steps on average.
  do {
    x = Network(x);
  } while (x >= n_);
  return x;
}

}  // namespace trail::data
