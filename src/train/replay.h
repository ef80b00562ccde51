// Replay of a recorded trajectory segment: the steps between two checkpoints of a run executed
// again from the first one and compared, record by record, with what the run recorded. The
// audit layer builds its step-level verdicts on this.
#pragma once

#include <cstdint>
#include <string>

namespace trail::train {

struct ReplayResult {
  int64_t verified = 0;   // steps whose records matched
  int64_t diverged = -1;  // the first step that did not, or -1
  std::string difference; // which field, expected and actual
};

// Replays the trajectory segment that starts at checkpoint `from_step` (the newest but one when
// < 0) up to the next checkpoint or the end of the recorded trajectory, comparing each step's
// record; stops at the first difference. Throws trail::Error on unusable input.
ReplayResult ReplaySegment(const std::string& run_dir, const std::string& manifest_path,
                           int64_t from_step, bool quiet);

}  // namespace trail::train
