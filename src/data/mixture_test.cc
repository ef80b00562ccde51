#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "data/mixture.h"

namespace trail::data {
namespace {

// A schedule whose windows are one token long, so a finite source of n windows holds n + 1
// tokens: the tests below count windows.
MixtureSchedule Schedule(const std::vector<double>& shares, const std::vector<uint64_t>& windows,
                         const std::vector<SharePhase>& later = {}) {
  MixturePlan plan{shares, {}, later, {{0, 1}}};
  for (uint64_t n : windows) plan.source_tokens.push_back(n == kUnlimited ? kUnlimited : n + 1);
  return MixtureSchedule(plan);
}

TEST(Mixture, ScheduledSharesQuantizeTheTargets) {
  const std::vector<double> shares = {0.62, 0.25, 0.1, 0.03};
  const MixtureSchedule m = Schedule(shares, std::vector<uint64_t>(4, kUnlimited));
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
  const MixtureSchedule m = Schedule(shares, std::vector<uint64_t>(4, kUnlimited));
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
  const MixtureSchedule m = Schedule({1.0, 0.0}, {kUnlimited, kUnlimited});
  for (uint64_t w = 0; w < 1000; ++w) EXPECT_EQ(m.Owner(w).source, 0u);
}

TEST(Mixture, FiniteSourcesDropOutAndTheStreamEnds) {
  // a: 1000 windows at share 0.5; b: 5000 windows at 0.3; c: unlimited at 0.2.
  const MixtureSchedule open = Schedule({0.5, 0.3, 0.2}, {1000, 5000, kUnlimited});
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

  const MixtureSchedule closed = Schedule({0.5, 0.5}, {300, 700});
  EXPECT_EQ(closed.num_windows(), 1000u);
  std::vector<uint64_t> c2(2, 0);
  for (uint64_t w = 0; w < 1000; ++w) ++c2[closed.Owner(w).source];
  EXPECT_EQ(c2, (std::vector<uint64_t>{300, 700}));
  EXPECT_THROW(closed.Owner(1000), Error);
}

// Data annealing: from window 10,000 the shares change. Each stretch keeps its own shares
// (every prefix within 1 + S windows of its ideal count), and every source continues with its
// next window: its windows are 0, 1, 2, … across the switch, none skipped or repeated.
TEST(Mixture, SharePhasesSwitchTheSharesAndSourcesContinue) {
  const std::vector<uint64_t> windows(3, kUnlimited);
  const MixtureSchedule m = Schedule({0.5, 0.3, 0.2}, windows, {{10000, {0.1, 0.0, 0.9}}});
  const std::vector<double> before = m.ScheduledSharesAt(9999), after = m.ScheduledSharesAt(10000);
  EXPECT_NEAR(before[0], 0.5, 1e-4);
  EXPECT_NEAR(after[2], 0.9, 1e-4);
  EXPECT_EQ(after[1], 0.0);
  std::vector<uint64_t> next(3, 0);
  for (uint64_t w = 0; w < 30000; ++w) {
    const WindowOwner o = m.Owner(w);
    ASSERT_EQ(o.source_window, next[o.source]) << "window " << w;
    ++next[o.source];
    const uint64_t end = w + 1;
    const uint64_t start = end <= 10000 ? 0 : 10000;
    const std::vector<double>& shares = end <= 10000 ? before : after;
    const std::vector<uint64_t> a = m.CountsBefore(start), b = m.CountsBefore(end);
    for (size_t s = 0; s < 3; ++s) {
      ASSERT_LT(std::fabs(double(b[s] - a[s]) - double(end - start) * shares[s]), 1.0 + 3)
          << "source " << s << " over windows " << start << ".." << end;
    }
  }
  EXPECT_EQ(m.CountsBefore(30000)[1], m.CountsBefore(10000)[1]);  // share 0 after the switch
}

// A finite source with the only positive share of the last phase: the stream ends with it.
TEST(Mixture, TheStreamEndsWhenTheSourcesOfTheCurrentPhaseEnd) {
  const MixtureSchedule m = Schedule({1.0, 1.0}, {5000, kUnlimited}, {{3000, {1.0, 0.0}}});
  const uint64_t used = m.CountsBefore(3000)[0];
  EXPECT_EQ(used, 1500u);
  EXPECT_EQ(m.num_windows(), 3000 + (5000 - used));
  EXPECT_EQ(m.Owner(m.num_windows() - 1).source_window, 4999u);
  EXPECT_THROW(m.Owner(m.num_windows()), Error);
  // Phases must start at increasing windows.
  EXPECT_THROW(Schedule({1.0}, {kUnlimited}, {{5, {1.0}}, {5, {1.0}}}), Error);
}

// The sequence-length curriculum: from window 1,000 on, windows are 64 tokens instead of 16.
// Every window starts where its source's previous window ended (offset + L), whatever the
// length of that one; OffsetsBefore and SeqLenAt agree with a running count.
TEST(Mixture, LengthPhasesAdvanceEachSourceByItsWindowsLengths) {
  const MixtureSchedule m(
      MixturePlan{{0.7, 0.3}, {kUnlimited, kUnlimited}, {}, {{0, 16}, {1000, 64}}});
  std::vector<uint64_t> next(2, 0), offset(2, 0);
  for (uint64_t w = 0; w < 3000; ++w) {
    ASSERT_EQ(m.OffsetsBefore(w), offset) << "window " << w;
    const WindowOwner o = m.Owner(w);
    const int64_t L = w < 1000 ? 16 : 64;
    ASSERT_EQ(o.seq_len, L);
    ASSERT_EQ(m.SeqLenAt(w), L);
    ASSERT_EQ(o.source_window, next[o.source]++);
    ASSERT_EQ(o.token_offset, offset[o.source]) << "window " << w;
    offset[o.source] += static_cast<uint64_t>(L);
  }
  // A length switch alone leaves the shares as they were.
  EXPECT_EQ(m.ScheduledSharesAt(999), m.ScheduledSharesAt(1000));
  EXPECT_THROW(MixtureSchedule(MixturePlan{{1.0}, {kUnlimited}, {}, {{5, 16}}}), Error);
  EXPECT_THROW(MixtureSchedule(MixturePlan{{1.0}, {kUnlimited}, {}, {{0, 16}, {0, 32}}}), Error);
}

// A finite source of 1,001 tokens (1,000 targets): 50 windows of L = 10 cover its first 500
// targets, then windows of L = 100 need 5 more, so the stream ends after window 55 (at a
// constant L = 10 it would have 100 windows).
TEST(Mixture, AFiniteSourceEndsByTokensAcrossALengthSwitch) {
  const MixtureSchedule m(MixturePlan{{1.0}, {1001}, {}, {{0, 10}, {50, 100}}});
  EXPECT_EQ(m.num_windows(), 55u);
  EXPECT_EQ(m.Owner(49).token_offset, 490u);
  EXPECT_EQ(m.Owner(50).token_offset, 500u);
  EXPECT_EQ(m.Owner(54).token_offset, 900u);  // covers tokens [900, 1000]: the last target
  EXPECT_FALSE(m.EndedBefore(0, 54));
  EXPECT_TRUE(m.EndedBefore(0, 55));
  EXPECT_THROW(m.Owner(55), Error);
  EXPECT_EQ(MixtureSchedule(MixturePlan{{1.0}, {1001}, {}, {{0, 10}}}).num_windows(), 100u);
  // Two sources: "a" (1,001 tokens) ends at a window of the second length phase; "b" carries on.
  const MixtureSchedule two(MixturePlan{{0.5, 0.5}, {1001, kUnlimited}, {}, {{0, 10}, {60, 100}}});
  const uint64_t a_before = two.CountsBefore(60)[0];
  EXPECT_EQ(a_before, 30u);  // the half-and-half interleave gives "a" 30 of the first 60
  EXPECT_EQ(two.OffsetsBefore(60)[0], 300u);
  const uint64_t a_total = two.CountsBefore(2000)[0];
  EXPECT_EQ(a_total, 30u + 7u);  // 700 targets left at L = 100
  EXPECT_EQ(two.num_windows(), kUnlimited);
}

}  // namespace
}  // namespace trail::data
