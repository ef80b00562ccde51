#include "cli/goldens_cmd.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "train/golden_registry.h"

namespace trail::cli {

void AddGoldensCommand(CLI::App& app, GoldensCommand& cmd) {
  cmd.goldens =
      app.add_subcommand("goldens", "The golden registry (goldens/): committed reference bits");
  cmd.goldens->require_subcommand(1);
  cmd.regenerate = cmd.goldens->add_subcommand(
      "regenerate",
      "Recompute every golden set on the scalar reference backend and list what differs from "
      "the committed values; writes them only with --confirm-spec-change");
  cmd.regenerate->add_option("--dir", cmd.dir, "The golden folder to write")->capture_default_str();
  cmd.regenerate->add_flag("--confirm-spec-change", cmd.confirm,
                           "Write the new values: only for a documented change of an op, stream "
                           "or training spec");
}

int RunGoldensCommand(const GoldensCommand& cmd) {
  const train::GoldenRegeneration g = train::RegenerateGoldens(cmd.dir, cmd.confirm);
  size_t cases = 0;
  for (const auto& [set, table] : g.computed) cases += table.size();
  for (const train::GoldenChange& c : g.changes) {
    std::printf("%s/%s: %s -> %s\n", c.set.c_str(), c.name.c_str(),
                c.committed.empty() ? "(new)" : c.committed.c_str(),
                c.computed.empty() ? "(gone)" : c.computed.c_str());
  }
  if (g.changes.empty()) {
    std::printf("all %zu golden cases equal the committed values; nothing to write\n", cases);
    return 0;
  }
  if (g.written) {
    std::printf(
        "%zu of %zu golden cases changed; wrote %s/*.txt — document the spec change in "
        "the commit\n",
        g.changes.size(), cases, cmd.dir.c_str());
    return 0;
  }
  std::printf(
      "%zu of %zu golden cases differ from the committed values; nothing written. A "
      "golden value changes only with a documented spec change: rerun with "
      "--confirm-spec-change to write them\n",
      g.changes.size(), cases);
  return 1;
}

}  // namespace trail::cli
