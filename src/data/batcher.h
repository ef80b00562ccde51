// Micro-batches of a step for one logical rank: the rank's windows (RankWindows) in ascending
// order, micro_batch_windows at a time, each row L = the step's sequence length; a last, partial
// micro-batch is completed with padding rows (no targets).
#pragma once

#include <cstdint>

#include "data/batch_schedule.h"
#include "data/packing.h"
#include "data/stream.h"

namespace trail::data {

struct StepCounts {
  uint64_t windows = 0;
  int64_t input_tokens = 0, real_tokens = 0, target_tokens = 0;  // B_input, real, B_target
};

class Batcher {
 public:
  explicit Batcher(CanonicalStream& stream);

  const BatchSchedule& schedule() const { return schedule_; }
  int64_t NumMicroBatches(int64_t step, int64_t rank, int64_t ranks) const;
  void MicroBatch(int64_t step, int64_t rank, int64_t ranks, int64_t micro, PackedBatch& out);
  // Counts over the whole step (every rank): the loss normalizer is target_tokens.
  StepCounts CountStep(int64_t step);

 private:
  CanonicalStream& stream_;
  BatchSchedule schedule_;
  RawWindow scratch_;
};

}  // namespace trail::data
