#include "train/run_flops.h"

#include "data/batch_schedule.h"

namespace trail::train {

std::vector<LengthFlops> ScheduledFlops(const model::ModelConfig& c, const data::StreamConfig& s,
                                        int64_t steps) {
  std::vector<LengthFlops> out;
  for (const data::LengthTokens& t : data::ScheduledTokensByLength(s, 0, steps)) {
    out.push_back({t.seq_len, double(t.tokens), model::Cost(c, t.seq_len).flops_per_token});
  }
  return out;
}

double MeanFlopsPerToken(const model::ModelConfig& c, const data::StreamConfig& s, int64_t steps) {
  const std::vector<LengthFlops> phases = ScheduledFlops(c, s, steps);
  if (phases.size() <= 1) {
    return model::Cost(c, phases.empty() ? s.seq_len : phases[0].seq_len).flops_per_token;
  }
  double flops = 0, tokens = 0;
  for (const LengthFlops& p : phases) flops += p.tokens * p.flops_per_token, tokens += p.tokens;
  return flops / tokens;
}

}  // namespace trail::train
