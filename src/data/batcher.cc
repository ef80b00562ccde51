#include "data/batcher.h"

#include "core/error.h"

namespace trail::data {

Batcher::Batcher(CanonicalStream& stream)
    : stream_(stream), schedule_(stream.manifest().stream.schedule) {}

int64_t Batcher::NumMicroBatches(int64_t step, int64_t rank, int64_t ranks) const {
  const int64_t mb = stream_.manifest().stream.micro_batch_windows;
  const int64_t n =
      static_cast<int64_t>(RankWindows(schedule_.StepWindows(step), rank, ranks).size());
  return (n + mb - 1) / mb;
}

void Batcher::MicroBatch(int64_t step, int64_t rank, int64_t ranks, int64_t micro,
                         PackedBatch& out) {
  const StreamConfig& cfg = stream_.manifest().stream;
  const std::vector<uint64_t> mine = RankWindows(schedule_.StepWindows(step), rank, ranks);
  const int64_t mb = cfg.micro_batch_windows;
  TRAIL_CHECK(micro >= 0 && micro * mb < static_cast<int64_t>(mine.size()), "step ", step, " rank ",
              rank, "/", ranks, " has no micro-batch ", micro);
  out.Resize(mb, SeqLenAtStep(cfg, step));
  for (int64_t r = 0; r < mb; ++r) {
    const size_t i = static_cast<size_t>(micro * mb + r);
    if (i < mine.size()) {
      stream_.Window(mine[i], scratch_);
      PackRow(scratch_, cfg.semantics, out, r);
    } else {
      PackPaddingRow(out, r, stream_.pad_token());
    }
  }
}

StepCounts Batcher::CountStep(int64_t step) {
  const StreamConfig& cfg = stream_.manifest().stream;
  const WindowRange range = schedule_.StepWindows(step);
  StepCounts c;
  PackedBatch row;
  row.Resize(1, SeqLenAtStep(cfg, step));
  for (uint64_t w = range.begin; w < range.end; ++w) {
    row.input_tokens = row.real_tokens = row.target_tokens = 0;
    stream_.Window(w, scratch_);
    PackRow(scratch_, cfg.semantics, row, 0);
    ++c.windows;
    c.input_tokens += row.input_tokens;
    c.real_tokens += row.real_tokens;
    c.target_tokens += row.target_tokens;
  }
  return c;
}

}  // namespace trail::data
