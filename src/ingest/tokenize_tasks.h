// `trail data tokenize` split into tasks that any scheduler runs (core/task_files.h):
//
//   encode phase, N tasks, any order and concurrency:
//     trail data tokenize --contract C --input F... --output-dir D --task i --tasks N
//   final phase, once every encode task is complete:
//     trail data tokenize --contract C --input F... --output-dir D --tasks N
//
// Encode task i tokenizes the documents of its slice of the input files (TaskSlice: contiguous,
// balanced by bytes) into a token run, D/.tasks/<prefix>-NNNNN/task-IIIII/tokens.run
// (token_batches.h), then writes task.json, sealed: format "trail.tokenize-task.v1", task,
// tasks, header (the journal header: contract, inputs, prefix, shard_tokens, domain), files
// (index, path, bytes), fingerprint (SHA-256 over the header and the slice's paths and
// contents), run (sha256, documents, tokens). A task whose manifest and run verify does
// nothing; an interrupted one starts its slice again. One process per task (TaskLock).
//
// The final phase verifies every task before it writes anything — naming each task that is
// missing, damaged, or from other parameters or inputs — and replays the runs in task order
// into the ShardSink a one-process job writes through: the shards, the journal and the shard
// list are that job's bytes, for any N (tasks hold whole files in input order). Its journal
// makes it resumable like a one-process job; once complete, the tasks' directory is removed.
#pragma once

#include <cstdint>
#include <string>

#include <functional>
#include <vector>

#include "core/task_files.h"
#include "ingest/token_batches.h"
#include "ingest/tokenize_job.h"

namespace trail::ingest {

struct TokenizeTaskSummary {
  bool already_complete = false;
  std::string dir;
  uint32_t first_file = 0, end_file = 0;  // input indices [first, end)
  uint64_t bytes = 0, documents = 0, tokens = 0;
};
TokenizeTaskSummary RunTokenizeTask(const TokenizeOptions& opt, uint32_t task, uint32_t tasks);
TokenizeResult RunTokenizeFromTasks(const TokenizeOptions& opt, uint32_t tasks);

// The final phase's parts, for jobs that write through several sinks (corpus tokenize):
// every encode task verified — throws naming each one that is missing, damaged, or from other
// parameters or inputs — then their documents in task order, each checked to name an input
// of its task's slice; the tasks' directory removed once the job is complete.
struct TokenRuns {
  std::vector<std::string> paths;  // tokens.run of each task, in task order
  std::vector<FileRange> slices;
};
TokenRuns VerifyTokenizeTasks(const TokenizeOptions& opt, uint32_t tasks);
void ReplayTokenRuns(const TokenRuns& runs, const std::function<void(TokenDoc&&)>& fn);
void RemoveTokenizeTasks(const TokenizeOptions& opt, uint32_t tasks);

}  // namespace trail::ingest
