// `trail report RUN [--out FILE] [--data MANIFEST] [--plan P --keys DIR --attestation A…]`: the
// run's self-contained HTML report (report/run_report.h); prints the path written.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct ReportCommand {
  CLI::App* report = nullptr;
  std::string run, out, data, plan, keys;
  std::vector<std::string> attestations;
};
void AddReportCommand(CLI::App& app, ReportCommand& cmd);
int RunReportCommand(const ReportCommand& cmd);

}  // namespace trail::cli
