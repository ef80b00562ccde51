// `trail train …`: train a model from a recipe on a data manifest into a run directory,
// resume it, or verify a run's files (hashes and chain) without executing a step. Replaying
// steps is the audit's (`trail audit replay`, audit_cmd.h).
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct TrainCommand {
  CLI::App* train = nullptr;
  CLI::App* verify = nullptr;
  std::string recipe, data, run, key, init_from, device = "cpu";
  bool resume = false, quiet = false, no_verify = false;
  int64_t stop_after = -1, trace_every = 0;
  int threads = 0;
};
void AddTrainCommand(CLI::App& app, TrainCommand& cmd);
int RunTrainCommand(const TrainCommand& cmd);

}  // namespace trail::cli
