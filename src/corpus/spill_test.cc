#include "corpus/spill.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "core/file_util.h"
#include "corpus/doc_record.h"
#include "corpus/doc_runs.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;

struct Rec {
  uint64_t key;
  uint32_t seq, pad;
  bool operator<(const Rec& o) const { return key < o.key; }
};

size_t FilesIn(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(ExternalSorter, SpilledRunsMergeToTheInMemorySortAndKeepEqualRecordsInOrder) {
  TempDir dir;
  std::mt19937_64 rng(7);
  std::vector<Rec> all;
  for (uint32_t i = 0; i < 200000; ++i) all.push_back({rng() % 5000, i, 0});  // many equal keys
  std::vector<Rec> want = all;
  std::stable_sort(want.begin(), want.end());
  for (size_t budget : {size_t{1} << 30, size_t{64} << 10, size_t{16} << 10}) {
    ExternalSorter<Rec> sorter(dir.path(), "t", budget);
    for (const Rec& r : all) sorter.Add(r);
    EXPECT_EQ(sorter.size(), all.size());
    std::vector<Rec> got;
    sorter.Drain([&](const Rec& r) { got.push_back(r); });
    ASSERT_EQ(got.size(), want.size()) << budget;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].key, want[i].key) << budget << " at " << i;
      ASSERT_EQ(got[i].seq, want[i].seq) << budget << " at " << i;  // stable across runs
    }
    if (budget < (1u << 20)) {
      EXPECT_GT(sorter.spilled_bytes(), 0u);
    }
    EXPECT_EQ(FilesIn(dir.path()), 0u) << "runs are removed once drained";
  }
}

TEST(SpillFiles, RecordsRoundTripSequentiallyAndByPositionAndATornFileIsAnError) {
  TempDir dir;
  const std::string path = dir / "r.bin";
  std::vector<std::string> recs = {"", "a", std::string(100000, 'x'), "tail"};
  std::vector<uint64_t> offsets;
  {
    SpillWriter w(path, 4096);
    for (const std::string& r : recs) {
      offsets.push_back(w.offset());
      w.AppendRecord(r);
    }
    w.Close();
  }
  SpillReader r(path, 4096);
  std::string got;
  for (const std::string& want : recs) {
    ASSERT_TRUE(r.ReadRecord(got));
    EXPECT_EQ(got, want);
  }
  EXPECT_FALSE(r.ReadRecord(got));
  const PositionalReader p(path);
  for (size_t i = 0; i < recs.size(); ++i) EXPECT_EQ(p.ReadRecordAt(offsets[i]), recs[i]);
  fs::resize_file(path, fs::file_size(path) - 2);
  SpillReader torn(path, 4096);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(torn.ReadRecord(got));
  EXPECT_THROW(torn.ReadRecord(got), Error);
}

DocRecord Sample(const std::string& key, uint32_t file) {
  DocRecord d;
  d.key = key;
  d.source_index = 2;
  d.file_index = file;
  d.offset = 1234567890123ull;
  d.raw_bytes = 77;
  d.raw_sha256 = std::string(64, 'a');
  d.raw_sample = "sample \\xff";
  d.text = "Text with\nnewlines and \xc3\xa9";
  d.content_hash = std::string(32, 'f');
  d.drop = "quality.x";
  d.drop_stage = "quality";
  d.norm.encoding = "ISO-8859-3";
  d.norm.detected = true;
  d.norm.replaced = 3;
  d.norm.controls_removed = 4;
  d.lang.language = "eo";
  d.lang.score = 0.1 + 0.2;
  d.rules_json = "[[1.5,1]]";
  return d;
}

TEST(DocRecord, EncodingRoundTripsEveryFieldAndRejectsDamage) {
  const DocRecord d = Sample("src/k", 5);
  std::string bytes;
  EncodeDocRecord(d, &bytes);
  const DocRecord e = DecodeDocRecord(bytes);
  std::string again;
  EncodeDocRecord(e, &again);
  EXPECT_EQ(again, bytes);
  EXPECT_EQ(e.lang.score, d.lang.score);
  EXPECT_EQ(e.text, d.text);
  EXPECT_THROW(DecodeDocRecord(std::string_view(bytes).substr(0, bytes.size() - 1)), Error);
  EXPECT_THROW(DecodeDocRecord(bytes + "x"), Error);
}

TEST(DocRunMerge, MergesRunsByKeyAndMarksARepeatedKeyAfterItsFirstRead) {
  TempDir dir;
  // Run 0 was read first: its "b" is the first read of that key.
  const std::vector<std::vector<std::pair<std::string, uint32_t>>> runs = {
      {{"a", 0}, {"b", 0}, {"d", 0}}, {{"b", 1}, {"c", 1}}, {{"e", 2}}};
  std::vector<std::string> paths;
  for (size_t r = 0; r < runs.size(); ++r) {
    paths.push_back(dir / ("run" + std::to_string(r)));
    SpillWriter w(paths.back(), 4096);
    for (const auto& [key, file] : runs[r]) {
      std::string b;
      EncodeDocRecord(Sample(key, file), &b);
      w.AppendRecord(b);
    }
    w.Close();
  }
  DocRunMerge merge(paths, 4096);
  std::vector<std::string> seen;
  for (DocRunMerge::Item it; merge.Next(it);) {
    seen.push_back(it.doc.key + (it.repeated ? "!" + std::to_string(it.first_file) : ""));
    const PositionalReader p(paths[it.run]);
    EXPECT_EQ(DecodeDocRecord(p.ReadRecordAt(it.offset)).key, it.doc.key);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "b!0", "c", "d", "e"}));
}

}  // namespace
}  // namespace trail::corpus
