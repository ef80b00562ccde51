// MinHash signatures. Hash function i maps a shingle x to
//   mix32(fold(x) ^ seed_i),  fold(x) = low 32 bits of x ^ (x >> 32),
//   mix32 = the murmur3 finalizer (x ^= x>>16; x *= 0x85ebca6b; x ^= x>>13; x *= 0xc2b2ae35;
//   x ^= x>>16),
// with seed_i = word i of the Philox stream (seed, "minhash"); the signature is the minimum of
// each function over the shingle set (UINT32_MAX for an empty set). Integer arithmetic only: the
// same signature on every SIMD target (Highway, dispatched at run time) and the scalar path.
#pragma once

#include <cstdint>
#include <vector>

namespace trail::corpus {

class MinHasher {
 public:
  MinHasher(int num_hashes, uint64_t seed);
  int num_hashes() const { return static_cast<int>(seeds_.size()); }
  // signature: num_hashes() values.
  void Signature(const uint64_t* shingles, size_t n, uint32_t* signature) const;
  std::vector<uint32_t> Signature(const std::vector<uint64_t>& shingles) const;
  // The same, one hash at a time (the reference the SIMD path is tested against).
  void SignatureScalar(const uint64_t* shingles, size_t n, uint32_t* signature) const;

 private:
  std::vector<uint32_t> seeds_;  // padded to a multiple of 16 for the vector loop
  int k_;
};

// Fraction of equal positions: the MinHash estimate of Jaccard similarity.
double EstimateJaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

// Probability that a pair of Jaccard similarity s shares at least one LSH band of r rows among
// b bands: 1 - (1 - s^r)^b.
double LshCandidateProbability(double s, int bands, int rows);

}  // namespace trail::corpus
