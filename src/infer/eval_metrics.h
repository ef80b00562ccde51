// A task's metrics from its requests' log-likelihoods, as OLMES defines them, and the OLMES
// macro average (docs/inference.md §4). Every sum runs in float64 in document order, so the
// metrics are a pure function of the log-likelihood bits.
//
// Per document, over its choices i (idx order) with log-likelihood LL_i:
//   acc_raw        the argmax of LL_i is the label (ties: the lowest idx)
//   acc_per_char   the argmax of LL_i / (code points of continuation i, leading space included)
//   acc_per_token  the argmax of LL_i / max(1, tokens of continuation i)
//   bits_per_byte  −LL_label / (UTF-8 bytes of the label's continuation · ln 2)
// Each is the mean over documents. chance = the mean of 1 / (choices).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infer/loglikelihood.h"
#include "infer/olmes_tasks.h"

namespace trail::infer {

struct TaskMetrics {
  int64_t documents = 0, requests = 0;
  int64_t truncated_requests = 0;  // requests whose context lost tokens to the window
  double acc_raw = 0, acc_per_char = 0, acc_per_token = 0, bits_per_byte = 0, chance = 0;
  double Metric(const std::string& name) const;  // one of EvalMetricNames()
};

// `scores` holds one entry per request of `t`, in its order.
TaskMetrics ComputeMetrics(const EvalTask& t, const std::vector<ScoredRequest>& scores);

// OLMES's macro: per base task the better primary metric of its cloze (CF) and multiple-choice
// (MCF) formulations, then the mean over base tasks (for a primary metric of bits per byte the
// lower of the two is the better).
struct MacroRow {
  std::string base;
  std::optional<double> cf, mcf;
  double best = 0;
};
struct Macro {
  std::vector<MacroRow> rows;  // by base name
  double score = 0;
};
struct TaskScore {
  std::string name, base, primary_metric;
  bool mc = false;
  double primary = 0;
};
Macro ComputeMacro(const std::vector<TaskScore>& tasks);

// Code points of UTF-8 text (invalid bytes count one each).
int64_t CodePoints(const std::string& s);

}  // namespace trail::infer
