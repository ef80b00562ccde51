// The corpus build's first phase: read every source in config order, cut the documents into
// chunks of about Budget::chunk() raw bytes, run the per-document stages on each chunk and write
// it as a key-sorted document run under the work directory. A run left by an interrupted build
// of the same fingerprint is reused instead of recomputed (build_work.h), which is how a killed
// build resumes; chunk boundaries depend only on the inputs and the budget, so a resumed build
// writes the same runs as an uninterrupted one.
#pragma once

#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "corpus/pipeline/build_budget.h"
#include "corpus/pipeline/build_report.h"
#include "corpus/pipeline/config.h"
#include "corpus/read/source_reader.h"

namespace trail::corpus {

// Every source's files in config order: the build's file indices.
std::vector<std::string> BuildFileList(const CorpusConfig& cfg);

// Reads the files in `range` (a read task's slice; every file by default) and returns the
// document runs' paths in chunk order. Fills the report's read and per-stage times, reader
// quarantine (also counted as read-stage drops), WARC skips, runs and resumes.
std::vector<std::string> ReadIntoDocRuns(const CorpusConfig& cfg, const Budget& budget,
                                         const std::string& work, const std::string& fingerprint,
                                         ThreadPool& pool, bool progress, BuildReport& report,
                                         FileRange range = {});

}  // namespace trail::corpus
