// The training loop on the device seam (docs/devices.md).
#include <gtest/gtest.h>

#include "core/device.h"
#include "core/file_util.h"
#include "train/checkpoint.h"
#include "train/step_trace.h"
#include "train/test_run.h"
#include "train/trainer.h"

namespace trail::train {
namespace {

// The device seam end to end: a run on the guarded test device, whose activations host code
// outside its backend cannot touch, trained with traced steps, stopped, and resumed from a
// checkpoint, writes the CPU run's trajectory, checkpoints and traces byte for byte.
TEST(Devices, GuardedDeviceTrainsTracesAndResumesToTheCpuBits) {
  auto train = [](const RunFiles& f, const std::string& device, bool resume, int64_t stop) {
    TrainOptions o;
    o.recipe_path = f.recipe, o.manifest_path = f.manifest, o.run_dir = f.run;
    o.resume = resume, o.stop_after = stop, o.quiet = true, o.trace_every = 3;
    o.device = repops::ParseDevice(device);
    return RunTraining(o);
  };
  const auto cpu = MakeRun(8, 4);
  const TrainSummary s = train(*cpu, "cpu", false, -1);
  const auto guarded = MakeRun(8, 4);
  train(*guarded, "guarded", false, 6);
  const TrainSummary g = train(*guarded, "guarded", true, -1);
  EXPECT_EQ(g.steps_verified_on_resume, 2);
  EXPECT_EQ(g.final_chain, s.final_chain);
  EXPECT_EQ(g.final_params, s.final_params);
  EXPECT_EQ(ReadFileToString(guarded->run + "/trajectory.jsonl"),
            ReadFileToString(cpu->run + "/trajectory.jsonl"));
  for (const char* file : {"/model.safetensors", "/optim.safetensors"}) {
    EXPECT_EQ(ReadFileToString(CheckpointDir(guarded->run, 8) + file),
              ReadFileToString(CheckpointDir(cpu->run, 8) + file))
        << file;
  }
  for (int64_t step : {3, 6}) {
    const StepTrace a = ReadStepTrace(TracePath(cpu->run, step));
    const StepTrace b = ReadStepTrace(TracePath(guarded->run, step));
    ASSERT_EQ(a.ops.size(), b.ops.size()) << step;
    EXPECT_GT(a.ops.size(), 50u);
    for (size_t i = 0; i < a.ops.size(); ++i) {
      EXPECT_EQ(a.ops[i].Identity() + a.ops[i].hash, b.ops[i].Identity() + b.ops[i].hash);
    }
  }
}

}  // namespace
}  // namespace trail::train
