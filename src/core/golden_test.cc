#include "core/golden.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace trail {
namespace {

const std::string kDigest(64, 'a');

TEST(GoldenFile, ParsesCasesAndComments) {
  const auto g = ParseGoldenTable("# comment\n\ngemm " + kDigest + "\nsoftmax " + kDigest + "\n");
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(g.at("gemm"), kDigest);
}

TEST(GoldenFile, MalformedLinesAreClearErrors) {
  for (const std::string& bad :
       std::vector<std::string>{"gemm deadbeef\n", "gemm " + std::string(64, 'A') + "\n", "gemm\n",
                                "gemm " + kDigest + " extra\n"}) {
    try {
      ParseGoldenTable("# header\n" + bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("golden file, line 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ParseGoldenTable("a " + kDigest + "\na " + kDigest + "\n"),
               Error);  // duplicate case
}

// Every set is committed and well formed; the file text round-trips.
TEST(GoldenRegistry, EverySetIsCommittedAndRoundTrips) {
  for (std::string_view set : kGoldenSets) {
    const GoldenTable& t = CommittedGoldens(set);
    EXPECT_FALSE(t.empty()) << set;
    EXPECT_EQ(ParseGoldenTable(GoldenFileText(set, t)), t) << set;
  }
  EXPECT_EQ(CommittedGoldens("stream").count("stream"), 1u);
  EXPECT_THROW(CommittedGoldens("nope"), Error);
}

}  // namespace
}  // namespace trail
