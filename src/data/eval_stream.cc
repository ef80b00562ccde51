#include "data/eval_stream.h"

#include <algorithm>

#include "core/error.h"

namespace trail::data {

EvalStream::EvalStream(const Manifest& m, const std::string& split, const std::string& domain,
                       const StreamOptions& opt)
    : L_(m.stream.seq_len),
      append_eos_(m.stream.append_eos),
      eos_(static_cast<int32_t>(m.tokenizer.eos_id)),
      bos_marks_(m.stream.prepend_bos ? 1 : 0),
      bos_(static_cast<int32_t>(m.tokenizer.bos_id)),
      positions_(m.stream.positions) {
  const TokenizerSpec& t = m.tokenizer;
  pad_ = static_cast<int32_t>(t.pad_id >= 0 ? t.pad_id : t.eos_id >= 0 ? t.eos_id : 0);
  TRAIL_CHECK(split == "validation" || split == "test", "unknown split '", split,
              "' (validation or test)");
  const auto& sets = split == "validation" ? m.validation : m.test;
  const EvalSet* set = nullptr;
  for (const EvalSet& e : sets) {
    if (e.domain == domain) set = &e;
  }
  TRAIL_CHECK(set != nullptr, m.path, ": no ", split, " set for domain '", domain, "'");
  shards_ = OpenShards(m, set->shards, opt);
  const ChunkingPolicy& ch = m.stream.chunking;
  const uint64_t piece =
      ch.max_tokens > 0 && ch.boundary == ChunkBoundary::kIndependent ? ch.max_tokens : UINT64_MAX;
  window_prefix_.push_back(0);
  for (uint32_t h = 0; h < shards_.size(); ++h) {
    for (uint64_t d = 0; d < shards_[h]->num_docs(); ++d) {
      const uint64_t doc_len = shards_[h]->doc_length(d);
      for (uint64_t start = 0; start == 0 || start < doc_len; start += piece) {
        const uint64_t len = std::min(piece, doc_len - start);
        const bool eos = append_eos_ && start + len == doc_len;
        const uint64_t n = bos_marks_ + len + (eos ? 1 : 0);
        const uint64_t windows = n <= 1 ? 1 : (n - 1 + L_ - 1) / L_;
        pieces_.push_back({h, static_cast<uint32_t>(piece == UINT64_MAX ? 0 : start / piece), d,
                           start, len, eos});
        window_prefix_.push_back(window_prefix_.back() + windows);
        if (piece == UINT64_MAX) break;
      }
    }
  }
}

void EvalStream::Window(uint64_t i, RawWindow& out) const {
  TRAIL_CHECK(i < num_windows(), "evaluation window ", i, " of ", num_windows());
  out.Reset(L_ + 1);
  out.index = i;
  const size_t j = std::upper_bound(window_prefix_.begin(), window_prefix_.end(), i) -
                   window_prefix_.begin() - 1;
  const Piece& p = pieces_[j];
  const uint32_t h = p.shard;
  const uint64_t d = p.doc;
  const ShardReader& sh = *shards_[h];
  const DocRecord rec = sh.doc(d);
  // The piece: [BOS], its document tokens, [EOS]; this window holds [start, start + len).
  const uint64_t bos = bos_marks_, n = bos + p.length + (p.eos ? 1 : 0);
  const uint64_t start = (i - window_prefix_[j]) * static_cast<uint64_t>(L_);  // in the piece
  const uint64_t len = std::min<uint64_t>(L_ + 1, n - start);
  CopyPieceTokens(sh, {rec.token_start + p.start, p.length, bos, bos_, eos_}, start, len,
                  out.tokens.data());
  for (int64_t k = 0; k <= L_; ++k) {
    const bool real = k < static_cast<int64_t>(len);
    if (!real) out.tokens[k] = pad_;
    out.doc[k] = 0;
    out.target_ok[k] = real ? 1 : 0;
    out.positions[k] = static_cast<int32_t>(positions_ == PositionMode::kWindow ? k : start + k);
  }
  out.length = static_cast<int64_t>(len);
  Segment seg;
  seg.shard = h;
  seg.doc = d;
  seg.chunk = p.chunk;
  seg.piece_offset = start;
  seg.length = len;
  seg.ends_with_eos = p.eos && start + len == n;
  seg.piece_bos = bos == 1;
  out.segments.push_back(seg);
}

}  // namespace trail::data
