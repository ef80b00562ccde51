// FLOPs of a run's schedule. FLOPs per token (6N plus the attention term) depend on the window
// length, so under a sequence-length curriculum a run's FLOPs are summed per length phase.
#pragma once

#include <cstdint>
#include <vector>

#include "data/stream_config.h"
#include "model/config.h"

namespace trail::train {

struct LengthFlops {
  int64_t seq_len = 0;
  double tokens = 0;           // input positions of the steps at this length
  double flops_per_token = 0;  // model::Cost at this length
};

// Per window length in order of first use over steps [0, steps); none when steps <= 0.
std::vector<LengthFlops> ScheduledFlops(const model::ModelConfig& c, const data::StreamConfig& s,
                                        int64_t steps);

// Σ tokens · flops_per_token over those lengths divided by Σ tokens: model::Cost at stream.seq_len
// exactly when the steps use one length (or none).
double MeanFlopsPerToken(const model::ModelConfig& c, const data::StreamConfig& s, int64_t steps);

}  // namespace trail::train
