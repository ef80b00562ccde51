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

#include "ingest/tokenize_tasks.h"

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

struct CorpusTokenizeOptions {
  std::string contract;  // tokenizer.contract.json
  int threads = 1;
  uint64_t shard_tokens = 100'000'000;
};

CorpusTokens TokenizeCorpus(const std::string& out_dir, const CorpusTokenizeOptions& opt);

// The same in tasks (ingest/tokenize_tasks.h): encode task i of N takes a byte-balanced slice of
// all the build's shards — the (split, source) groups' files as one list, in group order — into
// <out>/tokens/.tasks/corpus-NNNNN/task-IIIII/; the final phase verifies every task and replays
// the documents into each group's shard writer in turn, so token shards, shard lists, the
// lineage's tokens table and the report are a one-process run's bytes for any N.
ingest::TokenizeTaskSummary TokenizeCorpusTask(const std::string& out_dir,
                                               const CorpusTokenizeOptions& opt, uint32_t task,
                                               uint32_t tasks);
CorpusTokens TokenizeCorpusFromTasks(const std::string& out_dir, const CorpusTokenizeOptions& opt,
                                     uint32_t tasks);

}  // namespace trail::corpus
