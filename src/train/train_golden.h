// Golden training runs: a few steps of small models on a fixed synthetic corpus, reduced to the
// final chained trajectory hash. The same hashes must come out on every SIMD target, thread
// count and ISA (`trail selftest` checks them; scripts/check-aarch64.sh runs that under
// qemu-aarch64).
#pragma once

#include "core/device.h"

#include <map>
#include <string>
#include <vector>

#include "core/golden.h"

namespace trail::train {

struct GoldenRun {
  std::string name, chain;
};

// Runs every golden case on the active backend and kernel pool.
// Each run's steps on a backend of `device`.
std::vector<GoldenRun> RunTrainingGolden(const Device& device = {});
// The committed final chains, by case name (goldens/training.txt).
const GoldenTable& CommittedTrainingGolden();

// The recipe text of a golden case (also used by tests that need a small, fast recipe).
std::string GoldenRecipeText(const std::string& name);

}  // namespace trail::train
