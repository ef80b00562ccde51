// OLMES request files: the request dumps OLMo's evaluator scores (docs/inference.md §4). A task
// folder holds config.json ({"task_name": ..., "task_config": {"primary_metric": ...}}) and
// requests.jsonl.gz, one log-likelihood request per line:
//   {"request_type": "loglikelihood", "request": {"context": ..., "continuation": ...},
//    "doc_id": d, "idx": i, "label": g, ...}
// A document's choices are the lines with its doc_id; idx is the choice, label the gold choice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::infer {

struct EvalRequest {
  int64_t doc_id = 0, idx = 0, label = 0;
  std::string context, continuation;
};

struct EvalTask {
  std::string name;            // task_name: "arc_easy" (cloze, CF) or "arc_easy:mc" (MCF)
  std::string base;            // the name without ":mc": what CF and MCF of a task share
  bool mc = false;             // the multiple-choice formulation
  std::string primary_metric;  // acc_raw | acc_per_char | acc_per_token | bits_per_byte
  std::string dir;             // the folder read
  std::string config_sha256, requests_sha256;  // of the two files' bytes
  // The requests of the first `limit` documents (in order of first appearance), grouped by
  // document, each document's choices in idx order 0..n-1.
  std::vector<EvalRequest> requests;
  int64_t documents = 0;
};

// The metrics a task may name as primary.
const std::vector<std::string>& EvalMetricNames();

// The task folders under `paths`: a folder with config.json is one; any other folder stands for
// every task folder below it (sorted by path). Throws trail::Error when a path holds none.
std::vector<std::string> FindTaskDirs(const std::vector<std::string>& paths);

// Reads a task folder, keeping the first `limit` documents (0: all). Throws trail::Error naming
// the file and line for a malformed file: an unknown request type or primary metric, a
// document whose choices are not 0..n-1 once each or whose label is not one of them.
EvalTask LoadTask(const std::string& dir, int64_t limit);

}  // namespace trail::infer
