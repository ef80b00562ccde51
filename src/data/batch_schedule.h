// Which windows a training step consumes, and which of them each logical rank owns.
// Step s consumes the contiguous windows [first(s), first(s) + windows(s)) given by the phased
// batch schedule; logical data-parallel rank k of K owns the windows w of that range with
// w mod K == k (ascending). Neither depends on how many processes run the ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "data/stream_config.h"

namespace trail::data {

struct WindowRange {
  uint64_t begin = 0, end = 0;
};

class BatchSchedule {
 public:
  explicit BatchSchedule(std::vector<BatchPhase> phases);
  uint64_t WindowsAt(int64_t step) const;
  WindowRange StepWindows(int64_t step) const;
  int64_t StepOfWindow(uint64_t w) const;  // the step that consumes window w

 private:
  std::vector<BatchPhase> phases_;
  std::vector<uint64_t> first_window_;  // first window of each phase
};

std::vector<uint64_t> RankWindows(WindowRange step, int64_t rank, int64_t ranks);

// Input positions the schedule gives steps [from, to): Σ windows(s) · L(s), per window length in
// order of first use, and in all (B_input summed, padding windows at a stream's end included).
struct LengthTokens {
  int64_t seq_len = 0;
  uint64_t tokens = 0;
};
std::vector<LengthTokens> ScheduledTokensByLength(const StreamConfig& c, int64_t from, int64_t to);
uint64_t ScheduledTokens(const StreamConfig& c, int64_t from, int64_t to);

}  // namespace trail::data
