#include "corpus/pipeline/lineage_writer.h"

#include <filesystem>

#include "corpus/pipeline/lineage.h"

namespace trail::corpus {
namespace fs = std::filesystem;

LineageWriter::LineageWriter(const std::string& path, int64_t cache_kib)
    : path_(path), tmp_(path + ".tmp") {
  fs::remove(tmp_);
  db_ = std::make_unique<Db>(tmp_);
  db_->Exec(
      "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA "
      "cache_size=-" +
      std::to_string(cache_kib) + "; PRAGMA temp_store=FILE;");
  CreateLineageTables(*db_);
  db_->Exec("BEGIN;");
  run_ = std::make_unique<Stmt>(db_->get(), "INSERT INTO run VALUES (?, ?)");
  doc_ = std::make_unique<Stmt>(db_->get(), InsertDocumentSql().c_str());
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
  for (const RuleResult& r : rules)
    q.Int(1, idx++).Text(2, std::string(r.rule)).Real(3, r.threshold).Run();
}

void LineageWriter::AddDocument(const LineageRow& r) {
  using C = DocColumn;
  Stmt& s = *doc_;
  auto text = [&](C c, std::string_view v) { s.TextUntilRun(BindIndex(c), v); };
  auto integer = [&](C c, uint64_t v) { s.Int(BindIndex(c), static_cast<int64_t>(v)); };
  text(C::kKey, r.key), text(C::kSource, r.source), text(C::kFile, r.file);
  integer(C::kOffset, r.offset), integer(C::kBytes, r.bytes);
  text(C::kEncoding, r.encoding), integer(C::kEncodingDetected, r.encoding_detected);
  integer(C::kReplaced, r.replaced), integer(C::kControlsRemoved, r.controls_removed);
  text(C::kContentHash, r.content_hash), text(C::kLanguage, r.language);
  s.Real(BindIndex(C::kLanguageScore), r.language_score);
  text(C::kExactSurvivor, r.exact_survivor), text(C::kCluster, r.cluster);
  integer(C::kPiiEmail, r.pii_email), integer(C::kPiiPhone, r.pii_phone);
  integer(C::kPiiIp, r.pii_ip), integer(C::kPiiSecret, r.pii_secret);
  text(C::kContamination, r.contamination), text(C::kSplit, r.split);
  integer(C::kKept, r.kept), text(C::kDropReason, r.drop_reason);
  text(C::kShard, r.shard), integer(C::kShardLine, r.shard_line);
  if (r.rules.empty()) {
    sqlite3_bind_null(s.get(), BindIndex(C::kRules));
  } else {
    text(C::kRules, r.rules);
  }
  s.Run();
}

void LineageWriter::AddQuarantined(const Quarantined& q) {
  quarantine_->Text(1, q.file)
      .Int(2, static_cast<int64_t>(q.offset))
      .Int(3, static_cast<int64_t>(q.line))
      .Int(4, static_cast<int64_t>(q.bytes))
      .Text(5, q.reason)
      .Text(6, q.detail)
      .Text(7, q.sample)
      .Text(8, q.sha256)
      .Run();
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
