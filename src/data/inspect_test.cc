// The stream inspection reports agree with the stream and the batcher they describe, and shard
// verification names the shard that does not check out.
#include "data/inspect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/file_util.h"
#include "data/batcher.h"
#include "data/packing.h"
#include "data/synthetic_corpus.h"

namespace trail::data {
namespace {

StreamConfig Config() {
  StreamConfig c;
  c.seed = 11;
  c.seq_len = 16;
  c.schedule = {{0, 6}, {3, 9}};
  c.micro_batch_windows = 2;
  return c;
}

Manifest Corpus(const std::string& dir) {
  return synthetic::MakeCorpus(dir, {{"web", 0.7, 2, 12}, {"code", 0.3, 1, 9}}, Config());
}

TEST(Inspect, WindowReportIsTheWindowAndItsPackedRow) {
  TempDir dir;
  CanonicalStream s(Corpus(dir.path()));
  RawWindow w;
  s.Window(7, w);
  const Json r = ToJson(InspectWindow(s, 7, {}));
  EXPECT_EQ(r["window"], 7u);
  EXPECT_EQ(r["source"], s.source(w.owner.source).name());
  EXPECT_EQ(r["real_tokens"], w.length);
  ASSERT_EQ(r["tokens"].size(), 17u);  // L + 1 positions
  ASSERT_EQ(r["documents"].size(), w.segments.size());
  for (size_t i = 0; i < w.segments.size(); ++i) {
    const Segment& seg = w.segments[i];
    const Json& d = r["documents"][i];
    EXPECT_EQ(d["key"], std::string(s.source(seg.source).shard(seg.shard).doc_key(seg.doc)));
    EXPECT_EQ(d["window_offset"], seg.window_offset);
    EXPECT_FALSE(d.contains("text"));
  }
  for (int64_t i = 0; i <= 16; ++i) {
    EXPECT_EQ(r["tokens"][i]["token"], w.tokens[i]);
    EXPECT_EQ(r["tokens"][i].contains("label"), i < 16);  // the last position has no target
  }
  // With a decoder, every document and token gets its text (escaped for printing).
  const Json t = ToJson(InspectWindow(
      s, 7, [](const std::vector<uint32_t>& ids) { return std::string(ids.size(), '\n'); }));
  EXPECT_EQ(t["tokens"][0]["piece"], "\\n");
  EXPECT_TRUE(t["documents"][0].contains("text"));
}

TEST(Inspect, StepReportIsTheBatchersPartition) {
  TempDir dir;
  CanonicalStream s(Corpus(dir.path()));
  const Json r = ToJson(InspectStep(s, 4, 3, -1));
  EXPECT_EQ(r["windows"][0], WindowsBeforeStep(s.manifest(), 4));
  EXPECT_EQ(r["windows"][1], WindowsBeforeStep(s.manifest(), 5));
  ASSERT_EQ(r["ranks"].size(), 3u);
  std::vector<uint64_t> seen;
  int64_t targets = 0;
  for (const Json& rank : r["ranks"]) {
    for (const Json& mb : rank["micro_batches"]) {
      targets += mb["B_target"].get<int64_t>();
      for (const Json& w : mb["windows"]) {
        if (!w.is_null()) seen.push_back(w);
      }
    }
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 9u);  // the step's 9 windows, each once
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], r["windows"][0].get<uint64_t>() + i);
  EXPECT_EQ(r["B_target"], targets);
  EXPECT_EQ(ToJson(InspectStep(s, 4, 3, 1))["ranks"].size(), 1u);
}

TEST(Inspect, SourceSharesAddUpAndStopAtTheStreamsEnd) {
  TempDir dir;
  CanonicalStream s(Corpus(dir.path()));
  const Json r = ToJson(SourceShares(s, 200));
  double measured = 0, target = 0;
  uint64_t windows = 0;
  for (const Json& src : r["sources"]) {
    measured += src["measured_share"].get<double>();
    target += src["target_share"].get<double>();
    windows += src["windows"].get<uint64_t>();
  }
  EXPECT_NEAR(measured, 1.0, 1e-12);
  EXPECT_NEAR(target, 1.0, 1e-12);
  EXPECT_EQ(windows, r["windows"].get<uint64_t>());
  if (s.num_windows() != kUnlimited) {
    EXPECT_LE(ToJson(SourceShares(s, 1u << 30))["windows"].get<uint64_t>(), s.num_windows());
  }
}

TEST(Inspect, VerifyNamesTheDamagedShard) {
  TempDir dir;
  const Manifest m = Corpus(dir.path());
  for (const ShardCheck& c : VerifyManifestShards(m)) EXPECT_EQ(c.error, "") << c.what;
  const std::string shard = dir / m.sources[1].shards[0].path;
  std::string bytes = ReadFileToString(shard);
  bytes[200] ^= 1;
  WriteFileAtomic(shard, bytes);
  const std::vector<ShardCheck> checks = VerifyManifestShards(m);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].error, "");
  EXPECT_EQ(checks[2].what, "train/code");
  EXPECT_NE(checks[2].error, "");
}

TEST(Inspect, PrintableBytesEscapesControlCharacters) {
  EXPECT_EQ(PrintableBytes("a\nb\x01\x7f"
                           "c"),
            "a\\nb\\x01\\x7fc");
}

}  // namespace
}  // namespace trail::data
