// MinHash signature kernel, compiled once per Highway target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "corpus/dedup/minhash.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <vector>

#include "corpus/dedup/minhash.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace trail::corpus::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// seeds: k_padded values (a multiple of the vector length); x32: folded shingles.
void MinHashKernel(const uint32_t* HWY_RESTRICT x32, size_t n, const uint32_t* HWY_RESTRICT seeds,
                   size_t k_padded, uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  const auto c1 = hn::Set(d, 0x85ebca6bu), c2 = hn::Set(d, 0xc2b2ae35u);
  for (size_t b = 0; b < k_padded; b += N) {
    const auto s = hn::LoadU(d, seeds + b);
    auto m = hn::Set(d, 0xffffffffu);
    for (size_t i = 0; i < n; ++i) {
      auto h = hn::Xor(hn::Set(d, x32[i]), s);
      h = hn::Xor(h, hn::ShiftRight<16>(h));
      h = hn::Mul(h, c1);
      h = hn::Xor(h, hn::ShiftRight<13>(h));
      h = hn::Mul(h, c2);
      h = hn::Xor(h, hn::ShiftRight<16>(h));
      m = hn::Min(m, h);
    }
    hn::StoreU(m, d, out + b);
  }
}

}  // namespace trail::corpus::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/philox.h"

namespace trail::corpus {

HWY_EXPORT(MinHashKernel);

namespace {
inline uint32_t Fold(uint64_t x) { return static_cast<uint32_t>(x ^ (x >> 32)); }
inline uint32_t Mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
constexpr size_t kPad = 16;  // the widest vector (AVX-512) holds 16 lanes
}  // namespace

MinHasher::MinHasher(int num_hashes, uint64_t seed) : k_(num_hashes) {
  const uint64_t stream = StreamIdForName("minhash");
  const size_t padded = (static_cast<size_t>(num_hashes) + kPad - 1) / kPad * kPad;
  seeds_.resize(padded);
  for (size_t i = 0; i < padded; ++i) seeds_[i] = PhiloxWord(seed, stream, i);
}

void MinHasher::Signature(const uint64_t* shingles, size_t n, uint32_t* signature) const {
  std::vector<uint32_t> x32(n);
  for (size_t i = 0; i < n; ++i) x32[i] = Fold(shingles[i]);
  std::vector<uint32_t> out(seeds_.size());
  HWY_DYNAMIC_DISPATCH(MinHashKernel)(x32.data(), n, seeds_.data(), seeds_.size(), out.data());
  std::copy(out.begin(), out.begin() + k_, signature);
}

std::vector<uint32_t> MinHasher::Signature(const std::vector<uint64_t>& shingles) const {
  std::vector<uint32_t> sig(static_cast<size_t>(k_));
  Signature(shingles.data(), shingles.size(), sig.data());
  return sig;
}

void MinHasher::SignatureScalar(const uint64_t* shingles, size_t n, uint32_t* signature) const {
  for (int i = 0; i < k_; ++i) {
    uint32_t m = 0xffffffffu;
    for (size_t j = 0; j < n; ++j) m = std::min(m, Mix32(Fold(shingles[j]) ^ seeds_[i]));
    signature[i] = m;
  }
}

double EstimateJaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t eq = 0;
  for (size_t i = 0; i < a.size(); ++i) eq += a[i] == b[i];
  return a.empty() ? 0.0 : static_cast<double>(eq) / static_cast<double>(a.size());
}

double LshCandidateProbability(double s, int bands, int rows) {
  return 1.0 - std::pow(1.0 - std::pow(s, rows), bands);
}

}  // namespace trail::corpus
#endif  // HWY_ONCE
