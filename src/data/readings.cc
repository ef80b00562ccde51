#include "data/readings.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/batch_schedule.h"
#include "data/packing.h"

namespace trail::data {
namespace {

struct ChunkSpan {
  uint64_t start = 0, length = 0;  // document tokens of the chunk
  uint64_t bos = 0;                // 1 when its piece starts with a BOS
};

ChunkSpan SpanOf(const StreamConfig& c, uint64_t doc_length, uint32_t chunk) {
  return {ChunkStart(c.chunking, chunk), ChunkLength(c.chunking, doc_length, chunk),
          PieceStartsWithBos(c, chunk) ? 1u : 0u};
}

// The windows below `window_limit` over the stream positions of `range` in each piece read.
std::set<uint64_t> CandidateWindows(CanonicalStream& stream, const DocumentRef& ref,
                                    TokenRange range, uint64_t window_limit) {
  SourceStream& src = stream.source(ref.source);
  const StreamConfig& c = stream.manifest().stream;
  const uint64_t doc_length = src.shard(ref.shard).doc_length(ref.doc);
  // The source's stream positions the windows [0, window_limit) reach: up to the last
  // window's last token.
  const uint64_t reached = stream.mixture().OffsetsBefore(window_limit)[ref.source] + 1;
  std::set<uint64_t> windows;
  for (const auto& run : src.DocumentRuns(ref.shard, ref.doc, reached)) {
    const ChunkSpan s = SpanOf(c, doc_length, run.chunk);
    const uint64_t lo = std::max(range.begin, s.start);
    const uint64_t hi = std::min(range.end, s.start + s.length);
    if (lo >= hi) continue;
    const uint64_t begin = run.begin + s.bos + (lo - s.start);
    const uint64_t end = std::min(run.begin + run.length, run.begin + s.bos + (hi - s.start));
    if (begin >= end) continue;  // a draw cut at its block's end before the stretch
    for (uint64_t w : stream.mixture().WindowsReading(ref.source, begin, end, window_limit)) {
      windows.insert(w);
    }
  }
  return windows;
}

// The window's readings of the stretch, one per segment of the document that holds any of it.
void ReadWindow(const RawWindow& win, const DocumentRef& ref, TokenRange range,
                const StreamConfig& c, uint64_t doc_length, int64_t step,
                std::vector<Reading>& out) {
  for (const Segment& seg : win.segments) {
    if (seg.source != ref.source || seg.shard != ref.shard || seg.doc != ref.doc) continue;
    const ChunkSpan s = SpanOf(c, doc_length, seg.chunk);
    Reading r;
    r.window = win.index;
    r.step = step;
    r.pass = seg.pass;
    r.chunk = seg.chunk;
    uint64_t held = 0;
    for (uint64_t i = 0; i < seg.length; ++i) {
      const uint64_t k = seg.piece_offset + i;           // offset in the piece
      if (k < s.bos || k >= s.bos + s.length) continue;  // the BOS or EOS mark
      const uint64_t t = s.start + (k - s.bos);
      if (t < range.begin || t >= range.end) continue;
      const int64_t at = static_cast<int64_t>(seg.window_offset + i);
      if (held++ == 0) {
        r.tokens.begin = t;
        r.window_offset = static_cast<uint64_t>(at);
      }
      r.tokens.end = t + 1;
      const bool target = at >= 1 && LabelValid(c.semantics, win.doc.data(), win.target_ok.data(),
                                                at - 1, win.length);
      r.targets += target ? 1 : 0;
    }
    if (held > 0) out.push_back(r);
  }
}

}  // namespace

std::vector<Reading> ReadDocument(CanonicalStream& stream, const DocumentRef& ref, TokenRange range,
                                  int64_t steps) {
  TRAIL_CHECK(ref.source < stream.num_sources(), "no source ", ref.source, " in the manifest");
  const SourceStream& src = stream.source(ref.source);
  TRAIL_CHECK(ref.shard < src.num_shards() && ref.doc < src.shard(ref.shard).num_docs(), "source '",
              src.name(), "' has no document ", ref.doc, " in shard ", ref.shard);
  const uint64_t doc_length = src.shard(ref.shard).doc_length(ref.doc);
  range.end = std::min(range.end, doc_length);
  std::vector<Reading> out;
  if (steps <= 0 || range.begin >= range.end) return out;
  const StreamConfig& c = stream.manifest().stream;
  const BatchSchedule schedule(c.schedule);
  const uint64_t limit = std::min(schedule.StepWindows(steps).begin, stream.num_windows());
  RawWindow win;
  for (uint64_t w : CandidateWindows(stream, ref, range, limit)) {
    stream.Window(w, win);
    ReadWindow(win, ref, range, c, doc_length, schedule.StepOfWindow(w), out);
  }
  return out;
}

}  // namespace trail::data
