// The run report's downstream evaluation section: the newest `trail eval` report in RUN/evals/
// (infer/eval_report.h), as a table of tasks and the OLMES macro.
#pragma once

#include <string>

namespace trail::report {

// An HTML <section>; it says so when the run has no evaluation.
std::string DownstreamEvalSection(const std::string& run_dir);

}  // namespace trail::report
