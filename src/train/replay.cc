#include "train/replay.h"

#include <algorithm>

#include "core/error.h"
#include "train/checkpoint.h"
#include "train/loaded_run.h"
#include "train/run_dir.h"
#include "train/step.h"
#include "train/step_report.h"
#include "train/trajectory.h"

namespace trail::train {
ReplayResult ReplaySegment(const std::string& run_dir, const std::string& manifest_path,
                           int64_t from_step, bool quiet) {
  const RunDirectory rd(run_dir);
  const RunInfo info = rd.ReadInfo();
  const std::string manifest = manifest_path.empty() ? info.data_manifest : manifest_path;
  TRAIL_CHECK(!manifest.empty(), run_dir, "/run.json names no data manifest: pass --data");
  LoadedRun run(rd.recipe_path(), manifest, true);
  const std::vector<int64_t> ckpts = ListCheckpoints(run_dir);
  TRAIL_CHECK(!ckpts.empty(), run_dir, ": no checkpoints to replay from");
  if (from_step < 0) from_step = ckpts.size() >= 2 ? ckpts[ckpts.size() - 2] : ckpts.back();
  TRAIL_CHECK(std::find(ckpts.begin(), ckpts.end(), from_step) != ckpts.end(), run_dir,
              ": no checkpoint at step ", from_step);
  TrainState st(run.recipe.model);
  LoadCheckpoint(CheckpointDir(run_dir, from_step), run.id(), st);
  const std::vector<TrajectoryRecord> recs = rd.ReadTrajectory(info.genesis, false);
  int64_t end = static_cast<int64_t>(recs.size());
  for (int64_t c : ckpts) {
    if (c > from_step) {
      end = std::min(end, c);
      break;
    }
  }
  TRAIL_CHECK(end > from_step, run_dir, ": no recorded steps after checkpoint ", from_step);
  Say(quiet, "replay: steps " + std::to_string(from_step) + ".." + std::to_string(end - 1) +
                 " from checkpoint step " + std::to_string(from_step));
  ReplayResult out;
  while (st.step < end) {
    StepResult r;
    const std::string line = StepAndChain(run.engine, st, r);
    const std::string diff = FirstDifference(recs[r.step].line, line);
    if (!diff.empty()) {
      out.diverged = r.step, out.difference = diff;
      Say(quiet, "replay: step " + std::to_string(r.step) + " DIFFERS: " + diff);
      return out;
    }
    ++out.verified;
  }
  Say(quiet, "replay: " + std::to_string(out.verified) + " steps bit-identical; chain " +
                 ToHex(st.chain));
  return out;
}

}  // namespace trail::train
