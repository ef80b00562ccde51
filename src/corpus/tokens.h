// After a corpus build: its output shards tokenized under a tokenizer contract into token
// shards per split and source (<out>/tokens/<split>/<source>-NNNNN.tshard and
// <source>.shards.json, ready for `trail data manifest`), every document's token shard and
// range added to the lineage (table `tokens`), and the token-level share of each source
// measured next to its document-level share (quotas are set on documents,
// training mixes tokens).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::corpus {

struct TokenShare {
  std::string split, source;
  uint64_t documents = 0, tokens = 0;
  double document_share = 0, token_share = 0;  // within the split
};

struct CorpusTokens {
  std::vector<TokenShare> shares;  // split order train, validation, test; sources by name
  std::string report_json;         // also written to <out>/tokens/report.json
};

CorpusTokens TokenizeCorpus(const std::string& out_dir, const std::string& contract, int threads,
                            uint64_t shard_tokens = 100'000'000);

}  // namespace trail::corpus
