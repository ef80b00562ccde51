// Documents in input order with their token ids: what `data tokenize` writes into shards. A
// batch comes from encoding input records (BatchEncoder) or, in a tokenize job split into
// tasks, from the token runs the tasks left (tokenize_tasks.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "ingest/documents.h"
#include "tokenizer/tokenizer.h"

namespace trail::ingest {

struct TokenDoc {
  uint64_t input = 0;       // index into the job's inputs
  uint64_t line = 0;        // 1-based line in that input
  uint64_t text_bytes = 0;  // of the document's text
  std::string id;
  std::vector<uint32_t> ids;  // empty for a document with no text
};
using TokenBatch = std::vector<TokenDoc>;

// Reads records on the calling thread, parses and encodes them on a pool (one for the whole
// job, so threads keep their tokenizer caches).
class BatchEncoder {
 public:
  BatchEncoder(const tok::Tokenizer& tokenizer, int threads);
  // The next batch of input `input` (at most 2048 documents or 32 MiB of records), the first
  // bad record in input order rethrown naming path:line; false once the input is exhausted
  // (the batch may still hold its last documents).
  bool Next(DocumentReader& reader, uint64_t input, TokenBatch& batch);

 private:
  const tok::Tokenizer& tokenizer_;
  ThreadPool pool_;
  std::vector<std::string> records_;
  std::vector<uint64_t> lines_;
};

// A token run: a task's documents as length-prefixed records (core/spill.h), each
// u64 input, u64 line, u64 text_bytes, u64 id length, id bytes, u64 n, n × u32 ids, all
// little-endian. Private to a tokenize job in tasks.
void EncodeTokenDoc(const TokenDoc& d, std::string* out);
// Throws trail::Error on a record that does not decode exactly.
TokenDoc DecodeTokenDoc(std::string_view bytes);

}  // namespace trail::ingest
