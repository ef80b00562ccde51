// `trail eval`: OLMES tasks scored on a run's checkpoint (docs/inference.md §4, §5). Every
// request's log-likelihood goes to the requests file, the metrics and the OLMES macro to the
// report; both are written atomically at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "infer/eval_report.h"
#include "infer/trained_model.h"

namespace trail::infer {

struct EvalOptions {
  TrainedModelOptions model;
  std::vector<std::string> tasks;  // task folders or folders of them (FindTaskDirs)
  int64_t limit = 0;               // the first `limit` documents of each task; 0: all
  std::string out;                 // the report; "": DefaultEvalReportPath
};

// `log` receives progress lines (a task's start, then its requests done at most every two
// seconds). Throws trail::Error for a malformed task, a run without checkpoints or a request
// that cannot be scored; no report is written then.
//
// Resume: each finished task's request lines go to OUT.partial/K.jsonl (K its place in the task
// list) under a first line naming what they depend on (parameters, tokenizer, context, limit,
// the task's files). A run killed midway and started again with the same options takes those
// tasks from there and scores the rest; every value is a pure function of its request, so the
// requests file comes out the same bytes (and the report the same values but its wall time).
// The folder is removed once the report is written.
EvalReport RunEval(const EvalOptions& options,
                   const std::function<void(const std::string&)>& log = {});

// The requests' lines of a report's tasks from scores (task order, request order).
std::vector<EvalRequestLine> RequestLines(const EvalTask& task,
                                          const std::vector<ScoredRequest>& scores);

}  // namespace trail::infer
