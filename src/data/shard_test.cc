#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_util.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data/synthetic_corpus.h"
#include "core/test_util.h"

namespace trail::data {
namespace {

ShardWriterOptions Options(uint32_t token_bytes) {
  ShardWriterOptions o;
  o.token_bytes = token_bytes;
  o.vocab_size = token_bytes == 2 ? 50257 : 128256;
  o.contract.fill(0x11);
  return o;
}

ShardSummary WriteSample(const std::string& path, uint32_t token_bytes) {
  ShardWriter w(path, Options(token_bytes));
  w.Add("web/a", 0, std::vector<uint32_t>{1, 2, 3});
  w.Add("web/b", 2, std::vector<uint32_t>{50000, 0});
  w.Add("code/ü", 1, std::vector<uint32_t>{7});
  return w.Finish();
}

std::string Slurp(const std::string& p) { return ReadFileToString(p); }

void Spit(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(Shard, RoundTripsDocumentsKeysAndDomains) {
  TempDir dir;
  for (uint32_t tb : {2u, 4u}) {
    const std::string path = dir / ("s" + std::to_string(tb) + ".tshard");
    const ShardSummary sum = WriteSample(path, tb);
    EXPECT_EQ(sum.num_docs, 3u);
    EXPECT_EQ(sum.num_tokens, 6u);
    ShardReader r(path);
    EXPECT_EQ(r.sha256(), sum.sha256);
    EXPECT_EQ(r.header().token_bytes, tb);
    ASSERT_EQ(r.num_docs(), 3u);
    EXPECT_EQ(r.doc_key(0), "web/a");
    EXPECT_EQ(r.doc_key(2), "code/ü");
    EXPECT_EQ(r.doc(1).domain, 2u);
    EXPECT_EQ(r.doc(1).token_start, 3u);
    EXPECT_EQ(r.doc_length(1), 2u);
    std::vector<int32_t> toks(6);
    r.CopyTokens(0, 6, toks.data());
    EXPECT_EQ(toks, (std::vector<int32_t>{1, 2, 3, 50000, 0, 7}));
  }
}

TEST(Shard, WriterIsDeterministic) {
  TempDir dir;
  WriteSample(dir / "a.tshard", 2);
  WriteSample(dir / "b.tshard", 2);
  EXPECT_EQ(Slurp(dir / "a.tshard"), Slurp(dir / "b.tshard"));
}

TEST(Shard, UnfinishedWriterLeavesNothing) {
  TempDir dir;
  {
    ShardWriter w(dir / "x.tshard", Options(2));
    w.Add("k", 0, std::vector<uint32_t>{1});
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Shard, WriterRejectsBadDocuments) {
  TempDir dir;
  ShardWriter w(dir / "x.tshard", Options(2));
  EXPECT_NE(
      ErrorOf([&] { w.Add("k", 0, std::vector<uint32_t>{60000}); }).find("outside the vocabulary"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] { w.Add("k", 0, std::vector<uint32_t>{}); }).find("no tokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { w.Add("", 0, std::vector<uint32_t>{1}); }).find("empty key"),
            std::string::npos);
  w.Add("k", 0, std::vector<uint32_t>{1});
  w.Add("k", 0, std::vector<uint32_t>{2});
  EXPECT_NE(ErrorOf([&] { w.Finish(); }).find("duplicate document key 'k'"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.tshard"));
}

TEST(Shard, TruncatedShardIsAClearErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir / "t.tshard";
  WriteSample(path, 2);
  const std::string bytes = Slurp(path);
  for (size_t cut : {size_t{1}, size_t{41}, bytes.size() / 2, bytes.size() - 150}) {
    Spit(path, bytes.substr(0, bytes.size() - cut));
    const std::string err = ErrorOf([&] { ShardReader r(path); });
    EXPECT_NE(err.find(path), std::string::npos) << err;
    EXPECT_NE(err.find("truncated"), std::string::npos) << "cut " << cut << ": " << err;
  }
}

TEST(Shard, EveryFlippedByteIsDetected) {
  TempDir dir;
  const std::string path = dir / "f.tshard";
  WriteSample(path, 4);
  const std::string bytes = Slurp(path);
  // Header, tokens, index, keys, trailer: no single flipped byte goes unnoticed.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    Spit(path, bad);
    const std::string err = ErrorOf([&] { ShardReader r(path); });
    EXPECT_NE(err.find(path), std::string::npos) << "byte " << i << " flipped, not detected";
  }
  // A flipped token byte is reported as a content hash mismatch.
  std::string bad = bytes;
  bad[kShardHeaderBytes + 2] ^= 0x40;
  Spit(path, bad);
  EXPECT_NE(ErrorOf([&] { ShardReader r(path); }).find("content hash mismatch"), std::string::npos);
}

TEST(Shard, ExpectationsAreChecked) {
  TempDir dir;
  const std::string path = dir / "e.tshard";
  const ShardSummary sum = WriteSample(path, 2);
  ShardExpectations ex;
  ex.contract = ContractHash{};
  ex.contract->fill(0x22);
  std::string err = ErrorOf([&] { ShardReader r(path, ex); });
  EXPECT_NE(err.find("tokenized under contract 1111"), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos);

  ShardExpectations hash;
  hash.sha256 = std::string(64, '0');
  err = ErrorOf([&] { ShardReader r(path, hash); });
  EXPECT_NE(err.find("manifest expects sha256"), std::string::npos) << err;
  hash.sha256 = sum.sha256;
  EXPECT_EQ(ErrorOf([&] { ShardReader r(path, hash); }), "");

  ShardExpectations width;
  width.token_bytes = 4;
  EXPECT_NE(ErrorOf([&] { ShardReader r(path, width); }).find("token width"), std::string::npos);
}

TEST(Shard, MissingOrForeignFileIsAClearError) {
  TempDir dir;
  EXPECT_NE(ErrorOf([&] { ShardReader r(dir / "nope.tshard"); }).find("nope.tshard: cannot open"),
            std::string::npos);
  Spit(dir / "text.tshard", std::string(500, 'x'));
  EXPECT_NE(ErrorOf([&] { ShardReader r(dir / "text.tshard"); }).find("bad magic"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::data
