#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "data/mixture.h"

namespace trail::data {
namespace {

TEST(Mixture, ScheduledSharesQuantizeTheTargets) {
  const std::vector<double> shares = {0.62, 0.25, 0.1, 0.03};
  const MixtureSchedule m(shares, std::vector<uint64_t>(4, kUnlimited));
  const auto got = m.ScheduledShares();
  double total = 0;
  for (size_t s = 0; s < shares.size(); ++s) {
    EXPECT_NEAR(got[s], shares[s], 0.5 / kMixturePeriod + 1e-12);
    total += got[s];
  }
  EXPECT_EQ(total, 1.0);
}

TEST(Mixture, EveryPrefixStaysNearItsIdealCount) {
  const std::vector<double> shares = {0.5, 0.3, 0.15, 0.05};
  const MixtureSchedule m(shares, std::vector<uint64_t>(4, kUnlimited));
  const auto sched = m.ScheduledShares();
  std::vector<uint64_t> counts(4, 0);
  for (uint64_t w = 0; w < 3 * kMixturePeriod + 123; ++w) {
    const WindowOwner o = m.Owner(w);
    // The window's index among its source's windows is the number of earlier ones.
    ASSERT_EQ(o.source_window, counts[o.source]) << "window " << w;
    ++counts[o.source];
    for (size_t s = 0; s < 4; ++s) {
      ASSERT_LT(std::fabs(counts[s] - (w + 1) * sched[s]), 4.0) << "window " << w;
    }
  }
  EXPECT_EQ(m.CountsBefore(3 * kMixturePeriod + 123), counts);
}

TEST(Mixture, ZeroShareSourceNeverAppears) {
  const MixtureSchedule m({1.0, 0.0}, {kUnlimited, kUnlimited});
  for (uint64_t w = 0; w < 1000; ++w) EXPECT_EQ(m.Owner(w).source, 0u);
}

TEST(Mixture, FiniteSourcesDropOutAndTheStreamEnds) {
  // a: 1000 windows at share 0.5; b: 5000 windows at 0.3; c: unlimited at 0.2.
  const MixtureSchedule open({0.5, 0.3, 0.2}, {1000, 5000, kUnlimited});
  EXPECT_EQ(open.num_windows(), kUnlimited);
  std::vector<uint64_t> counts(3, 0);
  uint64_t last_a = 0;
  for (uint64_t w = 0; w < 20000; ++w) {
    const WindowOwner o = open.Owner(w);
    ASSERT_EQ(o.source_window, counts[o.source]);
    ++counts[o.source];
    if (o.source == 0) last_a = w;
  }
  EXPECT_EQ(counts[0], 1000u);
  EXPECT_EQ(counts[1], 5000u);
  EXPECT_NEAR(last_a, 2000.0, 2.0);  // a runs out after about 1000 / 0.5 windows

  const MixtureSchedule closed({0.5, 0.5}, {300, 700});
  EXPECT_EQ(closed.num_windows(), 1000u);
  std::vector<uint64_t> c2(2, 0);
  for (uint64_t w = 0; w < 1000; ++w) ++c2[closed.Owner(w).source];
  EXPECT_EQ(c2, (std::vector<uint64_t>{300, 700}));
  EXPECT_THROW(closed.Owner(1000), Error);
}

}  // namespace
}  // namespace trail::data
