// The corpus build's lineage database: its tables (a row per input document with every
// stage's verdict, the quality rules, the quarantine) and a human-readable account of one
// document (`trail corpus why`, declared in pipeline.h).
#pragma once

#include <span>
#include <string>

#include "corpus/pipeline/lineage_db.h"

namespace trail::corpus {

// The `documents` table's columns, in table order: the one list that its CREATE, the writer's
// INSERT and binds (lineage_writer.cc) and `trail corpus why` read. Appending a column means
// one entry here and one bind in LineageWriter::AddDocument.
enum class DocColumn : int {
  kKey,
  kSource,
  kFile,
  kOffset,
  kBytes,
  kEncoding,
  kEncodingDetected,
  kReplaced,
  kControlsRemoved,
  kContentHash,
  kLanguage,
  kLanguageScore,
  kExactSurvivor,
  kCluster,
  kPiiEmail,
  kPiiPhone,
  kPiiIp,
  kPiiSecret,
  kContamination,
  kSplit,
  kKept,
  kDropReason,
  kShard,
  kShardLine,
  kRules,
};
struct DocColumnSpec {
  DocColumn column;
  const char* name;  // the SQL column
  const char* type;  // its SQL type (and constraint)
};
std::span<const DocColumnSpec> DocumentColumns();
// The column's position among the INSERT's parameters (1-based, as sqlite3_bind_* counts).
inline int BindIndex(DocColumn c) { return static_cast<int>(c) + 1; }
// "INSERT INTO documents (key, ...) VALUES (?, ...)" over every column.
std::string InsertDocumentSql();

// Creates the run, documents, quality_rules and quarantine tables and the rules view.
void CreateLineageTables(Db& db);

}  // namespace trail::corpus
