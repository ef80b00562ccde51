#include "ingest/shard_sink.h"

#include <filesystem>

#include "core/error.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "data/shard_format.h"
#include "data/shard_reader.h"

namespace trail::ingest {
namespace {

using data::ShardExpectations;
using data::ShardReader;
using data::ShardRef;
using data::ShardSummary;
using Json = nlohmann::ordered_json;

std::string ShardName(const std::string& prefix, size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%05zu.tshard", i);
  return prefix + buf;
}

}  // namespace

Json TokenizeJournalHeader(const TokenizeOptions& o, const std::string& contract_hash) {
  return Json{{"format", "trail.tokenize-progress.v1"},
              {"contract", contract_hash},
              {"inputs", o.inputs},
              {"prefix", o.prefix},
              {"shard_tokens", o.shard_tokens},
              {"domain", o.domain}};
}

ShardSink::ShardSink(const TokenizeOptions& opt, const tok::LoadedContract& lc)
    : opt_(opt), journal_path_(opt.output_dir + "/" + opt.prefix + ".progress.json") {
  res_.contract_hash = ToHex(lc.hash);
  std::copy(lc.hash.begin(), lc.hash.end(), contract_.begin());
  wopt_.vocab_size = lc.contract.vocab_size;
  wopt_.token_bytes = data::TokenBytesForVocab(wopt_.vocab_size);
  wopt_.contract = contract_;
  header_ = TokenizeJournalHeader(opt, res_.contract_hash);
  journal_ = header_;
  journal_["shards"] = Json::array();
  journal_["complete"] = false;
}

InputPosition ShardSink::Resume() {
  InputPosition pos;
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

bool ShardSink::Write(const TokenBatch& batch) {
  for (const TokenDoc& d : batch) {
    ++res_.documents, ++shard_docs_read_;
    res_.bytes += d.text_bytes;
    shard_bytes_ += d.text_bytes;
    if (d.ids.empty()) {
      ++res_.empty_documents, ++shard_empty_;
      continue;
    }
    if (!writer_) {
      writer_ = std::make_unique<data::ShardWriter>(
          opt_.output_dir + "/" + ShardName(opt_.prefix, res_.shards.size()), wopt_);
    }
    try {
      writer_->Add(d.id, opt_.domain, d.ids);
    } catch (const Error& e) {
      TRAIL_FAIL(opt_.inputs[d.input], ":", d.line, ": ", e.what());
    }
    shard_tokens_ += d.ids.size();
    res_.tokens += d.ids.size();
    if (shard_tokens_ >= opt_.shard_tokens) {
      FinishShard({static_cast<size_t>(d.input), d.line});
      if (opt_.max_shards >= 0 && written_now_ >= opt_.max_shards) return true;
    }
  }
  return false;
}

void ShardSink::Complete() {
  if (writer_) FinishShard({opt_.inputs.size(), 0});
  res_.complete = true;
  journal_["complete"] = true;
  journal_["totals"] = Json{{"documents", res_.documents},
                            {"empty_documents", res_.empty_documents},
                            {"tokens", res_.tokens},
                            {"bytes", res_.bytes}};
  WriteFileAtomic(journal_path_, journal_.dump(2) + "\n");
}

// Closes the shard and records it, with the input position after its last document.
void ShardSink::FinishShard(const InputPosition& next) {
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

}  // namespace trail::ingest
