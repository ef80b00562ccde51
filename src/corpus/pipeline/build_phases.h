// What a one-process corpus build and the phases of a build in tasks share (pipeline.cc): the
// budget, the allocator setting, near dedup's input, and everything after the read phase.
// Internal to the corpus build.
#pragma once

#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "corpus/pipeline/build_budget.h"
#include "corpus/pipeline/build_report.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/memory_watch.h"
#include "corpus/dedup/near_dedup_runs.h"
#include "corpus/pipeline/pipeline.h"

namespace trail::corpus {

Budget BudgetOf(const CorpusConfig& cfg, const BuildOptions& opt);
// Large blocks (texts, buffers) straight from and back to the kernel: glibc would otherwise
// raise its mmap threshold after the first large free and keep such blocks in its heaps.
void ReturnLargeBlocksToTheKernel();

// Near dedup's input over merged runs whose locations.bin and exact.bin are in `work`.
NearDedupRunsInput NearDedupInput(const CorpusConfig& cfg, const Budget& budget,
                                  const std::string& work, const std::vector<std::string>& runs,
                                  size_t run_buffer, uint64_t documents, uint64_t bytes_in,
                                  bool progress);

// Merge, exact dedup, near dedup (or, when near_pairs names the pairs files of a build's near
// tasks, the clusters from them), the final pass, shards, quarantine file and report, on the
// document runs in read order; removes `work` at the end.
BuildSummary CrossDocumentPhases(const CorpusConfig& cfg, const std::string& out_dir,
                                 const Budget& budget, const std::string& work,
                                 std::vector<std::string> runs, const BuildOptions& opt,
                                 ThreadPool& pool, const MemoryWatch& memory, BuildReport& report,
                                 const std::vector<std::string>& near_pairs = {});

}  // namespace trail::corpus
