// The writing half of `data tokenize`: documents with their token ids, in input order, into
// token shards — a shard is closed after the first document that brings it to shard_tokens —
// with the job's journal (<prefix>.progress.json, written atomically after every finished
// shard: the shard and the input position after its last document). The shards' bytes depend
// only on the documents, the contract and shard_tokens, never on where the documents came from
// (encoded here, or replayed from tasks' token runs).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "data/shard_writer.h"
#include "ingest/token_batches.h"
#include "ingest/tokenize_job.h"
#include "tokenizer/contract.h"

namespace trail::ingest {

struct InputPosition {
  size_t input = 0;   // index into inputs
  uint64_t line = 0;  // lines of that input already consumed
};

// The journal's header: what an earlier run must have used for its shards to be continued.
nlohmann::ordered_json TokenizeJournalHeader(const TokenizeOptions& o,
                                             const std::string& contract_hash);

class ShardSink {
 public:
  ShardSink(const TokenizeOptions& opt, const tok::LoadedContract& lc);

  // Continues an earlier run of the same parameters whose recorded shards are all intact;
  // returns the position after its last shard. res().complete when it had finished.
  InputPosition Resume();
  // Writes the batch in order; true when max_shards stopped it.
  bool Write(const TokenBatch& batch);
  // The last shard and the journal's totals.
  void Complete();
  const TokenizeResult& res() const { return res_; }

 private:
  void FinishShard(const InputPosition& next);

  const TokenizeOptions& opt_;
  const std::string journal_path_;
  TokenizeResult res_;
  data::ContractHash contract_{};
  data::ShardWriterOptions wopt_;
  nlohmann::ordered_json header_, journal_;
  std::unique_ptr<data::ShardWriter> writer_;
  uint64_t shard_docs_read_ = 0, shard_empty_ = 0, shard_bytes_ = 0, shard_tokens_ = 0;
  int written_now_ = 0;
};

}  // namespace trail::ingest
