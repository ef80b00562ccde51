// A corpus build split into tasks that any scheduler runs (a Slurm job array, `xargs -P`, a
// shell loop) and that exchange files only through the output directory:
//
//   read phase, N tasks, any order, any concurrency:
//     trail corpus build --config C --out DIR --task i --tasks N        (i = 0 .. N-1)
//   final phase, one task, once every read task is complete:
//     trail corpus build --config C --out DIR --tasks N
//
// Read task i reads a contiguous slice of the build's input files (core/task_files.h), runs the
// per-document stages on it (normalize, language, quality) and leaves under its directory
// DIR/.tasks/read-NNNNN/task-IIIII/ the document runs (as a one-process build leaves them in
// .work), quarantine.bin (the reader's quarantined records, in read order) and, written last,
// task.json — the manifest: format "trail.corpus-read-task.v1", task, tasks, config_sha256,
// stage_versions, fingerprint, the files read (index, path, bytes), every run (name,
// documents, sha256), the quarantine file's record count and sha256, warc_skipped, the stage
// times, and the seal manifest_sha256 (core/task_files.h).
//
// A task is idempotent: one whose manifest and files verify does nothing; otherwise it redoes
// what does not verify, reusing every intact document run of an interrupted attempt
// (build_work.h). Its directory belongs to a fingerprint — config text, stage versions,
// memory budget, task, tasks and its files' paths and SHA-256 — and any other clears it.
// A task holds a TaskLock on task-IIIII.lock while it runs: a second copy of the same task
// refuses to start.
//
// The final phase verifies every manifest, run and quarantine file (VerifyReadTasks) before it
// touches anything, naming each task that is missing, damaged or from another config or
// inputs; then runs the cross-document phases on the tasks' runs in task order. Why that gives
// a one-process build's bytes: slices are contiguous in the build's file order, so runs in task
// order are runs in read order; document runs are merged by key with ties in run order (the
// first read of a repeated key stays), and every later decision depends on keys and contents
// only, never on where chunks ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/task_files.h"
#include "corpus/pipeline/config.h"
#include "corpus/read/reader.h"
#include "corpus/read/source_reader.h"

namespace trail::corpus {

std::string ReadTasksDirectory(const std::string& out_dir, uint32_t tasks);
std::string ReadTaskDirectory(const std::string& out_dir, uint32_t task, uint32_t tasks);

// One read task's plan: its slice, directory and fingerprint (hashes the slice's files).
struct ReadTaskPlan {
  uint32_t task = 0, tasks = 1;
  FileRange files;
  std::vector<std::string> paths;  // the build's file list
  std::vector<uint64_t> bytes;     // their sizes
  std::string dir, fingerprint;
};
ReadTaskPlan PlanReadTask(const CorpusConfig& cfg, const std::string& out_dir, uint32_t task,
                          uint32_t tasks, uint64_t budget_bytes);

// What a finished read task records beside its runs.
struct ReadTaskRecord {
  std::vector<std::string> runs;  // paths, in chunk order
  std::vector<Quarantined> quarantined;
  uint64_t warc_skipped = 0, resumed_runs = 0;
  std::vector<std::pair<std::string, double>> seconds;  // stage -> wall seconds
  double checkpoint_seconds = 0;
};

// True when the task's manifest, runs and quarantine file verify against the plan.
bool ReadTaskIsComplete(const CorpusConfig& cfg, const ReadTaskPlan& plan);
// Clears a directory of another fingerprint and the manifest and scratch of an earlier attempt
// (intact document runs stay for reuse).
void PrepareReadTaskDirectory(const ReadTaskPlan& plan);
// quarantine.bin, then task.json (fsynced, renamed): the task is complete from here on.
void WriteReadTaskManifest(const CorpusConfig& cfg, const ReadTaskPlan& plan,
                           const ReadTaskRecord& record);

// Every read task's record, in task order, after verifying each against the config and the
// current input files' sizes; throws trail::Error naming every task that is incomplete,
// damaged, or from another config, trail version or inputs, and how to repair it.
// `fingerprint` gets a digest of all the manifests (for the final phase's work directory).
std::vector<ReadTaskRecord> VerifyReadTasks(const CorpusConfig& cfg, const std::string& out_dir,
                                            uint32_t tasks, std::string* fingerprint);

}  // namespace trail::corpus
