// Synthetic corpora for the data tests: shards of documents whose token ids encode where they
// came from, a manifest over them, in a temporary directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/manifest.h"

namespace trail::data::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct TestSource {
  std::string name;
  double share = 1;
  int shards = 2;
  int docs_per_shard = 10;
  int min_len = 1, max_len = 40;
  Sampling sampling = Sampling::kPermutation;
  uint32_t max_epochs = 0;
};

inline constexpr int64_t kTestEos = 7, kTestPad = 3;
inline constexpr uint32_t kTestVocab = 1u << 30;

// Token j of document d of shard h of source s: a distinct id >= 16 (ids below 16 are special).
uint32_t TestToken(int source, int shard, int doc, int j);
// Length of that document (deterministic in [min_len, max_len]).
int TestDocLength(const TestSource& src, int source, int shard, int doc);

// Writes the shards and manifest.json into dir; returns the loaded manifest.
Manifest MakeCorpus(const std::string& dir, const std::vector<TestSource>& sources,
                    const StreamConfig& stream, uint32_t token_bytes = 4);

}  // namespace trail::data::testing
