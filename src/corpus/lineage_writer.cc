#include "corpus/lineage_writer.h"

#include <filesystem>

#include "corpus/lineage.h"

namespace trail::corpus {
namespace fs = std::filesystem;

LineageWriter::LineageWriter(const std::string& path, int64_t cache_kib)
    : path_(path), tmp_(path + ".tmp") {
  fs::remove(tmp_);
  db_ = std::make_unique<Db>(tmp_);
  db_->Exec("PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-" +
            std::to_string(cache_kib) + "; PRAGMA temp_store=FILE;");
  CreateLineageTables(*db_);
  db_->Exec("BEGIN;");
  run_ = std::make_unique<Stmt>(db_->get(), "INSERT INTO run VALUES (?, ?)");
  doc_ = std::make_unique<Stmt>(
      db_->get(),
      "INSERT INTO documents (key, source, file, offset, bytes, encoding, encoding_detected,"
      " replaced, controls_removed, content_hash, language, language_score, exact_survivor,"
      " cluster, pii_email, pii_phone, pii_ip, pii_secret, contamination, split, kept,"
      " drop_reason, shard, shard_line, rules)"
      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  quarantine_ = std::make_unique<Stmt>(
      db_->get(),
      "INSERT INTO quarantine (file, offset, line, bytes, reason, detail, sample, sha256)"
      " VALUES (?,?,?,?,?,?,?,?)");
}

LineageWriter::~LineageWriter() = default;

void LineageWriter::AddRunInfo(const std::string& name, const std::string& value) {
  run_->Text(1, name).Text(2, value).Run();
}

void LineageWriter::AddQualityRules(const std::vector<RuleResult>& rules) {
  Stmt q(db_->get(), "INSERT INTO quality_rules (idx, rule, threshold) VALUES (?,?,?)");
  int64_t idx = 0;
  for (const RuleResult& r : rules) q.Int(1, idx++).Text(2, std::string(r.rule)).Real(3, r.threshold).Run();
}

void LineageWriter::AddDocument(const LineageRow& r) {
  auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  Stmt& s = *doc_;
  s.TextUntilRun(1, r.key).TextUntilRun(2, r.source).TextUntilRun(3, r.file).Int(4, i64(r.offset)).Int(5, i64(r.bytes));
  s.TextUntilRun(6, r.encoding).Int(7, r.encoding_detected).Int(8, i64(r.replaced));
  s.Int(9, i64(r.controls_removed)).TextUntilRun(10, r.content_hash).TextUntilRun(11, r.language);
  s.Real(12, r.language_score).TextUntilRun(13, r.exact_survivor).TextUntilRun(14, r.cluster);
  s.Int(15, i64(r.pii_email)).Int(16, i64(r.pii_phone)).Int(17, i64(r.pii_ip));
  s.Int(18, i64(r.pii_secret)).TextUntilRun(19, r.contamination).TextUntilRun(20, r.split).Int(21, r.kept);
  s.TextUntilRun(22, r.drop_reason).TextUntilRun(23, r.shard).Int(24, i64(r.shard_line));
  if (r.rules.empty()) {
    sqlite3_bind_null(s.get(), 25);
  } else {
    s.TextUntilRun(25, r.rules);
  }
  s.Run();
}

void LineageWriter::AddQuarantined(const Quarantined& q) {
  quarantine_->Text(1, q.file).Int(2, static_cast<int64_t>(q.offset))
      .Int(3, static_cast<int64_t>(q.line)).Int(4, static_cast<int64_t>(q.bytes))
      .Text(5, q.reason).Text(6, q.detail).Text(7, q.sample).Text(8, q.sha256).Run();
}

void LineageWriter::Commit() {
  db_->Exec("COMMIT;");
  run_.reset();
  doc_.reset();
  quarantine_.reset();
  db_.reset();
  fs::rename(tmp_, path_);
}

}  // namespace trail::corpus
