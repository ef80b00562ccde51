// Synthetic corpora for tests, the self-test and benchmarks: shards of documents whose token ids
// are a fixed function of (source, shard, document, offset), and a manifest over them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/manifest.h"

namespace trail::data::synthetic {

struct SyntheticSource {
  std::string name;
  double share = 1;
  int shards = 2;
  int docs_per_shard = 10;
  int min_len = 1, max_len = 40;
  Sampling sampling = Sampling::kPermutation;
  uint32_t max_epochs = 0;
};

inline constexpr int64_t kSyntheticEos = 7, kSyntheticPad = 3;
inline constexpr uint32_t kSyntheticVocab = 1u << 30;

// Token j of document d of shard h of source s: a distinct id >= 16 (ids below 16 are special).
uint32_t SyntheticToken(int source, int shard, int doc, int j);
// Length of that document (deterministic in [min_len, max_len]).
int SyntheticDocLength(const SyntheticSource& src, int source, int shard, int doc);

// Writes the shards and manifest.json into dir; returns the loaded manifest.
// vocab_size 0: 65536 for 2-byte tokens, else kSyntheticVocab; a smaller one (> 16) keeps ids
// below it (for training a model on the corpus).
Manifest MakeCorpus(const std::string& dir, const std::vector<SyntheticSource>& sources,
                    const StreamConfig& stream, uint32_t token_bytes = 4, uint32_t vocab_size = 0);

}  // namespace trail::data::synthetic
