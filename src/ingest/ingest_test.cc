// The ingest layer's library functions on their own: document reading by format, token-id JSONL
// import, the tokenize job and manifest building — with a small tokenizer trained here, so the
// tests need no downloaded files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/test_util.h"
#include "data/shard_format.h"
#include "data/shard_reader.h"
#include "data/stream.h"
#include "ingest/documents.h"
#include "ingest/manifest_builder.h"
#include "ingest/token_import.h"
#include "ingest/tokenize_job.h"
#include "tokenizer/contract.h"
#include "tokenizer/loaders.h"
#include "tokenizer/trainer.h"

namespace trail::ingest {
namespace {
namespace fs = std::filesystem;

std::string Jsonl(const std::vector<std::pair<std::string, std::string>>& docs) {
  std::string out;
  for (const auto& [id, text] : docs)
    out += "{\"id\": \"" + id + "\", \"text\": \"" + text + "\"}\n";
  return out;
}

TEST(Documents, FormatBySuffixOrAsToldAndItsText) {
  TempDir dir;
  const std::string jsonl = dir / "a.jsonl", text = dir / "b.txt", odd = dir / "c.jsonl.txt";
  WriteFileAtomic(jsonl, Jsonl({{"1", "one"}, {"2", "two"}}));
  WriteFileAtomic(text, "all of it");
  WriteFileAtomic(odd, Jsonl({{"3", "three"}}));
  EXPECT_TRUE(HasJsonlSuffix("x/y.jsonl") && HasJsonlSuffix("y.jsonl.gz") &&
              HasJsonlSuffix("y.jsonl.zst"));
  EXPECT_FALSE(HasJsonlSuffix("y.jsonl.txt") || HasJsonlSuffix("jsonl") ||
               HasJsonlSuffix("y.json"));
  EXPECT_EQ(ReadDocumentTexts({jsonl, text, odd}, DocumentFormat::kBySuffix),
            (std::vector<std::string>{"one", "two", "all of it", Jsonl({{"3", "three"}})}));
  EXPECT_EQ(ReadDocumentTexts({odd}, DocumentFormat::kJsonl), (std::vector<std::string>{"three"}));
  EXPECT_EQ(ReadDocumentTexts({jsonl}, DocumentFormat::kText).size(), 1u);
  EXPECT_NE(ErrorOf([] { ParseDocumentFormat("xml"); }).find("auto, jsonl or text"),
            std::string::npos);
}

data::ShardWriterOptions ShardOptions() {
  data::ShardWriterOptions o;
  o.vocab_size = 1000;
  o.token_bytes = 2;
  o.contract.fill(0xab);
  return o;
}

TEST(TokenImport, WritesTheDocumentsInOrder) {
  TempDir dir;
  const std::string in = dir / "t.jsonl", out = dir / "t.tshard";
  WriteFileAtomic(in,
                  "{\"key\": \"a\", \"tokens\": [1, 2, 3]}\n"
                  "{\"key\": \"b\", \"tokens\": [999], \"domain\": 4}\n");
  const data::ShardSummary s = ImportTokenJsonl(in, out, ShardOptions());
  EXPECT_EQ(s.num_docs, 2u);
  EXPECT_EQ(s.num_tokens, 4u);
  data::ShardReader r(out, {});
  EXPECT_EQ(r.doc_key(1), "b");
  EXPECT_EQ(r.token(3), 999u);
}

TEST(TokenImport, BadLinesNameFileAndLineAndWriteNothing) {
  TempDir dir;
  const std::string in = dir / "t.jsonl", out = dir / "t.tshard";
  const std::string good = "{\"key\": \"a\", \"tokens\": [1]}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"key\": \"b\", \"tokens\": [1]", "not valid JSON"},
      {"[1, 2]", "must be a JSON object"},
      {"{\"key\": \"b\", \"tokens\": [1], \"extra\": 1}", "unknown key 'extra'"},
      {"{\"key\": 5, \"tokens\": [1]}", "'key' must be a string"},
      {"{\"key\": \"b\", \"tokens\": [-1]}", "non-negative integers"},
      {"{\"key\": \"b\", \"tokens\": [1000]}", "t.jsonl:2: "},  // outside the vocabulary
      {"{\"key\": \"b\", \"tokens\": [1], \"domain\": \"x\"}", "'domain' must be an unsigned"}};
  for (const auto& [line, message] : cases) {
    WriteFileAtomic(in, good + line + "\n");
    const std::string e = ErrorOf([&] { ImportTokenJsonl(in, out, ShardOptions()); });
    EXPECT_NE(e.find(message), std::string::npos) << line << " -> " << e;
    EXPECT_NE(e.find("t.jsonl:2"), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(out)) << line;
  }
}

TEST(ManifestBuilder, BatchSchedulePhases) {
  const auto p = ParseBatchSchedule("0:8,100:16", "--batch-schedule");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].from_step, 100);
  EXPECT_EQ(p[1].windows, 16);
  EXPECT_EQ(ParseBatchSchedule("32", "--batch-schedule")[0].windows, 32);
  EXPECT_NE(ErrorOf([] {
              ParseBatchSchedule("8,x:2", "--batch-schedule");
            }).find("--batch-schedule '8,x:2' is not WINDOWS or FROM_STEP:WINDOWS"),
            std::string::npos);
}

