// `trail eval --run DIR [--step N] --tasks PATH… [--limit K] [--json] [--out FILE]`: OLMES tasks
// scored on a run's checkpoint (infer/eval_run.h); prints the table (or the report as JSON) and
// writes the report and the per-request log-likelihood bits. `trail audit eval` checks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::infer {
struct EvalReport;
}

namespace trail::cli {

struct EvalCommand {
  CLI::App* eval = nullptr;
  std::string run, out, tokenizer, device = "cpu";
  std::vector<std::string> tasks;
  int64_t step = -1, limit = 0;
  int threads = 0;
  bool json = false, quiet = false;
};
void AddEvalCommand(CLI::App& app, EvalCommand& cmd);
int RunEvalCommand(const EvalCommand& cmd);

// The evaluation table as text (also for `trail audit eval`).
std::string EvalTable(const infer::EvalReport& r);

}  // namespace trail::cli
