// Near dedup over a corpus build's document runs, out of core: the exact survivors' LSH band
// hashes (computed by the per-document stages: doc_stages.h) go through an external sort by
// (band, hash); documents sharing a
// bucket become candidate pairs (another external sort, each pair once); every candidate is
// verified by exact Jaccard in batches whose texts fit the budget, re-read by position from the
// runs; union-find keeps only documents of verified pairs. Decisions are the whole-corpus ones
// (a root is its cluster's smallest ordinal, i.e. smallest key), whatever the budget.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"

namespace trail::corpus {

struct NearDedupRunsInput {
  std::vector<std::string> runs;  // document runs (DocRunMerge)
  size_t run_buffer = 1 << 16;    // read buffer per run
  std::string work;               // scratch directory for sort runs
  std::string exact_dups;         // ExactDup records sorted by ordinal: these take no part
  std::string locations;          // Location records by ordinal
  uint64_t documents = 0, bytes_in = 0;  // for progress
  int ngram = 5, bands = 20, rows = 5;  // ngram: the shingles verification compares
  double threshold = 0.8;
  uint64_t sort_budget = 0, verify_budget = 0;  // bytes
  bool progress = false;
};

struct NearDedupRunsResult {
  std::unordered_map<uint32_t, uint32_t> root_of;  // documents in clusters of two or more
  uint64_t candidates = 0, verified = 0, spilled_bytes = 0;
};

NearDedupRunsResult NearDedupRuns(const NearDedupRunsInput& in, ThreadPool& pool);

}  // namespace trail::corpus
