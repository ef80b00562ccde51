#include "corpus/lineage.h"

#include <sqlite3.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "corpus/pipeline.h"

namespace trail::corpus {

void CreateLineageTables(Db& db) {
  db.Exec("CREATE TABLE run(name TEXT PRIMARY KEY, value TEXT);"
          "CREATE TABLE documents(key TEXT PRIMARY KEY, source TEXT, file TEXT, offset INTEGER,"
          " bytes INTEGER, encoding TEXT, encoding_detected INTEGER, replaced INTEGER,"
          " controls_removed INTEGER, content_hash TEXT, language TEXT, language_score REAL,"
          " exact_survivor TEXT, cluster TEXT, pii_email INTEGER, pii_phone INTEGER,"
          " pii_ip INTEGER, pii_secret INTEGER, contamination TEXT, split TEXT, kept INTEGER,"
          " drop_reason TEXT, shard TEXT, shard_line INTEGER, rules TEXT);"
          // Quality rules: names and thresholds once (quality_rules), each document's
          // [[value, pass], ...] in that order (documents.rules), read as rows (key, rule,
          // value, threshold, pass) through the view `rules` — one insert per document
          // instead of one per rule.
          "CREATE TABLE quality_rules(idx INTEGER PRIMARY KEY, rule TEXT, threshold REAL);"
          "CREATE VIEW rules AS SELECT d.key AS key, q.rule AS rule,"
          " json_extract(r.value, '$[0]') AS value, q.threshold AS threshold,"
          " json_extract(r.value, '$[1]') AS pass FROM documents d, json_each(d.rules) r"
          " JOIN quality_rules q ON q.idx = r.key;"
          "CREATE TABLE quarantine(file TEXT, offset INTEGER, line INTEGER, bytes INTEGER,"
          " reason TEXT, detail TEXT, sample TEXT, sha256 TEXT);");
}

std::string ExplainDocument(const std::string& lineage_db, const std::string& key) {
  TRAIL_CHECK(std::filesystem::exists(lineage_db), lineage_db, ": lineage database not found");
  Db db(lineage_db);
  Stmt q(db.get(),
         "SELECT source, file, offset, bytes, encoding, language, language_score, exact_survivor,"
         " cluster, pii_email + pii_phone + pii_ip + pii_secret, contamination, split, kept,"
         " drop_reason, shard, shard_line FROM documents WHERE key = ?");
  q.Text(1, key);
  if (sqlite3_step(q.get()) != SQLITE_ROW) return "";
  auto col = [&](int i) {
    const unsigned char* t = sqlite3_column_text(q.get(), i);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  };
  std::ostringstream out;
  out << key << "\n  from " << col(1) << " (source " << col(0) << ", offset " << col(2) << ", "
      << col(3) << " bytes, " << col(4) << ")\n";
  if (!col(5).empty()) out << "  language " << col(5) << " (score " << col(6) << ")\n";
  const bool kept = sqlite3_column_int(q.get(), 12) != 0;
  if (kept) {
    out << "  KEPT: split " << col(11) << ", cluster " << col(8) << ", written to " << col(14)
        << " line " << col(15) << "; " << col(9) << " PII replacements\n";
  } else {
    out << "  DROPPED: " << col(13);
    if (col(13) == "exact_dup") out << " of " << col(7);
    if (col(13) == "near_dup") out << " (cluster survivor " << col(8) << ")";
    if (!col(10).empty()) out << " (" << col(10) << ")";
    out << "\n";
  }
  // After `trail corpus tokenize`: where its tokens are.
  sqlite3_stmt* has = nullptr;
  sqlite3_prepare_v2(db.get(), "SELECT 1 FROM sqlite_master WHERE name = 'tokens'", -1, &has,
                     nullptr);
  const bool tokenized = sqlite3_step(has) == SQLITE_ROW;
  sqlite3_finalize(has);
  if (tokenized) {
    Stmt t(db.get(), "SELECT token_shard, shard_doc, token_start, tokens FROM tokens WHERE key = ?");
    t.Text(1, key);
    if (sqlite3_step(t.get()) == SQLITE_ROW) {
      out << "  tokens: " << reinterpret_cast<const char*>(sqlite3_column_text(t.get(), 0))
          << " document " << sqlite3_column_int64(t.get(), 1) << ", tokens ["
          << sqlite3_column_int64(t.get(), 2) << ", "
          << sqlite3_column_int64(t.get(), 2) + sqlite3_column_int64(t.get(), 3) << ")\n";
    }
  }
  Stmt r(db.get(), "SELECT rule, value, threshold, pass FROM rules WHERE key = ? AND pass = 0");
  r.Text(1, key);
  while (sqlite3_step(r.get()) == SQLITE_ROW) {
    out << "  failed " << reinterpret_cast<const char*>(sqlite3_column_text(r.get(), 0))
        << ": value " << sqlite3_column_double(r.get(), 1) << " vs threshold "
        << sqlite3_column_double(r.get(), 2) << "\n";
  }
  return out.str();
}

}  // namespace trail::corpus
