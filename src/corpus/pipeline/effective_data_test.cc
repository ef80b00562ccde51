// The effective-data view against a lineage database written here row by row: every document
// counted once, in the bucket of its verdict, and the tokens of the kept ones per split.
#include "corpus/pipeline/effective_data.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/test_util.h"
#include "corpus/pipeline/lineage.h"

namespace trail::corpus {
namespace {

TEST(EffectiveData, CountsEachVerdictAndTheKeptTokensPerSource) {
  TempDir dir;
  const std::string path = dir / "lineage.sqlite";
  {
    Db db(path);
    CreateLineageTables(db);
    db.Exec(
        "CREATE TABLE tokens(key TEXT PRIMARY KEY, split TEXT, token_shard TEXT, "
        "shard_doc INTEGER, token_start INTEGER, tokens INTEGER)");
    // web: 2 kept (100 + 300 bytes), 1 exact duplicate (100), 1 near duplicate (50), 1 dropped
    // for language (25); code: 1 kept (1000 bytes), 1 dropped by a quality rule (10).
    db.Exec(
        "INSERT INTO documents(key, source, bytes, kept, drop_reason, split) VALUES "
        "('w1','web',100,1,NULL,'train'), ('w2','web',300,1,NULL,'validation'), "
        "('w3','web',100,0,'exact_dup',NULL), ('w4','web',50,0,'near_dup',NULL), "
        "('w5','web',25,0,'language.not_allowed',NULL), ('c1','code',1000,1,NULL,'train'), "
        "('c2','code',10,0,'quality.gopher.min_doc_words',NULL)");
    db.Exec(
        "INSERT INTO tokens(key, split, tokens) VALUES ('w1','train',30), ('w2','validation',70), "
        "('c1','train',400)");
  }
  const std::vector<SourceEffectiveData> d = EffectiveData(path);
  ASSERT_EQ(d.size(), 2u);
  const SourceEffectiveData& code = d[0];
  const SourceEffectiveData& web = d[1];
  EXPECT_EQ(web.source, "web");
  EXPECT_EQ(web.read.documents, 5);
  EXPECT_EQ(web.read.bytes, 575);
  EXPECT_EQ(web.exact_dup.bytes, 100);
  EXPECT_EQ(web.near_dup.bytes, 50);
  EXPECT_EQ(web.filtered.bytes, 25);
  EXPECT_EQ(web.kept.documents, 2);
  EXPECT_EQ(web.kept.bytes, 400);
  EXPECT_EQ(web.tokens.at("train"), 30);
  EXPECT_EQ(web.total_tokens(), 100);
  EXPECT_DOUBLE_EQ(web.nominal_tokens(), 575.0 * 100 / 400);  // 4 bytes per kept token
  EXPECT_EQ(code.source, "code");
  EXPECT_EQ(code.filtered.documents, 1);
  EXPECT_EQ(code.exact_dup.documents + code.near_dup.documents, 0);
  EXPECT_DOUBLE_EQ(code.nominal_tokens(), 1010.0 * 400 / 1000);
  WriteFileAtomic(dir / "other.sqlite", "not a database at all, just text");
  EXPECT_NE(ErrorOf([&] { EffectiveData(dir / "other.sqlite"); }).find("not a lineage database"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { EffectiveData(dir / "missing.sqlite"); }).find("not found"),
            std::string::npos);
}

}  // namespace
}  // namespace trail::corpus
