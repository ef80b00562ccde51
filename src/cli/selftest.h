// `trail selftest`: does this machine reproduce the reference bits, per SIMD target?
#pragma once

#include <string>
#include <vector>

namespace trail::cli {

struct SelftestOptions {
  std::vector<int> threads = {1, 2, 7};
  std::string backend;         // empty: every SIMD target available here
  std::string device = "cpu";  // where the golden training runs run
  bool json = false;
};

// Returns the process exit code: 0 all reproduce, 1 some case differs.
int RunSelftest(const SelftestOptions& opt);

}  // namespace trail::cli
