#include "cli/report_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/file_util.h"
#include "report/run_report.h"

namespace trail::cli {

void AddReportCommand(CLI::App& app, ReportCommand& c) {
  c.report = app.add_subcommand(
      "report", "Write a run's report: one self-contained HTML file with its curves, alerts, "
                "data mixture and hashes");
  c.report->add_option("run", c.run, "The run directory")->required();
  c.report->add_option("--out", c.out, "The HTML file (default: RUN/report.html)");
  c.report->add_option("--data", c.data,
                       "A copy of the run's data manifest (default: the one run.json names)");
}

int RunReportCommand(const ReportCommand& c) {
  const std::string out = c.out.empty() ? c.run + "/report.html" : c.out;
  WriteFileAtomic(out, report::RunReportHtml({c.run, c.data}));
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace trail::cli
