// `trail report`: one self-contained HTML file for a run (docs/training.md, "Run report"):
// inline SVG charts, no script, no network. What it shows, from the run directory alone:
//   - the run's facts and hashes: parameters, FLOPs per token, mesh, steps and tokens, recipe
//     and data-manifest SHA-256, genesis H_0 and the last chained hash of the trajectory;
//   - loss against tokens, with each validation domain's loss and its unigram entropy (the loss
//     of a model that knows only token frequencies) as a reference line;
//   - learning rate; gradient norm before and after clipping, skipped updates marked; tokens/s;
//     per-group weight norms;
//   - the spike monitor's alerts; the final validation losses;
//   - the data mixture: each source's target, scheduled and measured share of the tokens the
//     steps consumed, and per mixture phase its target against its measured shares (when the
//     run's data manifest can be opened; otherwise a note says why);
//   - with an audit plan, trusted keys and attestations: the collected verdict (audit/collect.h),
//     accepted and rejected attestations, coverage per step range and every disagreement.
#pragma once

#include <string>
#include <vector>

namespace trail::report {

struct RunReportOptions {
  std::string run_dir;
  std::string data;  // a copy of the run's data manifest ("" = the path run.json names)
  // The audit section (all three, or none): the plan, the trusted auditors' keys directory and
  // the attestations, as `trail audit collect` takes them.
  std::string audit_plan, audit_keys;
  std::vector<std::string> attestations;
};

std::string RunReportHtml(const RunReportOptions& options);

}  // namespace trail::report
