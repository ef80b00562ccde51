// Golden training runs: a few steps of small models on a fixed synthetic corpus, reduced to the
// final chained trajectory hash. The same hashes must come out on every SIMD target, thread
// count and ISA (`trail selftest` checks them; scripts/check-aarch64.sh runs that under
// qemu-aarch64).
#pragma once

#include "core/device.h"

#include <memory>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/golden.h"
#include "data/stream.h"
#include "train/recipe.h"
#include "train/state.h"
#include "train/step.h"

namespace trail::train {

struct GoldenRun {
  std::string name, chain;
};

// One golden case ready to run (docs/goldens.md §3): its synthetic corpus in a temporary folder
// that lives as long as the object, the canonical stream over it, the recipe, a step engine of
// one process on `device`, and the initial state (parameters initialized, chain at the genesis
// with manifest hash "golden"). Each StepAndChain(engine(), state(), r) runs the next step.
class GoldenCase {
 public:
  explicit GoldenCase(const std::string& name, const Device& device = {});
  const std::string& name() const { return name_; }
  int64_t steps() const { return steps_; }
  const std::string& recipe_text() const { return recipe_text_; }
  const Recipe& recipe() const { return recipe_; }
  const data::Manifest& manifest() const { return stream_->manifest(); }
  StepEngine& engine() { return *engine_; }
  TrainState& state() { return *state_; }
  const Digest& genesis() const { return genesis_; }

 private:
  std::string name_, recipe_text_;
  int64_t steps_ = 0;
  TempDir dir_;
  std::unique_ptr<data::CanonicalStream> stream_;
  Recipe recipe_;
  std::unique_ptr<StepEngine> engine_;
  std::unique_ptr<TrainState> state_;
  Digest genesis_{};
};

// The names of the golden cases, in goldens/training.txt's order of computation.
std::vector<std::string> GoldenCaseNames();

// Runs every golden case on the active backend and kernel pool.
// Each run's steps on a backend of `device`.
std::vector<GoldenRun> RunTrainingGolden(const Device& device = {});
// The committed final chains, by case name (goldens/training.txt).
const GoldenTable& CommittedTrainingGolden();

// The recipe text of a golden case (also used by tests that need a small, fast recipe).
std::string GoldenRecipeText(const std::string& name);

}  // namespace trail::train
