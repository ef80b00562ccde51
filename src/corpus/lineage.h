// The corpus build's lineage database: its tables (a row per input document with every
// stage's verdict, the quality rules, the quarantine) and a human-readable account of one
// document (`trail corpus why`, declared in pipeline.h).
#pragma once

#include "corpus/lineage_db.h"

namespace trail::corpus {

// Creates the run, documents, quality_rules and quarantine tables and the rules view.
void CreateLineageTables(Db& db);

}  // namespace trail::corpus
