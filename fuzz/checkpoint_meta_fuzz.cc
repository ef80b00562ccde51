// A checkpoint's meta.json on arbitrary text, in a real checkpoint directory (a tiny run trained
// at start-up): the file checks, the identity reader and a full load into the run's state.
// The seed is that checkpoint's own meta.json (the run is deterministic, so its file hashes are
// stable), from which mutations reach every field past the file-hash checks.
#include <cstdlib>

#include "core/file_util.h"
#include "fuzz/fuzz_input.h"
#include "train/checkpoint.h"
#include "train/recipe.h"
#include "train/test_run.h"

namespace {

struct TinyRun {
  std::unique_ptr<trail::train::RunFiles> files = trail::train::MakeRun(2, 1);
  std::string dir;
  trail::model::ModelConfig config;
  TinyRun() {
    trail::train::Train(*files, /*resume=*/false);
    dir = trail::train::CheckpointDir(files->run, 1);
    config = trail::train::LoadRecipe(files->recipe, trail::train::kVocab).model;
  }
};

const TinyRun& Run() {
  static const TinyRun run;
  return run;
}

}  // namespace

// TRAIL_FUZZ_WRITE_SEED=PATH: write the checkpoint's own meta.json there and exit (make_seeds.sh).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* out = std::getenv("TRAIL_FUZZ_WRITE_SEED"); out != nullptr && *out) {
    trail::fuzz::WriteBytes(out, trail::ReadFileToString(Run().dir + "/meta.json"));
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const TinyRun& run = Run();
  fuzz::WriteBytes(run.dir + "/meta.json", fuzz::AsText(data, size));
  train::RunIdentity id;
  if (fuzz::Refused([&] { id = train::CheckpointIdentity(run.dir); })) return 0;
  fuzz::Refused([&] { train::VerifyCheckpointFiles(run.dir); });
  train::TrainState st(run.config, train::TestCpu());
  fuzz::Refused([&] { train::LoadCheckpoint(run.dir, id, st); });
  return 0;
}
