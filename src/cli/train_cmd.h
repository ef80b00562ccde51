// `trail train …`: train a model from a recipe on a data manifest into a run directory,
// resume it, or replay a recorded segment and check it lands on the same bits.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct TrainCommand {
  CLI::App* train = nullptr;
  CLI::App* replay = nullptr;
  std::string recipe, data, run;
  bool resume = false, quiet = false, no_verify = false;
  int64_t stop_after = -1, from_step = -1;
  int threads = 0;
};
void AddTrainCommand(CLI::App& app, TrainCommand& cmd);
int RunTrainCommand(const TrainCommand& cmd);

}  // namespace trail::cli
