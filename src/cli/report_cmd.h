// `trail report RUN [--out FILE] [--data MANIFEST]`: the run's self-contained HTML report
// (report/run_report.h); prints the path written.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct ReportCommand {
  CLI::App* report = nullptr;
  std::string run, out, data;
};
void AddReportCommand(CLI::App& app, ReportCommand& cmd);
int RunReportCommand(const ReportCommand& cmd);

}  // namespace trail::cli
