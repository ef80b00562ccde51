// The tokenizer contract: written, read back, and refused when its format, Unicode version,
// keys or artifact do not match this build.
#include "tokenizer/contract.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/test_util.h"
#include "tokenizer/loaders.h"
#include "tokenizer/trainer.h"
#include "tokenizer/unicode.h"

namespace trail::tok {
namespace {

// A tokenizer trained on a few lines (no downloaded files) and its contract.
struct ContractFixture {
  TempDir dir;
  std::string contract = (dir / "tok.contract.json");
  ContractFixture() {
    std::vector<std::string> docs;
    for (int i = 0; i < 20; ++i) docs.push_back("the quick brown fox " + std::to_string(i));
    TrainOptions t;
    t.vocab_size = 300;  // training stops earlier: no pair occurs twice
    t.pattern = NamedPattern("cl100k");
    t.specials = {"<|eos|>"};
    WriteFileAtomic(dir / "tok.json", ToHfTokenizerJson(*TrainBpe(docs, t)));
    WriteFileAtomic(dir / "sample.txt", docs[0]);
    WriteFileAtomic(contract, ContractToJson(MakeContract(dir / "tok.json", dir.path(), "",
                                                          "<|eos|>", "", dir / "sample.txt")));
  }
  // The contract's text with `from` replaced by `to` (which must occur once), written beside it.
  std::string Edited(const std::string& from, const std::string& to) const {
    std::string text = ReadFileToString(contract);
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
    const std::string path = dir / "edited.contract.json";
    WriteFileAtomic(path, text.replace(at, from.size(), to));
    return path;
  }
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Contract, RecordsTheUnicodeVersionAndLoadsBack) {
  ContractFixture f;
  const std::string text = ReadFileToString(f.contract);
  EXPECT_TRUE(Contains(text, "\"format\": \"trail.tokenizer-contract.v2\""));
  EXPECT_TRUE(Contains(text, "\"unicode_version\": \"" + std::string(UnicodeVersion()) + "\""));
  const LoadedContract lc = LoadContract(f.contract);
  EXPECT_EQ(lc.contract.unicode_version, UnicodeVersion());
  EXPECT_EQ(lc.contract.eos_id, lc.tokenizer->SpecialId("<|eos|>"));
  EXPECT_EQ(lc.contract.vocab_size, lc.tokenizer->vocab_size());
  EXPECT_EQ(ContractToJson(lc.contract), text);  // what is read is what was written
}

TEST(Contract, RefusesAVersionOneContractAndSaysToRewriteIt) {
  ContractFixture f;
  std::string v1 = f.Edited("trail.tokenizer-contract.v2", "trail.tokenizer-contract.v1");
  // A v1 file had no unicode_version: drop it too; the message is the same either way.
  std::string text = ReadFileToString(v1);
  const size_t at = text.find("  \"unicode_version\"");
  text.erase(at, text.find('\n', at) + 1 - at);
  WriteFileAtomic(v1, text);
  const std::string error = ErrorOf([&] { LoadContract(v1); });
  EXPECT_TRUE(Contains(error, "v1")) << error;
  EXPECT_TRUE(Contains(error, "Unicode " + std::string(UnicodeVersion()))) << error;
  EXPECT_TRUE(Contains(error, "trail tokenizer contract")) << error;
}

TEST(Contract, RefusesAnotherUnicodeVersion) {
  ContractFixture f;
  const std::string version(UnicodeVersion());
  const std::string other = f.Edited("\"" + version + "\"", "\"15.1.0\"");
  const std::string error = ErrorOf([&] { LoadContract(other); });
  EXPECT_TRUE(Contains(error, "Unicode 15.1.0")) << error;
  EXPECT_TRUE(Contains(error, version)) << error;
  const std::string missing = f.Edited("\"unicode_version\"", "\"unicode\"");
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadContract(missing); }), "no \"unicode_version\""));
}

TEST(Contract, RefusesUnknownKeysAndForeignArtifacts) {
  ContractFixture f;
  const std::string extra = f.Edited("\"vocab_size\"", "\"extra\": 1,\n  \"vocab_size\"");
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadContract(extra); }), "unknown key 'extra'"));
  const LoadedContract lc = LoadContract(f.contract);
  std::string sha = lc.contract.artifact_sha256;
  std::string forged = sha;
  forged[0] = forged[0] == '0' ? '1' : '0';
  const std::string pinned = f.Edited(sha, forged);
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadContract(pinned); }), "but the contract pins"));
  const std::string size = std::to_string(lc.contract.vocab_size);
  const std::string vocab = f.Edited(
      "\"vocab_size\": " + size, "\"vocab_size\": " + std::to_string(lc.contract.vocab_size + 1));
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadContract(vocab); }), "differs from the contract"));
  const std::string format = f.Edited("trail.tokenizer-contract.v2", "something-else");
  EXPECT_TRUE(
      Contains(ErrorOf([&] { LoadContract(format); }), "not a trail.tokenizer-contract.v2"));
}

}  // namespace
}  // namespace trail::tok
