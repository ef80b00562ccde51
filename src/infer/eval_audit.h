// `trail audit eval`: checks an evaluation as published (docs/inference.md §5). Without running
// the model: the requests file is the one the report's hash names, the task files are the ones
// it was computed from, and every metric and the macro follow from the recorded log-likelihoods.
// Then a seeded sample of requests is scored again on this machine, from the run's checkpoint of
// the report's step, and each log-likelihood must have the recorded bits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/device.h"

namespace trail::infer {

struct EvalAuditOptions {
  std::string report;              // the report (its requests file beside it)
  std::string run;                 // "": the run the report names
  std::vector<std::string> tasks;  // the task folders (or folders of them) it scored
  std::string tokenizer;           // "": the run's, as trail eval found it
  int64_t sample = 64;             // requests scored again (0: none; more than there are: all)
  uint64_t seed = 0;               // which ones (Philox, stream "trail.audit-eval")
  Device device;
};

struct EvalAuditResult {
  int64_t requests = 0, rescored = 0;
  std::vector<std::string> findings;  // each names the file, task or request at fault
  bool ok() const { return findings.empty(); }
};

// Throws trail::Error only when the audit cannot run (a file missing or unreadable); every
// disagreement is a finding.
EvalAuditResult AuditEval(const EvalAuditOptions& options,
                          const std::function<void(const std::string&)>& log = {});

}  // namespace trail::infer
