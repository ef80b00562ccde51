// The near-dedup phases of a corpus build in tasks (pipeline/task_records.h has the read phase),
// for M near tasks (--near-tasks M):
//
//   index phase, one task, after every read task:
//     trail corpus build --config C --out DIR --tasks N --near-tasks M --phase index
//   near phase, M tasks, any order and concurrency:
//     trail corpus build --config C --out DIR --tasks N --near-tasks M --phase near --task p
//   final phase: trail corpus build --config C --out DIR --tasks N --near-tasks M
//
// The index (DIR/.tasks/near-MMMMM/index/) merges the read tasks' runs by key once: ordinals
// (locations.bin: where each document's record is), exact dedup (exact.bin), and every exact
// survivor's band hashes into bands-PPPPP.bin by hash mod M (near_dedup_runs.h); when the runs
// are too many to merge at once, the merged groups it reads from stay beside them. Its
// task.json (sealed, core/task_files.h): format "trail.corpus-index.v1", read_tasks,
// near_tasks, config_sha256, stage_versions, read_digest (the digest of the read tasks'
// manifests), runs (path, bytes: the runs, in ordinal-location order), files (name, sha256),
// documents, bytes_in.
// Near task p (DIR/.tasks/near-MMMMM/task-PPPPP/) verifies the index's files it reads, sorts its
// partition's band entries, pairs documents sharing a bucket and verifies every candidate by
// exact Jaccard, reading texts by position from the runs; pairs.bin lists each candidate with
// its verdict (CandidatePair). Its task.json (sealed): format "trail.corpus-near-task.v1",
// task, tasks, index_digest (the digest of the index manifest it used), pairs (sha256,
// candidates, verified).
// The final phase verifies the read tasks, the index (its read_digest must be theirs now) and
// every near task (their index_digest must be the index's), naming each that fails; it then
// takes the clusters from the pairs files instead of running near dedup itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corpus/pipeline/config.h"

namespace trail::corpus {

std::string NearTasksDirectory(const std::string& out_dir, uint32_t near_tasks);
std::string IndexDirectory(const std::string& out_dir, uint32_t near_tasks);
std::string NearTaskDirectory(const std::string& out_dir, uint32_t task, uint32_t near_tasks);
std::string BandPartitionName(uint32_t partition);  // "bands-00003.bin"

// What the index phase leaves, as its manifest records it.
struct IndexRecord {
  uint32_t read_tasks = 0, near_tasks = 0;
  std::string read_digest;
  std::vector<std::string> runs;
  uint64_t documents = 0, bytes_in = 0;
  std::string digest;  // of the manifest: what near tasks record
};
void WriteIndexManifest(const CorpusConfig& cfg, const std::string& out_dir, const IndexRecord& r);
// The index's record when its manifest is sealed, belongs to this config, these task counts
// and (when read_digest is not empty) these read tasks, and the files named in `check` hash to
// what it recorded; otherwise throws naming what is wrong and how to repair it.
IndexRecord VerifyIndex(const CorpusConfig& cfg, const std::string& out_dir, uint32_t read_tasks,
                        uint32_t near_tasks, const std::string& read_digest,
                        const std::vector<std::string>& check);
// True when the index manifest exists and verifies (every file) for these read tasks.
bool IndexIsComplete(const CorpusConfig& cfg, const std::string& out_dir, uint32_t read_tasks,
                     uint32_t near_tasks, const std::string& read_digest);

struct NearTaskRecord {
  uint64_t candidates = 0, verified = 0;
};
void WriteNearTaskManifest(const std::string& dir, uint32_t task, uint32_t near_tasks,
                           const std::string& index_digest, const NearTaskRecord& r);
// "" when near task `task`'s manifest is sealed, belongs to this index and its pairs file is
// intact; otherwise what is wrong.
std::string CheckNearTask(const std::string& out_dir, uint32_t task, uint32_t near_tasks,
                          const std::string& index_digest);

}  // namespace trail::corpus
