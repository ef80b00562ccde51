#include <gtest/gtest.h>

#include <vector>

#include "data/permutation.h"

namespace trail::data {
namespace {

TEST(Permutation, IsABijectionForAwkwardSizes) {
  for (uint64_t n : {1ull, 2ull, 3ull, 5ull, 17ull, 64ull, 1000ull, 4097ull, 65537ull}) {
    for (uint64_t stream : {0ull, 1ull, 99ull}) {
      const Permutation p(n, 1234, stream);
      std::vector<uint8_t> hit(n, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t v = p(i);
        ASSERT_LT(v, n);
        ASSERT_EQ(hit[v], 0) << "n=" << n << " repeats " << v;
        hit[v] = 1;
      }
    }
  }
}

TEST(Permutation, DependsOnSeedAndStream) {
  const uint64_t n = 1000;
  const Permutation a(n, 1, 7), b(n, 2, 7), c(n, 1, 8);
  int same_ab = 0, same_ac = 0, fixed = 0;
  for (uint64_t i = 0; i < n; ++i) {
    same_ab += a(i) == b(i);
    same_ac += a(i) == c(i);
    fixed += a(i) == i;
  }
  // A random permutation agrees with another in about one place; allow a few.
  EXPECT_LT(same_ab, 10);
  EXPECT_LT(same_ac, 10);
  EXPECT_LT(fixed, 10);
}

TEST(Permutation, FirstElementIsSpreadEvenly) {
  // Over many streams, position 0 lands in each of 8 buckets about equally often
  // (chi-square with 7 degrees of freedom; 30 is far beyond the 0.1% tail at 24.3).
  const uint64_t n = 80;
  std::vector<int> bucket(8, 0);
  const int trials = 8000;
  for (int s = 0; s < trials; ++s) ++bucket[Permutation(n, 5, s)(0) / 10];
  double chi2 = 0;
  for (int b : bucket) chi2 += (b - trials / 8.0) * (b - trials / 8.0) / (trials / 8.0);
  EXPECT_LT(chi2, 30.0);
}

TEST(Permutation, KnownAnswers) {
  // Pins the construction (docs/data.md): any implementation must give these.
  const Permutation p(10, 2026, 12);
  std::vector<uint64_t> got;
  for (uint64_t i = 0; i < 10; ++i) got.push_back(p(i));
  EXPECT_EQ(got, (std::vector<uint64_t>{2, 5, 6, 0, 8, 9, 7, 1, 3, 4}));
}

}  // namespace
}  // namespace trail::data
