// `trail goldens regenerate`: recompute every golden set (core/golden.h) and show what differs
// from the committed values; write them only with --confirm-spec-change.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace trail::cli {

struct GoldensCommand {
  CLI::App* goldens = nullptr;
  CLI::App* regenerate = nullptr;
  std::string dir = "goldens";
  bool confirm = false;
};

void AddGoldensCommand(CLI::App& app, GoldensCommand& cmd);
int RunGoldensCommand(const GoldensCommand& cmd);

}  // namespace trail::cli
