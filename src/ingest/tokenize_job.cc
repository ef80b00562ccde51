#include "ingest/tokenize_job.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "ingest/documents.h"
#include "ingest/shard_sink.h"
#include "ingest/token_batches.h"
#include "tokenizer/contract.h"

namespace trail::ingest {

using Json = nlohmann::ordered_json;
using data::ShardRef;

TokenizeResult RunTokenize(const TokenizeOptions& opt,
                           const std::function<void(const TokenizeProgress&)>& progress) {
  TRAIL_CHECK(!opt.inputs.empty(), "tokenize: no input files");
  TRAIL_CHECK(opt.shard_tokens > 0, "tokenize: shard_tokens must be positive");
  const tok::LoadedContract lc = tok::LoadContract(opt.contract);
  std::filesystem::create_directories(opt.output_dir);
  ShardSink sink(opt, lc);
  const InputPosition pos = sink.Resume();
  if (sink.res().complete) return sink.res();
  BatchEncoder encoder(*lc.tokenizer, opt.threads);
  TokenBatch batch;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_report = t0;
  for (size_t in = pos.input; in < opt.inputs.size(); ++in) {
    DocumentReader reader(opt.inputs[in]);
    if (in == pos.input && pos.line > 0) reader.SkipToLine(pos.line);
    for (bool more = true; more;) {
      more = encoder.Next(reader, in, batch);
      if (sink.Write(batch)) return sink.res();  // stopped by max_shards
      const auto now = std::chrono::steady_clock::now();
      if (progress && now - last_report > std::chrono::seconds(2)) {
        const TokenizeResult& r = sink.res();
        progress({r.documents, r.tokens, r.bytes, std::chrono::duration<double>(now - t0).count()});
        last_report = now;
      }
    }
  }
  sink.Complete();
  return sink.res();
}

void WriteShardList(const TokenizeResult& r, const std::string& path) {
  Json shards = Json::array();
  for (const ShardRef& s : r.shards) {
    shards.push_back(Json{
        {"path", s.path}, {"sha256", s.sha256}, {"tokens", s.tokens}, {"documents", s.documents}});
  }
  const Json out{{"contract", r.contract_hash},
                 {"complete", r.complete},
                 {"shards", shards},
                 {"documents", r.documents},
                 {"empty_documents", r.empty_documents},
                 {"tokens", r.tokens},
                 {"bytes", r.bytes}};
  WriteFileAtomic(path, out.dump(2) + "\n");
}

}  // namespace trail::ingest
