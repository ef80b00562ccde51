// SourceStream::DocumentRuns: the inverse of Fill for one document. Fill walks positions to
// pieces; this walks the same orders (the cached epoch and shard orders, or the draw blocks) and
// keeps the positions whose piece belongs to the document, so both read one definition.
#include <algorithm>

#include "core/error.h"
#include "data/source_stream.h"

namespace trail::data {

std::vector<SourceStream::PieceRun> SourceStream::DocumentRuns(uint32_t shard, uint64_t doc,
                                                               uint64_t limit) {
  TRAIL_CHECK(shard < shards_.size() && doc < shards_[shard]->num_docs(), "source '", name_,
              "' has no document ", doc, " in shard ", shard);
  // The document's pieces, as local piece indices of its shard: [first, last).
  const bool cut = !doc_first_piece_[shard].empty();
  const uint64_t first = cut ? doc_first_piece_[shard][doc] : doc;
  const uint64_t last = cut ? doc_first_piece_[shard][doc + 1] : doc + 1;
  const uint64_t end = std::min(limit, total_tokens_);
  std::vector<PieceRun> runs;
  if (sampling_ == Sampling::kPermutation) {
    for (uint64_t e = 0; e * epoch_tokens_ < end; ++e) {
      const EpochOrder& eo = Epoch(e);
      const size_t slot = std::find(eo.shards.begin(), eo.shards.end(), shard) - eo.shards.begin();
      const uint64_t shard_begin = e * epoch_tokens_ + eo.prefix[slot];
      if (shard_begin >= end) continue;
      const ShardOrder& so = Order(e, shard);
      for (size_t pos = 0; pos < so.pieces.size(); ++pos) {
        if (so.pieces[pos] < first || so.pieces[pos] >= last) continue;
        const uint64_t begin = shard_begin + so.prefix[pos];
        if (begin >= end) continue;
        runs.push_back(
            {begin, so.prefix[pos + 1] - so.prefix[pos], PieceOf(shard, so.pieces[pos]).chunk, e});
      }
    }
    std::sort(runs.begin(), runs.end(),
              [](const PieceRun& a, const PieceRun& b) { return a.begin < b.begin; });
    return runs;
  }
  const uint64_t B = cfg_.replacement_block_tokens;
  const uint64_t g_first = piece_prefix_[shard] + first, g_last = piece_prefix_[shard] + last;
  for (uint64_t b = 0; b * B < end; ++b) {
    const Block& bl = DrawBlock(b);
    for (size_t i = 0; i < bl.pieces.size(); ++i) {
      if (bl.pieces[i] < g_first || bl.pieces[i] >= g_last) continue;
      const uint64_t begin = b * B + bl.prefix[i];
      if (begin >= end) continue;
      // A draw cut at the block's end is read only up to it.
      runs.push_back({begin, bl.prefix[i + 1] - bl.prefix[i],
                      PieceOf(shard, bl.pieces[i] - piece_prefix_[shard]).chunk, b});
    }
  }
  return runs;
}

}  // namespace trail::data
