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
#include "data/shard_reader.h"
#include "data/shard_format.h"
#include "data/shard_writer.h"
#include "tokenizer/contract.h"

namespace trail::ingest {
namespace {

using data::ContractHash;
using data::ShardRef;
using data::ShardWriter;
using data::ShardExpectations;
using data::ShardReader;
using data::ShardSummary;
using data::ShardWriterOptions;

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

// One tokenize run: its journal, the shard being written and the running totals.
class TokenizeJob {
 public:
  TokenizeJob(const TokenizeOptions& opt, const tok::LoadedContract& lc)
      : opt_(opt), tokenizer_(*lc.tokenizer),
        journal_path_(opt.output_dir + "/" + opt.prefix + ".progress.json"),
        pool_(static_cast<size_t>(std::max(1, opt.threads))) {
    res_.contract_hash = ToHex(lc.hash);
    std::copy(lc.hash.begin(), lc.hash.end(), contract_.begin());
    wopt_.vocab_size = lc.contract.vocab_size;
    wopt_.token_bytes = data::TokenBytesForVocab(wopt_.vocab_size);
    wopt_.contract = contract_;
    header_ = JournalHeader(opt, res_.contract_hash);
    journal_ = header_;
    journal_["shards"] = Json::array();
    journal_["complete"] = false;
  }

  // Continues an earlier run of the same parameters whose recorded shards are all intact;
  // returns the position after its last shard. res().complete when it had finished.
  Position Resume() {
    Position pos;
    if (!std::filesystem::exists(journal_path_)) return pos;
    Json old;
    try {
      old = Json::parse(ReadFileToString(journal_path_));
    } catch (const Json::exception& e) {
      TRAIL_FAIL(journal_path_, ": not valid JSON: ", e.what());
    }
    Json old_header = old;
    old_header.erase("shards");
    old_header.erase("complete");
    old_header.erase("totals");
    TRAIL_CHECK(old_header == header_, journal_path_,
                ": an earlier run used other parameters (contract, inputs, prefix, shard_tokens "
                "or domain); use another output directory or prefix");
    for (const Json& s : old["shards"]) {
      ShardRef ref{s["path"], s["sha256"], s["tokens"], s["documents"]};
      ShardExpectations ex;
      ex.sha256 = ref.sha256;
      ex.contract = contract_;
      ShardReader check(opt_.output_dir + "/" + ref.path, ex);
      res_.shards.push_back(ref);
      pos = {s["next_input"].get<size_t>(), s["next_line"].get<uint64_t>()};
      res_.documents += s["documents_read"].get<uint64_t>();
      res_.empty_documents += s["empty_documents"].get<uint64_t>();
      res_.bytes += s["bytes"].get<uint64_t>();
      res_.tokens += ref.tokens;
      journal_["shards"].push_back(s);
    }
    res_.resumed_shards = static_cast<int>(res_.shards.size());
    res_.complete = old.value("complete", false);
    return pos;
  }

  // Reads the next batch of input `in` (raw records here, parsed and encoded on the workers,
  // the first bad record in input order rethrown); false once the input is exhausted.
  bool ReadBatch(DocumentReader& reader, size_t in) {
    records_.clear();
    lines_.clear();
    size_t bytes = 0;
    std::string rec;
    uint64_t line_no = 0;
    bool more = true;
    while (records_.size() < kBatchDocs && bytes < kBatchBytes &&
           (more = reader.NextRecord(rec, line_no))) {
      bytes += rec.size();
      records_.push_back(std::move(rec));
      lines_.push_back(line_no);
    }
    batch_.assign(records_.size(), Document{});
    ids_.assign(records_.size(), {});
    errors_.assign(records_.size(), nullptr);
    pool_.ParallelFor(records_.size(), [&](size_t i) {
      try {
        ParseDocument(records_[i], opt_.inputs[in], lines_[i], batch_[i]);
        tokenizer_.EncodeOrdinary(batch_[i].text, ids_[i]);
      } catch (...) {
        errors_[i] = std::current_exception();
      }
    });
    for (const auto& e : errors_) {
      if (e) std::rethrow_exception(e);
    }
    return more;
  }