TEST(ManifestBuilder, LengthAndMixturePhases) {
  const auto L = ParseSeqLenPhases("100:512,900:2048", "--seq-len-phases");
  ASSERT_EQ(L.size(), 2u);
  EXPECT_EQ(L[1].from_step, 900);
  EXPECT_EQ(L[1].seq_len, 2048);
  EXPECT_NE(ErrorOf([] {
              ParseSeqLenPhases("512", "--seq-len-phases");
            }).find("'512' is not FROM_STEP:L"),
            std::string::npos);
  const auto m = ParseMixturePhase("800:books=0.7,code=0.3", "--mixture-phase");
  EXPECT_EQ(m.from_step, 800);
  ASSERT_EQ(m.shares.size(), 2u);
  EXPECT_EQ(m.shares[0].first, "books");
  EXPECT_EQ(m.shares[1].second, 0.3);
  for (const char* bad : {"books=1", "8:books", "8:books=x", "8:=1", "8:", "8:books=1x"}) {
    EXPECT_NE(ErrorOf([&] {
                ParseMixturePhase(bad, "--mixture-phase");
              }).find("is not FROM_STEP:NAME=SHARE"),
              std::string::npos)
        << bad;
  }
}

// A tokenizer trained on a few lines, its contract, and documents tokenized under it.
struct Fixture {
  TempDir dir;
  std::string contract, list;
  Fixture() {
    std::vector<std::string> docs;
    for (int i = 0; i < 40; ++i)
      docs.push_back("the quick brown fox " + std::to_string(i) + " jumps");
    tok::TrainOptions t;
    t.vocab_size = 300;
    t.pattern = tok::NamedPattern("cl100k");
    t.specials = {"<|eos|>"};
    WriteFileAtomic(dir / "tok.json", tok::ToHfTokenizerJson(*tok::TrainBpe(docs, t)));
    WriteFileAtomic(dir / "sample.txt", docs[0]);
    contract = dir / "tok.contract.json";
    WriteFileAtomic(
        contract, tok::ContractToJson(tok::MakeContract(dir / "tok.json", dir.path(), "", "<|eos|>",
                                                        "", dir / "sample.txt")));
    std::string jsonl;
    for (int i = 0; i < 30; ++i)
      jsonl += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + docs[i] + "\"}\n";
    WriteFileAtomic(dir / "docs.jsonl", jsonl);
    TokenizeOptions o;
    o.contract = contract;
    o.inputs = {dir / "docs.jsonl"};
    o.output_dir = dir / "shards";
    o.shard_tokens = 50;
    const TokenizeResult r = RunTokenize(o);
    list = dir / "shards/shard.shards.json";
    WriteShardList(r, list);
  }
};

TEST(ManifestBuilder, FromTokenizeOutputsAndCheckedByOpeningItsStream) {
  Fixture f;
  ManifestSpec spec;
  spec.contract = f.contract;
  spec.sources = {"web=1=" + f.list};
  spec.validation = {"web=" + f.list};
  spec.seq_len = 8;
  spec.batch_schedule = "0:4";
  spec.output = f.dir / "run/manifest.json";
  fs::create_directories(f.dir / "run");
  const BuiltManifest b = BuildManifest(spec);
  EXPECT_EQ(b.sources, 1u);
  const data::Manifest m = data::LoadManifest(spec.output);
  const tok::LoadedContract lc = tok::LoadContract(f.contract);
  EXPECT_EQ(m.tokenizer.vocab_size, lc.contract.vocab_size);
  EXPECT_EQ(m.tokenizer.token_bytes, 2u);  // data::TokenBytesForVocab: a small vocabulary
  EXPECT_EQ(m.tokenizer.eos_id, lc.contract.eos_id);
  EXPECT_GE(m.tokenizer.eos_id, 256);
  EXPECT_TRUE(m.stream.append_eos);
  ASSERT_GT(m.sources[0].shards.size(), 1u);                          // several shards of 50 tokens
  EXPECT_EQ(m.sources[0].shards[0].path.rfind("../shards/", 0), 0u);  // relative to the manifest
  EXPECT_EQ(m.validation[0].domain, "web");
  EXPECT_EQ(data::CanonicalStream(m).num_windows(), b.windows);
}

TEST(ManifestBuilder, RefusesBadSpecsAndForeignOrUnfinishedShardLists) {
  Fixture f;
  ManifestSpec spec;
  spec.contract = f.contract;
  spec.output = f.dir / "manifest.json";
  auto error = [&](std::vector<std::string> sources) {
    spec.sources = std::move(sources);
    return ErrorOf([&] { BuildManifest(spec); });
  };
  EXPECT_NE(error({"web=" + f.list}).find("is not NAME=SHARE=SHARDS_JSON"), std::string::npos);
  EXPECT_NE(error({"web=x=" + f.list}).find("bad share"), std::string::npos);
  std::string text = ReadFileToString(f.list);
  WriteFileAtomic(f.dir / "partial.json",
                  text.replace(text.find("\"complete\": true"), 16, "\"complete\": false"));
  EXPECT_NE(error({"web=1=" + (f.dir / "partial.json")}).find("not complete"), std::string::npos);
  text = ReadFileToString(f.list);
  const size_t at = text.find("\"contract\": \"") + 13;
  text[at] = text[at] == '0' ? '1' : '0';
  WriteFileAtomic(f.dir / "foreign.json", text);
  EXPECT_NE(error({"web=1=" + (f.dir / "foreign.json")}).find("another tokenizer contract"),
            std::string::npos);
  WriteFileAtomic(f.dir / "wrong.json",
                  "{\"contract\": \"" + ToHex(tok::LoadContract(f.contract).hash) +
                      "\", \"complete\": true, \"shards\": [{\"sha256\": 1}]}");
  EXPECT_NE(error({"web=1=" + (f.dir / "wrong.json")}).find("not a shard list"), std::string::npos);
  spec.positions = "neither";
  EXPECT_NE(error({"web=1=" + f.list}).find("--positions must be document or window"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(spec.output));
}

}  // namespace
}  // namespace trail::ingest
