#include "corpus/pipeline/lineage.h"

#include <sqlite3.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "corpus/pipeline/drop_reason.h"
#include "corpus/pipeline/pipeline.h"

namespace trail::corpus {

namespace {

using C = DocColumn;
constexpr DocColumnSpec kDocumentColumns[] = {
    {C::kKey, "key", "TEXT PRIMARY KEY"},
    {C::kSource, "source", "TEXT"},
    {C::kFile, "file", "TEXT"},
    {C::kOffset, "offset", "INTEGER"},
    {C::kBytes, "bytes", "INTEGER"},  // raw bytes
    {C::kEncoding, "encoding", "TEXT"},
    {C::kEncodingDetected, "encoding_detected", "INTEGER"},
    {C::kReplaced, "replaced", "INTEGER"},
    {C::kControlsRemoved, "controls_removed", "INTEGER"},
    {C::kContentHash, "content_hash", "TEXT"},  // the exact-dedup key
    {C::kLanguage, "language", "TEXT"},
    {C::kLanguageScore, "language_score", "REAL"},
    {C::kExactSurvivor, "exact_survivor", "TEXT"},  // "" when dropped earlier
    {C::kCluster, "cluster", "TEXT"},               // "" when dropped earlier
    {C::kPiiEmail, "pii_email", "INTEGER"},
    {C::kPiiPhone, "pii_phone", "INTEGER"},
    {C::kPiiIp, "pii_ip", "INTEGER"},
    {C::kPiiSecret, "pii_secret", "INTEGER"},
    {C::kContamination, "contamination", "TEXT"},  // "" when clean
    {C::kSplit, "split", "TEXT"},                  // "" without a cluster
    {C::kKept, "kept", "INTEGER"},
    {C::kDropReason, "drop_reason", "TEXT"},   // drop_reason.h; "" when kept
    {C::kShard, "shard", "TEXT"},              // "" when not kept
    {C::kShardLine, "shard_line", "INTEGER"},  // 1-based; 0 when not kept
    {C::kRules, "rules", "TEXT"},              // [[value, pass], ...]; NULL if not run
};

constexpr bool InEnumOrder() {
  for (int i = 0; i < static_cast<int>(std::size(kDocumentColumns)); ++i) {
    if (static_cast<int>(kDocumentColumns[i].column) != i) return false;
  }
  return static_cast<int>(std::size(kDocumentColumns)) == static_cast<int>(C::kRules) + 1;
}
static_assert(InEnumOrder(), "kDocumentColumns lists every DocColumn once, in enum order");

// "name TYPE, name TYPE, ..." or, without types, "name, name, ...".
std::string ColumnList(bool with_types) {
  std::string s;
  for (const DocColumnSpec& c : kDocumentColumns) {
    if (!s.empty()) s += ", ";
    s += c.name;
    if (with_types) s += std::string(" ") + c.type;
  }
  return s;
}

// "SELECT <every column> FROM documents WHERE <where>": a row's column i is DocColumn i.
std::string SelectDocumentsSql(const std::string& where) {
  return "SELECT " + ColumnList(false) + " FROM documents WHERE " + where;
}

// A selected row's column as text ("" for NULL).
std::string ColumnText(Stmt& q, DocColumn c) {
  const unsigned char* t = sqlite3_column_text(q.get(), static_cast<int>(c));
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

int64_t ColumnInt(Stmt& q, DocColumn c) {
  return sqlite3_column_int64(q.get(), static_cast<int>(c));
}

}  // namespace

std::span<const DocColumnSpec> DocumentColumns() { return kDocumentColumns; }

std::string InsertDocumentSql() {
  std::string marks;
  for (size_t i = 0; i < std::size(kDocumentColumns); ++i) marks += i ? ",?" : "?";
  return "INSERT INTO documents (" + ColumnList(false) + ") VALUES (" + marks + ")";
}

void CreateLineageTables(Db& db) {
  db.Exec(
      "CREATE TABLE run(name TEXT PRIMARY KEY, value TEXT);"
      "CREATE TABLE documents(" +
      ColumnList(true) +
      ");"
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
  Stmt q(db.get(), SelectDocumentsSql("key = ?").c_str());
  q.Text(1, key);
  if (sqlite3_step(q.get()) != SQLITE_ROW) return "";
  auto col = [&](C c) { return ColumnText(q, c); };
  auto integer = [&](C c) { return ColumnInt(q, c); };
  std::ostringstream out;
  out << key << "\n  from " << col(C::kFile) << " (source " << col(C::kSource) << ", offset "
      << col(C::kOffset) << ", " << col(C::kBytes) << " bytes, " << col(C::kEncoding) << ")\n";
  if (!col(C::kLanguage).empty()) {
    out << "  language " << col(C::kLanguage) << " (score " << col(C::kLanguageScore) << ")\n";
  }
  if (integer(C::kKept) != 0) {
    const int64_t pii =
        integer(C::kPiiEmail) + integer(C::kPiiPhone) + integer(C::kPiiIp) + integer(C::kPiiSecret);
    out << "  KEPT: split " << col(C::kSplit) << ", cluster " << col(C::kCluster) << ", written to "
        << col(C::kShard) << " line " << col(C::kShardLine) << "; " << pii << " PII replacements\n";
  } else {
    const Drop drop = Drop::Parse(col(C::kDropReason));
    out << "  DROPPED: " << drop.text();
    if (drop.reason() == DropReason::kExactDup) out << " of " << col(C::kExactSurvivor);
    if (drop.reason() == DropReason::kNearDup) {
      out << " (cluster survivor " << col(C::kCluster) << ")";
    }
    if (!col(C::kContamination).empty()) out << " (" << col(C::kContamination) << ")";
    out << "\n";
  }
  // After `trail corpus tokenize`: where its tokens are.
  sqlite3_stmt* has = nullptr;
  sqlite3_prepare_v2(db.get(), "SELECT 1 FROM sqlite_master WHERE name = 'tokens'", -1, &has,
                     nullptr);
  const bool tokenized = sqlite3_step(has) == SQLITE_ROW;
  sqlite3_finalize(has);
  if (tokenized) {
    Stmt t(db.get(),
           "SELECT token_shard, shard_doc, token_start, tokens FROM tokens WHERE key = ?");
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

std::vector<LineageVerdict> LineageByContent(const std::string& lineage_db,
                                             const std::string& hash) {
  TRAIL_CHECK(std::filesystem::exists(lineage_db), lineage_db, ": lineage database not found");
  Db db(lineage_db);
  Stmt q(db.get(), SelectDocumentsSql("content_hash = ? ORDER BY key").c_str());
  q.Text(1, hash);
  std::vector<LineageVerdict> out;
  while (sqlite3_step(q.get()) == SQLITE_ROW) {
    LineageVerdict v;
    v.key = ColumnText(q, C::kKey), v.source = ColumnText(q, C::kSource);
    v.split = ColumnText(q, C::kSplit);
    v.kept = ColumnInt(q, C::kKept) != 0;
    if (!v.kept) {
      const Drop drop = Drop::Parse(ColumnText(q, C::kDropReason));
      v.dropped = drop.text();
      if (drop.reason() == DropReason::kExactDup) v.survivor = ColumnText(q, C::kExactSurvivor);
      if (drop.reason() == DropReason::kNearDup) v.survivor = ColumnText(q, C::kCluster);
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace trail::corpus
