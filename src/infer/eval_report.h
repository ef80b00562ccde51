// The files of an evaluation (docs/inference.md §5), one schema for the writer (trail eval),
// the auditor (trail audit eval) and the run report:
//   <name>.json             the report, format "trail.eval.v1"
//   <name>.requests.jsonl   one line per request, in task order then request order:
//     {"task", "doc_id", "idx", "label", "context_tokens", "truncated", "continuation_tokens",
//      "loglik" (number), "loglik_bits" (the float64's 16 hex digits: the value), "greedy"}
// The report records the requests file's SHA-256, so a score cannot change without the bits
// that produced it. By default both live in RUN/evals/, named after the checkpoint's step.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "infer/eval_metrics.h"

namespace trail::infer {

inline constexpr const char* kEvalFormat = "trail.eval.v1";

struct EvalRequestLine {
  std::string task;
  int64_t doc_id = 0, idx = 0, label = 0;
  ScoredRequest score;
};
std::string EvalRequestLineJson(const EvalRequestLine& r);  // one line, no newline
// Throws trail::Error naming `where` for a malformed line (the value is read from its bits).
EvalRequestLine ParseEvalRequestLine(const std::string& line, const std::string& where);

struct EvalTaskReport {
  std::string name, base, primary_metric, dir, config_sha256, requests_sha256;
  bool mc = false;
  TaskMetrics metrics;
  double primary = 0;
};

struct EvalReport {
  std::string run, checkpoint, params_hash, tokenizer_sha256, backend;
  int64_t step = 0, limit = 0, max_seq_len = 0;
  std::vector<EvalTaskReport> tasks;
  Macro macro;
  std::string requests_file;  // the requests file's name, beside the report
  std::string requests_sha256;
  int64_t requests = 0;
  double seconds = 0;  // wall clock, not part of the result
};
nlohmann::json EvalReportToJson(const EvalReport& r);
// Throws trail::Error naming `path` for a malformed report or another format.
EvalReport ParseEvalReport(const std::string& text, const std::string& path);

// X.json -> X.requests.jsonl
std::string RequestsPathFor(const std::string& report_path);
// RUN/evals/step_NNNNNNNN.json
std::string DefaultEvalReportPath(const std::string& run_dir, int64_t step);
// The reports in RUN/evals/, by name (empty when there are none).
std::vector<std::string> EvalReportsIn(const std::string& run_dir);

}  // namespace trail::infer
