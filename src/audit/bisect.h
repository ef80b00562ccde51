// `trail audit bisect`: the first operation where two traces of one step (train/step_trace.h)
// diverge, and — when the values of that operation's output are known on both sides — its
// first differing element.
//
// Every entry before the diverging one matched, so both sides fed that operation the same
// inputs (parameters are committed by the step's starting point, activations by the entries
// before): it is the operation itself that computed differently. Its values come from the
// traces when both captured them; otherwise BisectWithRun re-runs the step on this machine
// twice, capturing that entry with this machine's kernels and with the scalar reference
// kernels (the specification, docs/repops.md), and gives each trace the values whose hash it
// recorded — so an auditor whose machine disagrees with a run's recorded trace learns the
// element, the run's value (the specification's) and their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/step_trace.h"

namespace trail::audit {

struct Divergence {
  bool found = false;
  int64_t index = -1;  // the first diverging entry
  train::TraceOp a, b;
  // The first differing element, when both sides' values are known.
  bool element_known = false;
  int64_t element = -1;         // flat index in the output
  std::vector<int64_t> coords;  // the same index in the output's shape
  uint32_t a_bits = 0, b_bits = 0;
  std::string note;  // why the element is not named, or whose value is the specification's
};

// Throws trail::Error when the traces are not of the same run and step, or of different
// computations (an entry that is another operation, rank, micro-batch or shape).
Divergence Bisect(const train::StepTrace& a, const train::StepTrace& b);

// Bisect, then name the element by re-running the step (see above) when the traces lack values.
Divergence BisectWithRun(const train::StepTrace& a, const train::StepTrace& b,
                         const std::string& run_dir, const std::string& data);

// `audit bisect --strict`: refuses (trail::Error saying why) unless trace `a` is the trainer's —
// signed (<a>.sig, train/step_trace.h) by the key that signed the run's attestation, of the
// run's genesis, recording the chain the trajectory holds after its step — and `b` is a trace
// of the same run and step.
void CheckStrictTraces(const std::string& a_path, const train::StepTrace& a,
                       const train::StepTrace& b, const std::string& run_dir);

std::string DivergenceText(const Divergence& d);
nlohmann::json DivergenceJson(const Divergence& d);

}  // namespace trail::audit
