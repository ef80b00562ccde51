// Documents (dolma JSONL, plain/.gz/.zst) -> token shards, under a tokenizer contract.
//
// Documents are tokenized in parallel, in batches, and written in input order; a shard is
// closed after the first document that brings it to shard_tokens, so the shards' bytes depend
// only on the inputs, the contract and shard_tokens — never on the thread count. After every
// finished shard a journal (<prefix>.progress.json, written atomically) records the shard and
// the input position after its last document; a rerun with the same parameters verifies the
// recorded shards and continues from there, so an interrupted job resumes without changing its
// result. Documents with no text are skipped and counted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/manifest.h"

namespace trail::ingest {

struct TokenizeOptions {
  std::string contract;             // tokenizer.contract.json
  std::vector<std::string> inputs;  // read in this order
  std::string output_dir;
  std::string prefix = "shard";
  uint64_t shard_tokens = 100'000'000;
  uint32_t domain = 0;
  int threads = 1;
  int64_t max_shards = -1;  // stop after writing this many shards (resume later)
};

struct TokenizeResult {
  std::vector<data::ShardRef> shards;  // paths relative to output_dir
  std::string contract_hash;
  uint64_t documents = 0, empty_documents = 0, tokens = 0, bytes = 0;
  bool complete = false;  // false when stopped by max_shards
  int resumed_shards = 0;
};

struct TokenizeProgress {
  uint64_t documents, tokens, bytes;
  double seconds;
};

// The list a manifest's sources are built from (<prefix>.shards.json): contract, completeness,
// shards with hashes and counts, totals. Written atomically.
void WriteShardList(const TokenizeResult& r, const std::string& path);

TokenizeResult RunTokenize(const TokenizeOptions& opt,
                           const std::function<void(const TokenizeProgress&)>& progress = {});

}  // namespace trail::ingest
