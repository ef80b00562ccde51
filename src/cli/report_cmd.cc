#include "cli/report_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/file_util.h"
#include "report/run_report.h"

namespace trail::cli {

void AddReportCommand(CLI::App& app, ReportCommand& c) {
  c.report = app.add_subcommand(
      "report",
      "Write a run's report: one self-contained HTML file with its curves, alerts, "
      "data mixture and hashes");
  c.report->add_option("run", c.run, "The run directory")->required();
  c.report->add_option("--out", c.out, "The HTML file (default: RUN/report.html)");
  c.report->add_option("--data", c.data,
                       "A copy of the run's data manifest (default: the one run.json names)");
  auto* plan = c.report->add_option("--plan", c.plan, "The audit plan (trail audit plan)");
  auto* keys =
      c.report->add_option("--keys", c.keys, "Directory of the trusted auditors' *.pub keys");
  auto* att =
      c.report->add_option("--attestation", c.attestations, "An auditor's attestation (repeat)");
  plan->needs(keys)->needs(att);
  keys->needs(plan);
  att->needs(plan);
}

int RunReportCommand(const ReportCommand& c) {
  const std::string out = c.out.empty() ? c.run + "/report.html" : c.out;
  WriteFileAtomic(out, report::RunReportHtml({c.run, c.data, c.plan, c.keys, c.attestations}));
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace trail::cli
