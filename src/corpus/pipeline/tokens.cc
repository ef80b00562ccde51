#include "corpus/pipeline/tokens.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "corpus/pipeline/lineage_db.h"
#include "data/shard_reader.h"
#include "ingest/shard_sink.h"
#include "ingest/tokenize_job.h"
#include "ingest/tokenize_tasks.h"
#include "tokenizer/contract.h"

namespace trail::corpus {
namespace {
namespace fs = std::filesystem;

constexpr const char* kSplits[] = {"train", "validation", "test"};

// The documents of one (split, source): the build's shards <source>-NNNNN.jsonl.zst, in order.
struct TokenGroup {
  std::string split, source;
  std::vector<std::string> files;
  uint32_t domain = 0;  // the source's rank by name
};

std::vector<TokenGroup> TokenGroups(const std::string& out_dir) {
  TRAIL_CHECK(fs::exists(out_dir + "/lineage.sqlite") && fs::exists(out_dir + "/report.json"),
              out_dir, " holds no finished corpus build (lineage.sqlite, report.json)");
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_split;
  std::map<std::string, uint32_t> domain;
  for (const char* split : kSplits) {
    const fs::path dir = fs::path(out_dir) / split;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      const size_t dash = name.rfind('-');
      if (!name.ends_with(".jsonl.zst") || dash == std::string::npos) continue;
      by_split[split][name.substr(0, dash)].push_back(e.path().string());
      domain[name.substr(0, dash)] = 0;
    }
  }
  uint32_t next = 0;
  for (auto& [source, id] : domain) id = next++;
  std::vector<TokenGroup> groups;
  for (const char* split : kSplits) {
    for (auto& [source, files] : by_split[split]) {
      std::sort(files.begin(), files.end());
      groups.push_back({split, source, files, domain[source]});
    }
  }
  return groups;
}

ingest::TokenizeOptions GroupOptions(const std::string& out_dir, const TokenGroup& g,
                                     const CorpusTokenizeOptions& o) {
  ingest::TokenizeOptions t;
  t.contract = o.contract;
  t.inputs = g.files;
  t.output_dir = out_dir + "/tokens/" + g.split;
  t.prefix = g.source;
  t.domain = g.domain;
  t.threads = o.threads;
  t.shard_tokens = o.shard_tokens;
  return t;
}

// Encode tasks slice every group's files as one list (groups in order): a task may hold the
// end of one group and the start of the next.
ingest::TokenizeOptions FlatOptions(const std::string& out_dir, const std::vector<TokenGroup>& gs,
                                    const CorpusTokenizeOptions& o) {
  ingest::TokenizeOptions t;
  t.contract = o.contract;
  for (const TokenGroup& g : gs) t.inputs.insert(t.inputs.end(), g.files.begin(), g.files.end());
  t.output_dir = out_dir + "/tokens";
  t.prefix = "corpus";
  t.threads = o.threads;
  t.shard_tokens = o.shard_tokens;
  return t;
}

// The tokens table (key -> token shard, document, token range) and the token shares, from the
// groups' shards.
CorpusTokens RecordTokens(const std::string& out_dir, const std::string& contract,
                          const std::vector<TokenGroup>& groups,
                          const std::vector<ingest::TokenizeResult>& results) {
  CorpusTokens out;
  nlohmann::ordered_json rep = {{"format", "trail.corpus-tokens.v1"}, {"contract", contract}};
  Db db(out_dir + "/lineage.sqlite");
  db.Exec(
      "DROP TABLE IF EXISTS tokens;"
      "CREATE TABLE tokens(key TEXT PRIMARY KEY, split TEXT, token_shard TEXT,"
      " shard_doc INTEGER, token_start INTEGER, tokens INTEGER);"
      "BEGIN;");
  Stmt ins(db.get(), "INSERT INTO tokens VALUES (?,?,?,?,?,?)");
  for (const char* split : kSplits) {
    std::vector<TokenShare> rows;
    uint64_t docs_total = 0, tokens_total = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].split != split) continue;
      const ingest::TokenizeResult& r = results[g];
      for (const data::ShardRef& ref : r.shards) {
        const std::string rel = std::string("tokens/") + split + "/" + ref.path;
        const data::ShardReader shard(out_dir + "/" + rel);
        for (uint64_t d = 0; d < shard.num_docs(); ++d) {
          const data::DocRecord rec = shard.doc(d);
          ins.Text(1, std::string(shard.doc_key(d)))
              .Text(2, split)
              .Text(3, rel)
              .Int(4, static_cast<int64_t>(d))
              .Int(5, static_cast<int64_t>(rec.token_start))
              .Int(6, rec.length)
              .Run();
        }
      }
      rows.push_back({split, groups[g].source, r.documents - r.empty_documents, r.tokens, 0, 0});
      docs_total += r.documents - r.empty_documents;
      tokens_total += r.tokens;
    }
    if (rows.empty()) continue;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (TokenShare& row : rows) {
      row.document_share = docs_total ? double(row.documents) / double(docs_total) : 0;
      row.token_share = tokens_total ? double(row.tokens) / double(tokens_total) : 0;
      list.push_back({{"source", row.source},
                      {"documents", row.documents},
                      {"tokens", row.tokens},
                      {"document_share", row.document_share},
                      {"token_share", row.token_share}});
      out.shares.push_back(row);
    }
    rep["splits"][split] = list;
  }
  db.Exec("COMMIT;");
  out.report_json = rep.dump(2) + "\n";
  WriteFileAtomic(out_dir + "/tokens/report.json", out.report_json);
  return out;
}