  // Writes the batch in order, closing a shard at shard_tokens; true when max_shards stopped it.
  bool WriteBatch(size_t in) {
    for (size_t i = 0; i < batch_.size(); ++i) {
      ++res_.documents, ++shard_docs_read_;
      res_.bytes += batch_[i].text.size();
      shard_bytes_ += batch_[i].text.size();
      if (ids_[i].empty()) {
        ++res_.empty_documents, ++shard_empty_;
        continue;
      }
      if (!writer_) {
        writer_ = std::make_unique<ShardWriter>(
            opt_.output_dir + "/" + ShardName(opt_.prefix, res_.shards.size()), wopt_);
      }
      try {
        writer_->Add(batch_[i].id, opt_.domain, ids_[i]);
      } catch (const Error& e) {
        TRAIL_FAIL(opt_.inputs[in], ":", batch_[i].line, ": ", e.what());
      }
      shard_tokens_ += ids_[i].size();
      res_.tokens += ids_[i].size();
      if (shard_tokens_ >= opt_.shard_tokens) {
        FinishShard({in, batch_[i].line});
        if (opt_.max_shards >= 0 && written_now_ >= opt_.max_shards) return true;
      }
    }
    return false;
  }

  // The last shard and the journal's totals.
  void Complete() {
    if (writer_) FinishShard({opt_.inputs.size(), 0});
    res_.complete = true;
    journal_["complete"] = true;
    journal_["totals"] = Json{{"documents", res_.documents},
                              {"empty_documents", res_.empty_documents},
                              {"tokens", res_.tokens},
                              {"bytes", res_.bytes}};
    WriteFileAtomic(journal_path_, journal_.dump(2) + "\n");
  }

  const TokenizeResult& res() const { return res_; }

 private:
  // Closes the shard and records it, with the input position after its last document.
  void FinishShard(const Position& next) {
    const ShardSummary sum = writer_->Finish();
    writer_.reset();
    ShardRef ref{std::filesystem::path(sum.path).filename().string(), sum.sha256, sum.num_tokens,
                 sum.num_docs};
    res_.shards.push_back(ref);
    journal_["shards"].push_back(Json{{"path", ref.path},
                                      {"sha256", ref.sha256},
                                      {"tokens", ref.tokens},
                                      {"documents", ref.documents},
                                      {"documents_read", shard_docs_read_},
                                      {"empty_documents", shard_empty_},
                                      {"bytes", shard_bytes_},
                                      {"next_input", next.input},
                                      {"next_line", next.line}});
    WriteFileAtomic(journal_path_, journal_.dump(2) + "\n");
    shard_docs_read_ = shard_empty_ = shard_bytes_ = shard_tokens_ = 0;
    ++written_now_;
  }

  const TokenizeOptions& opt_;
  const tok::Tokenizer& tokenizer_;
  const std::string journal_path_;
  ThreadPool pool_;  // one for the whole job: threads keep their tokenizer caches
  TokenizeResult res_;
  ContractHash contract_{};
  ShardWriterOptions wopt_;
  Json header_, journal_;
  std::unique_ptr<ShardWriter> writer_;
  uint64_t shard_docs_read_ = 0, shard_empty_ = 0, shard_bytes_ = 0, shard_tokens_ = 0;
  int written_now_ = 0;
  std::vector<Document> batch_;
  std::vector<std::string> records_;
  std::vector<uint64_t> lines_;
  std::vector<std::vector<uint32_t>> ids_;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace

TokenizeResult RunTokenize(const TokenizeOptions& opt,
                           const std::function<void(const TokenizeProgress&)>& progress) {
  TRAIL_CHECK(!opt.inputs.empty(), "tokenize: no input files");
  TRAIL_CHECK(opt.shard_tokens > 0, "tokenize: shard_tokens must be positive");
  const tok::LoadedContract lc = tok::LoadContract(opt.contract);
  std::filesystem::create_directories(opt.output_dir);
  TokenizeJob job(opt, lc);
  const Position pos = job.Resume();
  if (job.res().complete) return job.res();
  const auto t0 = std::chrono::steady_clock::now();
  auto last_report = t0;
  for (size_t in = pos.input; in < opt.inputs.size(); ++in) {
    DocumentReader reader(opt.inputs[in]);
    if (in == pos.input && pos.line > 0) reader.SkipToLine(pos.line);
    for (bool more = true; more;) {
      more = job.ReadBatch(reader, in);
      if (job.WriteBatch(in)) return job.res();  // stopped by max_shards
      const auto now = std::chrono::steady_clock::now();
      if (progress && now - last_report > std::chrono::seconds(2)) {
        const TokenizeResult& r = job.res();
        progress({r.documents, r.tokens, r.bytes, std::chrono::duration<double>(now - t0).count()});
        last_report = now;
      }
    }
  }
  job.Complete();
  return job.res();
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

}  // namespace trail::ingest
