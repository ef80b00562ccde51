// A counter-based pseudorandom permutation of [0, n): position -> element, computed on demand
// from (key, position), so no shuffled array is ever stored or checkpointed.
//
// Construction: a 4-round balanced Feistel network on 2h bits (the smallest even width with
// 2^(2h) >= n), with cycle walking: apply the network until the value is < n. Round r's
// function is F(r, x) = Mix64(x ^ key_r) restricted to h bits, where the round keys key_r are
// the four 32-bit words of Philox4x32(seed, stream, 0) spread by Mix64 and Mix64 is the
// SplitMix64 finalizer. The exact formula is in docs/data.md: a different implementation
// must produce the same order.
#pragma once

#include <cstdint>

#include "core/mix.h"

namespace trail::data {

class Permutation {
 public:
  Permutation() = default;
  Permutation(uint64_t n, uint64_t seed, uint64_t stream);
  uint64_t size() const { return n_; }
  uint64_t operator()(uint64_t position) const;

 private:
  uint64_t Network(uint64_t x) const;

  uint64_t n_ = 0;
  unsigned half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t keys_[4] = {};
};

}  // namespace trail::data
