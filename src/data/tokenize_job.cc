#include "data/tokenize_job.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "data/documents.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "tokenizer/contract.h"

namespace trail::data {
namespace {

using Json = nlohmann::ordered_json;
constexpr size_t kBatchDocs = 2048;
constexpr size_t kBatchBytes = 32 << 20;

struct Position {
  size_t input = 0;   // index into inputs
  uint64_t line = 0;  // lines of that input already consumed
};

std::string ShardName(const std::string& prefix, size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%05zu.tshard", i);
  return prefix + buf;
}

Json JournalHeader(const TokenizeOptions& o, const std::string& contract_hash) {
  return Json{{"format", "trail.tokenize-progress.v1"},
              {"contract", contract_hash},
              {"inputs", o.inputs},
              {"prefix", o.prefix},
              {"shard_tokens", o.shard_tokens},
              {"domain", o.domain}};
}

}  // namespace

TokenizeResult RunTokenize(const TokenizeOptions& opt,
                           const std::function<void(const TokenizeProgress&)>& progress) {
  TRAIL_CHECK(!opt.inputs.empty(), "tokenize: no input files");
  TRAIL_CHECK(opt.shard_tokens > 0, "tokenize: shard_tokens must be positive");
  const tok::LoadedContract lc = tok::LoadContract(opt.contract);
  const tok::Tokenizer& tokenizer = *lc.tokenizer;
  TokenizeResult res;
  res.contract_hash = ToHex(lc.hash);
  ContractHash contract{};
  std::copy(lc.hash.begin(), lc.hash.end(), contract.begin());
  ShardWriterOptions wopt;
  wopt.vocab_size = lc.contract.vocab_size;
  wopt.token_bytes = wopt.vocab_size <= 65536 ? 2 : 4;
  wopt.contract = contract;

  std::filesystem::create_directories(opt.output_dir);
  const std::string journal_path = opt.output_dir + "/" + opt.prefix + ".progress.json";
  const Json header = JournalHeader(opt, res.contract_hash);
  Json journal = header;
  journal["shards"] = Json::array();
  journal["complete"] = false;
  Position pos;
  // Resume: the same parameters, and every recorded shard still intact.
  if (std::filesystem::exists(journal_path)) {
    Json old;
    try {
      old = Json::parse(ReadFileToString(journal_path));
    } catch (const Json::parse_error& e) {
      TRAIL_FAIL(journal_path, ": not valid JSON: ", e.what());
    }
    Json old_header = old;
    old_header.erase("shards");
    old_header.erase("complete");
    old_header.erase("totals");
    TRAIL_CHECK(old_header == header, journal_path,
                ": an earlier run used other parameters (contract, inputs, prefix, shard_tokens "
                "or domain); use another output directory or prefix");
    for (const Json& s : old["shards"]) {
      ShardRef ref{s["path"], s["sha256"], s["tokens"], s["documents"]};
      ShardExpectations ex;
      ex.sha256 = ref.sha256;
      ex.contract = contract;
      ShardReader check(opt.output_dir + "/" + ref.path, ex);
      res.shards.push_back(ref);
      pos = {s["next_input"].get<size_t>(), s["next_line"].get<uint64_t>()};
      res.documents += s["documents_read"].get<uint64_t>();
      res.empty_documents += s["empty_documents"].get<uint64_t>();
      res.bytes += s["bytes"].get<uint64_t>();
      res.tokens += ref.tokens;
      journal["shards"].push_back(s);
    }
    res.resumed_shards = static_cast<int>(res.shards.size());
    if (old.value("complete", false)) {
      res.complete = true;
      return res;
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  auto last_report = t0;
  std::unique_ptr<ShardWriter> writer;
  uint64_t shard_docs_read = 0, shard_empty = 0, shard_bytes = 0, shard_tokens = 0;
  int written_now = 0;
  auto finish_shard = [&](const Position& next) {
    const ShardSummary sum = writer->Finish();
    writer.reset();
    ShardRef ref{std::filesystem::path(sum.path).filename().string(), sum.sha256, sum.num_tokens,
                 sum.num_docs};
    res.shards.push_back(ref);
    journal["shards"].push_back(Json{{"path", ref.path},
                                     {"sha256", ref.sha256},
                                     {"tokens", ref.tokens},
                                     {"documents", ref.documents},
                                     {"documents_read", shard_docs_read},
                                     {"empty_documents", shard_empty},
                                     {"bytes", shard_bytes},
                                     {"next_input", next.input},
                                     {"next_line", next.line}});
    WriteFileAtomic(journal_path, journal.dump(2) + "\n");
    shard_docs_read = shard_empty = shard_bytes = shard_tokens = 0;
    ++written_now;
  };

  // One pool for the whole job: its threads keep their tokenizer caches from batch to batch.
  ThreadPool pool(static_cast<size_t>(std::max(1, opt.threads)));
  std::vector<Document> batch;
  std::vector<std::string> records;
  std::vector<uint64_t> lines;
  std::vector<std::vector<uint32_t>> ids;
  std::vector<std::exception_ptr> errors;
  bool stopped = false;
  for (size_t in = pos.input; in < opt.inputs.size() && !stopped; ++in) {
    DocumentReader reader(opt.inputs[in]);
    if (in == pos.input && pos.line > 0) reader.SkipToLine(pos.line);
    bool more = true;
    while (more && !stopped) {
      // Read raw records here; parse and encode them on the workers; write them in order.
      records.clear();
      lines.clear();
      size_t bytes = 0;
      std::string rec;
      uint64_t line_no = 0;
      while (records.size() < kBatchDocs && bytes < kBatchBytes &&
             (more = reader.NextRecord(rec, line_no))) {
        bytes += rec.size();
        records.push_back(std::move(rec));
        lines.push_back(line_no);
      }
      batch.assign(records.size(), Document{});
      ids.assign(records.size(), {});
      errors.assign(records.size(), nullptr);
      pool.ParallelFor(records.size(), [&](size_t i) {
        try {
          ParseDocument(records[i], opt.inputs[in], lines[i], batch[i]);
          tokenizer.EncodeOrdinary(batch[i].text, ids[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
      for (const auto& e : errors) {
        if (e) std::rethrow_exception(e);  // the first bad record in input order
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        ++res.documents;
        ++shard_docs_read;
        res.bytes += batch[i].text.size();
        shard_bytes += batch[i].text.size();
        if (ids[i].empty()) {
          ++res.empty_documents;
          ++shard_empty;
          continue;
        }
        if (!writer) {
          writer = std::make_unique<ShardWriter>(
              opt.output_dir + "/" + ShardName(opt.prefix, res.shards.size()), wopt);
        }
        try {
          writer->Add(batch[i].id, opt.domain, ids[i]);
        } catch (const Error& e) {
          TRAIL_FAIL(opt.inputs[in], ":", batch[i].line, ": ", e.what());
        }
        shard_tokens += ids[i].size();
        res.tokens += ids[i].size();
        if (shard_tokens >= opt.shard_tokens) {
          finish_shard({in, batch[i].line});
          if (opt.max_shards >= 0 && written_now >= opt.max_shards) {
            stopped = true;
            break;
          }
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (progress && now - last_report > std::chrono::seconds(2)) {
        progress({res.documents, res.tokens, res.bytes,
                  std::chrono::duration<double>(now - t0).count()});
        last_report = now;
      }
    }
  }
  if (!stopped) {
    if (writer) finish_shard({opt.inputs.size(), 0});
    res.complete = true;
    journal["complete"] = true;
    journal["totals"] = Json{{"documents", res.documents},
                             {"empty_documents", res.empty_documents},
                             {"tokens", res.tokens},
                             {"bytes", res.bytes}};
    WriteFileAtomic(journal_path, journal.dump(2) + "\n");
  }
  return res;
}

void WriteShardList(const TokenizeResult& r, const std::string& path) {
  Json shards = Json::array();
  for (const ShardRef& s : r.shards) {
    shards.push_back(Json{{"path", s.path}, {"sha256", s.sha256}, {"tokens", s.tokens},
                          {"documents", s.documents}});
  }
  const Json out{{"contract", r.contract_hash}, {"complete", r.complete}, {"shards", shards},
                 {"documents", r.documents}, {"empty_documents", r.empty_documents},
                 {"tokens", r.tokens}, {"bytes", r.bytes}};
  WriteFileAtomic(path, out.dump(2) + "\n");
}

}  // namespace trail::data
