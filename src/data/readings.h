// Where a training document was read: from a stretch of one document of a source's shard to
// every window (and so every step) of the canonical stream that held any of its tokens, for
// the steps a run trained (docs/data.md §9). The inverse of CanonicalStream::Window, computed
// from the same orders: SourceStream::DocumentRuns finds the stream positions of the document's
// pieces in every pass, MixtureSchedule::WindowsReading the windows over them, and each window
// is then assembled forward and its segments read, so a reading is exactly what
// `trail data inspect --window W` shows for that window.
#pragma once

#include <cstdint>
#include <vector>

#include "data/stream.h"

namespace trail::data {

struct TokenRange {  // document tokens [begin, end)
  uint64_t begin = 0, end = 0;
};

// Identifies one training document: its source, its shard's index in the source's list, and its
// index in the shard.
struct DocumentRef {
  uint32_t source = 0, shard = 0;
  uint64_t doc = 0;
};

// One window's read of the stretch.
struct Reading {
  uint64_t window = 0;
  int64_t step = 0;
  uint64_t pass = 0;           // the epoch (permutation sampling) or draw block (replacement)
  uint32_t chunk = 0;          // the document's piece
  TokenRange tokens;           // the stretch's document tokens the window holds
  uint64_t window_offset = 0;  // index of the first of them in the window
  // How many of them are loss-bearing in this window: at window index i >= 1 with a valid label
  // at i - 1 (docs/data.md §5). The rest are context only (a window's first token; the overlap
  // of a later chunk under overlap_loss "once"; every token of a piece read only as the last,
  // shared token of a window).
  uint64_t targets = 0;
};

// Every reading of `range` of document `ref` by windows of steps [0, steps), ordered by window
// then window offset. A stretch is read more than once when the source wraps (epochs), draws
// its piece again (replacement) or when chunks overlap.
std::vector<Reading> ReadDocument(CanonicalStream& stream, const DocumentRef& ref, TokenRange range,
                                  int64_t steps);

}  // namespace trail::data
