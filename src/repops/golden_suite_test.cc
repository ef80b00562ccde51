#include "repops/golden_suite.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace trail::repops {
namespace {

const std::string kDigest(64, 'a');

TEST(GoldenFile, ParsesCasesAndComments) {
  const auto g = ParseGolden("# comment\n\ngemm " + kDigest + "\nsoftmax " + kDigest + "\n");
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(g.at("gemm"), kDigest);
}

TEST(GoldenFile, MalformedLinesAreClearErrors) {
  for (const std::string& bad : std::vector<std::string>{"gemm deadbeef\n", "gemm\n", "gemm " + kDigest + " extra\n"}) {
    try {
      ParseGolden("# header\n" + bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("golden hashes, line 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ParseGolden("a " + kDigest + "\na " + kDigest + "\n"), Error);  // duplicate case
}

// The committed file names exactly the cases the suite runs (a new case needs its digest).
TEST(GoldenFile, CommittedFileCoversEveryCase) {
  const auto& golden = CommittedGolden();
  const auto results = RunGoldenSuite();
  EXPECT_EQ(golden.size(), results.size());
  for (const auto& r : results) EXPECT_EQ(golden.count(r.name), 1u) << r.name;
}

}  // namespace
}  // namespace trail::repops
