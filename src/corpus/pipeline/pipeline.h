// `trail corpus build`: sources -> normalized, filtered, deduplicated, split, sharded documents,
// with a lineage row for every input document and a report of every stage.
//
// Stages, in order, each recording its verdict per document: read -> normalize -> language ->
// quality -> exact dedup -> near dedup -> PII -> decontamination -> split (by cluster) -> quota
// -> shards. A document dropped by a stage keeps its lineage row with the reason; later stages
// skip it. Work per document runs on a thread pool; every decision that involves several
// documents is made in key order, so shards and lineage do not depend on the thread count.
// The build runs in phases, each in its own file: read_phase (read + per-document stages into
// document runs), exact_phase (merge by key, exact dedup), near_dedup_runs, final_pass (PII,
// decontamination, split, quota, lineage rows), shard_groups (compressed shards).
// Out of core: documents pass through the per-document stages chunk by chunk into key-sorted
// runs under <out>/.work (the resume checkpoint), and every cross-document stage streams those
// runs and external sorts, so memory stays within the config's memory budget — which never
// changes the output (docs/corpus.md).
// Output: <out>/<split>/<source>-NNNNN.jsonl.zst (dolma schema), <out>/lineage.sqlite,
// <out>/report.json; each written to a temporary name and renamed. Records that cannot be read
// (malformed JSON, invalid UTF-8 in JSON, oversized, truncated compressed data, corrupt WARC,
// repeated ids) are quarantined — <out>/quarantine.jsonl and the lineage's quarantine table,
// with file, offset, reason, a sample and the SHA-256 of their bytes — and the build goes on.
#pragma once

#include <string>

#include "corpus/pipeline/build_report.h"
#include "corpus/pipeline/config.h"

namespace trail::corpus {

struct BuildOptions {
  int threads = 1;
  bool progress = false;             // per-stage progress lines on stderr
  uint64_t memory_budget_bytes = 0;  // 0: the config's memory_budget_mb
};
BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir,
                         const BuildOptions& opt);
BuildSummary BuildCorpus(const CorpusConfig& cfg, const std::string& out_dir, int threads);

// The same build in tasks (pipeline/task_records.h, near_tasks.h): read task `task` of `tasks` runs
// the per-document stages on its slice of the inputs; optionally, with near_tasks = M > 0, the
// index phase and M near tasks do near dedup in hash partitions; then BuildCorpusFromTasks verifies
// every task and runs the cross-document phases (taking the clusters from the near tasks when
// there are any), writing the shards and lineage a one-process build writes, byte for byte, and
// removing the tasks' directories. A task that is already complete does nothing
// (already_complete); a phase refuses, before touching anything, while a task it needs is
// incomplete or damaged, naming each.
struct ReadTaskSummary {
  bool already_complete = false;
  std::string dir;
  uint32_t first_file = 0, end_file = 0;  // build file indices [first, end)
  uint64_t bytes = 0, runs = 0, resumed_runs = 0, quarantined = 0;
};
ReadTaskSummary RunReadTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                            uint32_t tasks, const BuildOptions& opt);
struct PhaseSummary {
  bool already_complete = false;
  std::string dir;
  uint64_t documents = 0;  // index: documents with an ordinal; near task: candidate pairs
};
PhaseSummary RunIndexPhase(const CorpusConfig& cfg, const std::string& out_dir, uint32_t tasks,
                           uint32_t near_tasks, const BuildOptions& opt);
PhaseSummary RunNearTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                         uint32_t tasks, uint32_t near_tasks, const BuildOptions& opt);
BuildSummary BuildCorpusFromTasks(const CorpusConfig& cfg, const std::string& out_dir,
                                  uint32_t tasks, const BuildOptions& opt, uint32_t near_tasks = 0);

// A human-readable account of one document from a lineage database ("" if unknown key).
std::string ExplainDocument(const std::string& lineage_db, const std::string& key);

// What the build did with every document whose normalized text has content hash `hash`
// (ContentHash, read/normalize.h): its key and source, whether it was kept (and in which split),
// else the drop reason's text and, for an exact or near duplicate, the surviving document's key.
struct LineageVerdict {
  std::string key, source, split;
  bool kept = false;
  std::string dropped;   // the drop reason ("" when kept)
  std::string survivor;  // exact_dup: the survivor; near_dup: the cluster's survivor
};
std::vector<LineageVerdict> LineageByContent(const std::string& lineage_db,
                                             const std::string& hash);

}  // namespace trail::corpus
