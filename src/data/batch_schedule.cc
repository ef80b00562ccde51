#include "data/batch_schedule.h"

#include <algorithm>

#include "core/error.h"

namespace trail::data {

BatchSchedule::BatchSchedule(std::vector<BatchPhase> phases) : phases_(std::move(phases)) {
  TRAIL_CHECK(!phases_.empty() && phases_[0].from_step == 0, "batch schedule must start at step 0");
  first_window_.push_back(0);
  for (size_t i = 0; i < phases_.size(); ++i) {
    TRAIL_CHECK(phases_[i].windows >= 1, "batch schedule phase ", i, " has no windows");
    if (i + 1 < phases_.size()) {
      TRAIL_CHECK(phases_[i + 1].from_step > phases_[i].from_step,
                  "batch schedule steps must increase");
      first_window_.push_back(
          first_window_.back() +
          static_cast<uint64_t>(phases_[i + 1].from_step - phases_[i].from_step) *
              static_cast<uint64_t>(phases_[i].windows));
    }
  }
}

uint64_t BatchSchedule::WindowsAt(int64_t step) const {
  return StepWindows(step).end - StepWindows(step).begin;
}

WindowRange BatchSchedule::StepWindows(int64_t step) const {
  TRAIL_CHECK(step >= 0, "negative step ", step);
  size_t i = std::upper_bound(phases_.begin(), phases_.end(), step,
                              [](int64_t s, const BatchPhase& p) { return s < p.from_step; }) -
             phases_.begin() - 1;
  const uint64_t per = static_cast<uint64_t>(phases_[i].windows);
  const uint64_t begin =
      first_window_[i] + static_cast<uint64_t>(step - phases_[i].from_step) * per;
  return {begin, begin + per};
}

int64_t BatchSchedule::StepOfWindow(uint64_t w) const {
  const size_t i =
      std::upper_bound(first_window_.begin(), first_window_.end(), w) - first_window_.begin() - 1;
  return phases_[i].from_step +
         static_cast<int64_t>((w - first_window_[i]) / static_cast<uint64_t>(phases_[i].windows));
}

std::vector<uint64_t> RankWindows(WindowRange step, int64_t rank, int64_t ranks) {
  TRAIL_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, "rank ", rank, " of ", ranks,
              " is not a valid logical rank");
  const uint64_t K = static_cast<uint64_t>(ranks), k = static_cast<uint64_t>(rank);
  std::vector<uint64_t> out;
  uint64_t w = step.begin + (k + K - step.begin % K) % K;
  for (; w < step.end; w += K) out.push_back(w);
  return out;
}

std::vector<LengthTokens> ScheduledTokensByLength(const StreamConfig& c, int64_t from, int64_t to) {
  // Between consecutive batch or length phase starts, windows per step and L are constant: each
  // such stretch adds (steps) · windows · L, so the cost is O(phases), not O(steps).
  std::vector<int64_t> cuts = {from, to};
  for (const BatchPhase& p : c.schedule) cuts.push_back(p.from_step);
  for (const SeqLenPhase& p : c.seq_len_phases) cuts.push_back(p.from_step);
  std::sort(cuts.begin(), cuts.end());
  const BatchSchedule schedule(c.schedule);
  std::vector<LengthTokens> out;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int64_t a = std::max(cuts[i], from), b = std::min(cuts[i + 1], to);
    if (a >= b) continue;
    const int64_t L = SeqLenAtStep(c, a);
    auto it =
        std::find_if(out.begin(), out.end(), [&](const LengthTokens& t) { return t.seq_len == L; });
    if (it == out.end()) it = out.insert(out.end(), LengthTokens{L, 0});
    it->tokens += uint64_t(b - a) * schedule.WindowsAt(a) * static_cast<uint64_t>(L);
  }
  return out;
}

uint64_t ScheduledTokens(const StreamConfig& c, int64_t from, int64_t to) {
  uint64_t n = 0;
  for (const LengthTokens& t : ScheduledTokensByLength(c, from, to)) n += t.tokens;
  return n;
}

}  // namespace trail::data
