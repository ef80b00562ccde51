#include "corpus/tokens.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_util.h"
#include "corpus/lineage_db.h"
#include "data/shard_reader.h"
#include "ingest/tokenize_job.h"

namespace trail::corpus {
namespace fs = std::filesystem;

CorpusTokens TokenizeCorpus(const std::string& out_dir, const std::string& contract, int threads,
                            uint64_t shard_tokens) {
  const std::string lineage = out_dir + "/lineage.sqlite";
  TRAIL_CHECK(fs::exists(lineage) && fs::exists(out_dir + "/report.json"), out_dir,
              " holds no finished corpus build (lineage.sqlite, report.json)");
  // The build's shards, grouped by split and source (file names <source>-NNNNN.jsonl.zst).
  const char* splits[] = {"train", "validation", "test"};
  std::map<std::string, std::map<std::string, std::vector<std::string>>> groups;
  std::map<std::string, uint32_t> domain;  // source -> domain id (sources by name)
  for (const char* split : splits) {
    const fs::path dir = fs::path(out_dir) / split;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      const size_t dash = name.rfind('-');
      if (!name.ends_with(".jsonl.zst") || dash == std::string::npos) continue;
      groups[split][name.substr(0, dash)].push_back(e.path().string());
      domain[name.substr(0, dash)] = 0;
    }
  }
  uint32_t next = 0;
  for (auto& [source, id] : domain) id = next++;

  CorpusTokens out;
  nlohmann::ordered_json rep = {{"format", "trail.corpus-tokens.v1"}, {"contract", contract}};
  Db db(lineage);
  db.Exec("DROP TABLE IF EXISTS tokens;"
          "CREATE TABLE tokens(key TEXT PRIMARY KEY, split TEXT, token_shard TEXT,"
          " shard_doc INTEGER, token_start INTEGER, tokens INTEGER);"
          "BEGIN;");
  Stmt ins(db.get(), "INSERT INTO tokens VALUES (?,?,?,?,?,?)");
  for (const char* split : splits) {
    if (!groups.count(split)) continue;
    std::vector<TokenShare> rows;
    uint64_t docs_total = 0, tokens_total = 0;
    for (auto& [source, files] : groups[split]) {
      std::sort(files.begin(), files.end());
      ingest::TokenizeOptions t;
      t.contract = contract;
      t.inputs = files;
      t.output_dir = out_dir + "/tokens/" + split;
      t.prefix = source;
      t.domain = domain[source];
      t.threads = threads;
      t.shard_tokens = shard_tokens;
      const ingest::TokenizeResult r = ingest::RunTokenize(t);
      ingest::WriteShardList(r, t.output_dir + "/" + source + ".shards.json");
      for (const data::ShardRef& ref : r.shards) {
        const std::string rel = std::string("tokens/") + split + "/" + ref.path;
        const data::ShardReader shard(out_dir + "/" + rel);
        for (uint64_t d = 0; d < shard.num_docs(); ++d) {
          const data::DocRecord rec = shard.doc(d);
          ins.Text(1, std::string(shard.doc_key(d))).Text(2, split).Text(3, rel)
              .Int(4, static_cast<int64_t>(d)).Int(5, static_cast<int64_t>(rec.token_start))
              .Int(6, rec.length).Run();
        }
      }
      rows.push_back({split, source, r.documents - r.empty_documents, r.tokens, 0, 0});
      docs_total += r.documents - r.empty_documents;
      tokens_total += r.tokens;
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (TokenShare& row : rows) {
      row.document_share = docs_total ? double(row.documents) / double(docs_total) : 0;
      row.token_share = tokens_total ? double(row.tokens) / double(tokens_total) : 0;
      list.push_back({{"source", row.source}, {"documents", row.documents},
                      {"tokens", row.tokens}, {"document_share", row.document_share},
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

}  // namespace trail::corpus