// The groups' sinks fed one after another from the tasks' documents (in flat input order).
class GroupReplay {
 public:
  GroupReplay(const std::string& out_dir, const std::vector<TokenGroup>& groups,
              const CorpusTokenizeOptions& o, const tok::LoadedContract& lc)
      : groups_(groups), lc_(lc) {
    for (const TokenGroup& g : groups) opts_.push_back(GroupOptions(out_dir, g, o));
    results_.resize(groups.size());
  }

  void Add(ingest::TokenDoc&& d) {
    while (d.input >= first_ + groups_[g_].files.size()) NextGroup();
    if (!sink_) Open();
    if (skip_all_) return;
    d.input -= first_;  // the group's own input index, as its journal counts
    if (d.input < pos_.input || (d.input == pos_.input && d.line <= pos_.line)) return;
    batch_.push_back(std::move(d));
    if (batch_.size() == 2048) Flush();
  }

  // Completes the current group and every one after it (those may have no documents).
  std::vector<ingest::TokenizeResult> Finish() {
    while (g_ < groups_.size()) NextGroup();
    return std::move(results_);
  }

 private:
  void Open() {
    fs::create_directories(opts_[g_].output_dir);
    sink_ = std::make_unique<ingest::ShardSink>(opts_[g_], lc_);
    pos_ = sink_->Resume();
    skip_all_ = sink_->res().complete;
  }
  void Flush() {
    sink_->Write(batch_);
    batch_.clear();
  }
  void NextGroup() {
    if (!sink_) Open();
    if (!skip_all_) {
      Flush();
      sink_->Complete();
    }
    results_[g_] = sink_->res();
    ingest::WriteShardList(results_[g_],
                           opts_[g_].output_dir + "/" + opts_[g_].prefix + ".shards.json");
    sink_.reset();
    first_ += groups_[g_].files.size();
    ++g_;
  }

  const std::vector<TokenGroup>& groups_;
  const tok::LoadedContract& lc_;
  std::vector<ingest::TokenizeOptions> opts_;
  std::vector<ingest::TokenizeResult> results_;
  size_t g_ = 0;
  uint64_t first_ = 0;  // the flat index of the current group's first file
  std::unique_ptr<ingest::ShardSink> sink_;
  ingest::InputPosition pos_;
  bool skip_all_ = false;
  ingest::TokenBatch batch_;
};

// Whether every group's journal says its shards are complete.
bool AllGroupsComplete(const std::string& out_dir, const std::vector<TokenGroup>& groups,
                       const CorpusTokenizeOptions& o, const tok::LoadedContract& lc) {
  for (const TokenGroup& g : groups) {
    const ingest::TokenizeOptions t = GroupOptions(out_dir, g, o);
    ingest::ShardSink sink(t, lc);
    sink.Resume();
    if (!sink.res().complete) return false;
  }
  return true;
}

}  // namespace

CorpusTokens TokenizeCorpus(const std::string& out_dir, const CorpusTokenizeOptions& o) {
  const std::vector<TokenGroup> groups = TokenGroups(out_dir);
  std::vector<ingest::TokenizeResult> results;
  for (const TokenGroup& g : groups) {
    const ingest::TokenizeOptions t = GroupOptions(out_dir, g, o);
    results.push_back(ingest::RunTokenize(t));
    ingest::WriteShardList(results.back(), t.output_dir + "/" + t.prefix + ".shards.json");
  }
  return RecordTokens(out_dir, o.contract, groups, results);
}

ingest::TokenizeTaskSummary TokenizeCorpusTask(const std::string& out_dir,
                                               const CorpusTokenizeOptions& o, uint32_t task,
                                               uint32_t tasks) {
  const std::vector<TokenGroup> groups = TokenGroups(out_dir);
  TRAIL_CHECK(!groups.empty(), out_dir, " has no shards to tokenize");
  return ingest::RunTokenizeTask(FlatOptions(out_dir, groups, o), task, tasks);
}

CorpusTokens TokenizeCorpusFromTasks(const std::string& out_dir, const CorpusTokenizeOptions& o,
                                     uint32_t tasks) {
  const std::vector<TokenGroup> groups = TokenGroups(out_dir);
  TRAIL_CHECK(!groups.empty(), out_dir, " has no shards to tokenize");
  const ingest::TokenizeOptions flat = FlatOptions(out_dir, groups, o);
  const tok::LoadedContract lc = tok::LoadContract(o.contract);
  GroupReplay replay(out_dir, groups, o, lc);
  // A final phase that ended after every group's shards (before or while recording them) has
  // nothing to replay, and its tasks may be gone: only an incomplete one needs them verified.
  if (!AllGroupsComplete(out_dir, groups, o, lc)) {
    const ingest::TokenRuns runs = ingest::VerifyTokenizeTasks(flat, tasks);
    ingest::ReplayTokenRuns(runs, [&](ingest::TokenDoc&& d) { replay.Add(std::move(d)); });
  }
  const std::vector<ingest::TokenizeResult> results = replay.Finish();
  CorpusTokens tokens = RecordTokens(out_dir, o.contract, groups, results);
  ingest::RemoveTokenizeTasks(flat, tasks);  // last: until here a rerun can replay them
  return tokens;
}

}  // namespace trail::corpus
