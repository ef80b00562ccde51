// The corpus build's last pass, over every document in key order: exact and near-duplicate
// verdicts (a duplicate belongs to its survivor's cluster), PII redaction and benchmark
// decontamination (per document, on the pool, in batches of Budget::batch() bytes), the split
// of each document's cluster, per-source quotas (smallest keys first), the shard line of every
// kept document, and a lineage row for every document — kept or dropped, by whichever stage.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/thread_pool.h"
#include "corpus/pipeline/build_budget.h"
#include "corpus/pipeline/build_report.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/lineage_writer.h"
#include "corpus/pipeline/shard_groups.h"

namespace trail::corpus {

struct FinalPassInput {
  std::vector<std::string> runs;  // the merged document runs
  size_t run_buffer = 0;
  std::string exact_dups;  // exact.bin: ExactDup records by ordinal
  std::unordered_set<uint32_t> exact_survivors;
  std::unordered_map<uint32_t, uint32_t> root_of;  // near-dup cluster roots, by ordinal
  uint64_t documents = 0, bytes_in = 0;            // for progress
};

// Writes the lineage rows (not yet committed) and the shard groups' lines; fills the summary's
// kept and bytes_out and the report's drops and times.
void RunFinalPass(const CorpusConfig& cfg, const Budget& budget,
                  const std::vector<std::string>& files, const FinalPassInput& in, ThreadPool& pool,
                  bool progress, LineageWriter& lineage, ShardGroups& shards, BuildSummary& sum,
                  BuildReport& report);

}  // namespace trail::corpus
