// `trail plan …`: planning a run before spending the compute (docs/plan.md).
//   plan cost --recipe R [--data M]  parameters, FLOPs, tokens per parameter and memory per
//                                    process of a recipe before it runs
//   plan sweep --recipe R --data M  the recipes of an IsoFLOP grid (budgets × widths) and a
//                                    script that trains them and fits the result
//   plan data --lineage DB [--data M --steps S]  read vs deduplicated vs kept per source, the
//                                    kept tokens, and the epochs a run sees of each source
//   plan fit RUN… [--points CSV]…    the Chinchilla law fitted to finished runs, with bootstrap
//                                    intervals and the compute-optimal N*, D* for budgets
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trail::cli {

struct PlanCommand {
  CLI::App* plan = nullptr;
  CLI::App *fit = nullptr, *cost = nullptr, *sweep = nullptr, *data_view = nullptr;
  std::string lineage;
  int64_t steps = 0;
  std::vector<int64_t> widths;
  std::string out;
  int64_t min_steps = 10;
  std::string recipe, data;
  int64_t processes = 1, vocab = 0, seq_len = 0, windows = 1, micro_batch_windows = 1;
  int64_t measure = 0;  // plan cost: steps to train for a measured step rate (0: none)
  std::vector<std::string> runs, points;
  std::vector<double> budgets;
  int bootstrap = 200;
  uint64_t seed = 1;
  bool json = false;
};
void AddPlanCommand(CLI::App& app, PlanCommand& cmd);
int RunPlanCommand(const PlanCommand& cmd);

}  // namespace trail::cli
