#include "corpus/pipeline/doc_runs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_util.h"
#include "core/spill.h"
#include "corpus/pipeline/doc_record.h"

namespace trail::corpus {
namespace {

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
  d.drop = Drop(DropReason::kQuality, "x");
  d.drop_stage = "quality";
  d.norm.encoding = "ISO-8859-3";
  d.norm.detected = true;
  d.norm.replaced = 3;
  d.norm.controls_removed = 4;
  d.lang.language = "eo";
  d.lang.score = 0.1 + 0.2;
  d.rules_json = "[[1.5,1]]";
  d.bands = {1, 0xffffffffffffffffull, 42};
  return d;
}

// Every reason's text parses back to it; an unknown text is an error.
TEST(DropReason, TextsRoundTrip) {
  for (DropReason r : {DropReason::kEmptyAfterNormalize, DropReason::kLanguageNotAllowed,
                       DropReason::kLanguageLowScore, DropReason::kContaminated, DropReason::kQuota,
                       DropReason::kExactDup, DropReason::kNearDup}) {
    const Drop d(r);
    EXPECT_TRUE(d.dropped());
    EXPECT_EQ(Drop::Parse(d.text()).reason(), r) << d.text();
  }
  EXPECT_EQ(Drop(DropReason::kExactDup).text(), "exact_dup");
  EXPECT_EQ(Drop::Parse("quality.gopher_mean_word_length").rule(), "gopher_mean_word_length");
  EXPECT_FALSE(Drop::Parse("").dropped());
  EXPECT_THROW(Drop::Parse("quality."), Error);
  EXPECT_THROW(Drop::Parse("spam"), Error);
  EXPECT_THROW(Drop(DropReason::kQuality), Error);
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
  EXPECT_EQ(e.bands, d.bands);
  EXPECT_EQ(e.drop.reason(), DropReason::kQuality);
  EXPECT_EQ(e.drop.rule(), "x");
  EXPECT_EQ(e.drop.text(), "quality.x");
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
