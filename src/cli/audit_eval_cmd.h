// `trail audit eval --report FILE --tasks PATH… [--sample K] [--seed S] [--run DIR]`: checks an
// evaluation (infer/eval_audit.h). Exit 0 when everything agrees, 1 with findings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct AuditEvalCommand {
  CLI::App* eval = nullptr;
  std::string report, run, tokenizer, device = "cpu";
  std::vector<std::string> tasks;
  int64_t sample = 64;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false;
};
void AddAuditEvalCommand(CLI::App* audit, AuditEvalCommand& cmd);
int RunAuditEvalCommand(const AuditEvalCommand& cmd);

}  // namespace trail::cli
