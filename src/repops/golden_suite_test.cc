#include "repops/golden_suite.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace trail::repops {
namespace {

// The committed file names exactly the cases the suite runs (a new case needs its digest).
TEST(GoldenFile, CommittedFileCoversEveryCase) {
  const auto& golden = CommittedGolden();
  const auto results = RunGoldenSuite();
  EXPECT_EQ(golden.size(), results.size());
  for (const auto& r : results) EXPECT_EQ(golden.count(r.name), 1u) << r.name;
}

}  // namespace
}  // namespace trail::repops
