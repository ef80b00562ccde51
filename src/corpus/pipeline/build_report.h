// What a corpus build reports: the summary its caller gets, and report.json — per stage the
// documents in, out and dropped by reason with its wall time; quarantine counts by reason;
// near-dedup candidate and verified pairs; memory (budget, peak RSS, peak anonymous memory,
// document runs, spilled sort bytes); and whether document runs were reused by a resume.
// Only the times and memory figures vary between identical builds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "corpus/read/reader.h"

namespace trail::corpus {

// The per-document stages in the order they run; a document counts in the stage that dropped it.
inline constexpr const char* kReportStages[] = {
    "read",       "normalize",           "language",    "quality", "exact_dedup",
    "near_dedup", "pii_decontamination", "split_quota", "shards"};

// One of report.json's "stages": documents in, out and dropped by reason, and wall seconds.
struct StageCount {
  std::string stage;
  uint64_t in = 0, out = 0;
  std::map<std::string, uint64_t> dropped;  // reason -> documents
  double seconds = 0;
};

// report.json's "memory".
struct BuildMemory {
  uint64_t budget_bytes = 0, peak_rss_bytes = 0, peak_anon_bytes = 0, document_runs = 0;
  uint64_t spilled_sort_bytes = 0;
};

struct BuildSummary {
  uint64_t documents = 0, kept = 0, bytes_in = 0, bytes_out = 0, shards = 0, quarantined = 0;
  std::vector<StageCount> stages;  // every stage of kReportStages, in order
  BuildMemory memory;
  std::string report_json;  // report.json's text: the above and the rest of the report
};

struct BuildReport {
  std::map<std::string, double> seconds;                           // stage -> wall seconds
  std::map<std::string, std::map<std::string, uint64_t>> dropped;  // stage -> reason -> count
  std::vector<Quarantined> quarantined;  // by the reader, then repeated keys
  uint64_t reader_quarantined = 0;       // how many of `quarantined` the reader gave
  uint64_t warc_skipped = 0;
  size_t document_runs = 0, resumed_runs = 0;
  size_t read_tasks = 0;  // > 0: a build in tasks; stage times are summed over them
  double checkpoint_seconds = 0, lineage_seconds = 0;
  uint64_t candidate_pairs = 0, verified_pairs = 0, spilled_sort_bytes = 0;
  uint64_t budget_bytes = 0, peak_anon_bytes = 0;

  // Documents in, out and dropped per stage of a build of `documents` input documents: every
  // input document (read, repeated key or quarantined by the reader) enters "read"; each stage
  // passes on what it did not drop.
  std::vector<StageCount> Stages(uint64_t documents) const;
  // The memory figures, with the process's peak RSS read now.
  BuildMemory Memory() const;
  // report.json's text for a build that produced `sum` (its stages and memory included).
  std::string ToJson(const BuildSummary& sum) const;
};

// <out>/quarantine.jsonl: one JSON object per quarantined record (nothing when none).
void WriteQuarantineFile(const std::vector<Quarantined>& bad, const std::string& path);

}  // namespace trail::corpus
