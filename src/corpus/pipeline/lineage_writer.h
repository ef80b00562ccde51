// Writes a corpus build's lineage database (tables in lineage.h): the run's identity, the
// quality rule list, one row per input document and the quarantine. Rows are structs with
// named fields; the writer alone knows the columns' order. The database is built under
// <path>.tmp in one transaction and renamed to <path> by Commit(), so a build that fails
// midway never leaves a lineage that could pass for a finished one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corpus/pipeline/lineage_db.h"
#include "corpus/filters/quality.h"
#include "corpus/read/reader.h"

namespace trail::corpus {

// One input document's row of the `documents` table (column names in parentheses; the columns
// themselves are lineage.h's DocumentColumns). Its text fields view the caller's strings,
// which must stay unchanged until AddDocument returns.
struct LineageRow {
  std::string_view key, source, file;  // key, source, file
  uint64_t offset = 0, bytes = 0;      // offset, bytes (raw)
  std::string_view encoding;           // encoding
  bool encoding_detected = false;      // encoding_detected
  uint64_t replaced = 0, controls_removed = 0;
  std::string_view content_hash;             // content_hash (exact-dedup key)
  std::string_view language;                 // language
  double language_score = 0;                 // language_score
  std::string_view exact_survivor, cluster;  // exact_survivor, cluster ("" when dropped earlier)
  uint64_t pii_email = 0, pii_phone = 0, pii_ip = 0, pii_secret = 0;
  std::string_view contamination;  // contamination ("" when clean)
  std::string_view split;          // split ("" when the document has no cluster)
  bool kept = false;               // kept
  std::string_view drop_reason;    // drop_reason ("" when kept)
  std::string_view shard;          // shard ("" when not kept)
  uint64_t shard_line = 0;         // shard_line (1-based; 0 when not kept)
  std::string_view rules;          // rules: [[value, pass], ...]; "" stores NULL
};

class LineageWriter {
 public:
  // Starts <path>.tmp; the SQLite page cache is cache_kib KiB.
  LineageWriter(const std::string& path, int64_t cache_kib);
  ~LineageWriter();

  // The `run` table: config hash, stage versions, seed.
  void AddRunInfo(const std::string& name, const std::string& value);
  // The `quality_rules` table: the rules' names and thresholds in their fixed order.
  void AddQualityRules(const std::vector<RuleResult>& rules);
  void AddDocument(const LineageRow& row);
  void AddQuarantined(const Quarantined& q);
  // Commits the transaction, closes the database and renames it to its final path.
  void Commit();

 private:
  std::string path_, tmp_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<Stmt> run_, doc_, quarantine_;
};

}  // namespace trail::corpus
