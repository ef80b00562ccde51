// Near dedup over a corpus build's document runs, out of core, in partitions that separate
// processes can run (a build in tasks: pipeline/task_records.h):
//  1. WriteBandPartitions: the exact survivors' LSH band hashes (computed by the per-document
//     stages: doc_stages.h) as (hash, band, ordinal) entries, to partition hash mod P.
//  2. NearDedupPartition, per partition: its entries through an external sort by (band, hash);
//     documents sharing a bucket become candidate pairs (another external sort, each pair once);
//     every candidate is verified by exact Jaccard in batches whose texts fit the budget, re-read
//     by position from the runs; the pairs file lists every candidate with its verdict.
//  3. ClustersFromPairs: the partitions' pairs merged (a pair found in several partitions counts
//     once), union-find over the verified ones.
// Decisions are the whole-corpus ones (a root is its cluster's smallest ordinal, i.e. smallest
// key), whatever the budget or the number of partitions: a candidate's verdict depends only on
// the two texts, and every pair sharing a bucket is in the partition of that bucket's hash.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"

namespace trail::corpus {

struct NearDedupRunsInput {
  std::vector<std::string> runs;         // document runs (DocRunMerge)
  size_t run_buffer = 1 << 16;           // read buffer per run
  std::string work;                      // scratch directory for sort runs
  std::string exact_dups;                // ExactDup records sorted by ordinal: these take no part
  std::string locations;                 // Location records by ordinal
  uint64_t documents = 0, bytes_in = 0;  // for progress
  int ngram = 5, bands = 20;             // ngram: the shingles verification compares
  double threshold = 0.8;
  uint64_t sort_budget = 0, verify_budget = 0;  // bytes
  bool progress = false;
};

// A candidate pair (ordinals i < j as i << 32 | j) and its verdict: pairs files hold these,
// sorted by pair, each pair once.
struct CandidatePair {
  uint64_t pair;
  uint64_t verified;  // 1 when the exact Jaccard reached the threshold, else 0
};

void WriteBandPartitions(const NearDedupRunsInput& in, const std::vector<std::string>& partitions);

struct PartitionCounts {
  uint64_t candidates = 0, verified = 0, spilled_bytes = 0;
};
PartitionCounts NearDedupPartition(const NearDedupRunsInput& in, const std::string& band_file,
                                   const std::string& pairs_file, ThreadPool& pool);

struct NearDedupRunsResult {
  std::unordered_map<uint32_t, uint32_t> root_of;  // documents in clusters of two or more
  uint64_t candidates = 0, verified = 0, spilled_bytes = 0;
};
// Throws when two partitions disagree on a pair's verdict (a damaged or foreign pairs file).
NearDedupRunsResult ClustersFromPairs(const std::vector<std::string>& pair_files);

// The three steps in one process, one partition.
NearDedupRunsResult NearDedupRuns(const NearDedupRunsInput& in, ThreadPool& pool);

}  // namespace trail::corpus
