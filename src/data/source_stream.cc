#include "data/source_stream.h"

#include <algorithm>

#include "core/error.h"
#include "core/philox.h"

namespace trail::data {
namespace {

constexpr size_t kEpochCache = 2, kOrderCache = 4, kBlockCache = 2;

// Stream ids of the seeded orders: a fixed mix of the source's name and the order's role, so a
// source's order does not depend on where it is listed in the manifest.
uint64_t OrderStream(uint64_t name_id, uint64_t role, uint64_t a, uint64_t b = 0) {
  return Mix64(Mix64(Mix64(name_id ^ Mix64(role)) ^ a) ^ (b + 0x9e3779b97f4a7c15ull));
}
constexpr uint64_t kRoleShards = 1, kRolePieces = 2, kRoleDraws = 3;

template <class T>
T* FindCached(std::list<T>& cache, auto&& match) {
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (match(*it)) {
      cache.splice(cache.begin(), cache, it);  // most recently used first
      return &cache.front();
    }
  }
  return nullptr;
}

}  // namespace

SourceStream::SourceStream(uint32_t index, const SourceSpec& spec,
                           std::vector<std::shared_ptr<const ShardReader>> shards,
                           const StreamConfig& cfg, const TokenizerSpec& tok)
    : index_(index),
      name_(spec.name),
      name_id_(StreamIdForName(spec.name.c_str())),
      sampling_(spec.sampling),
      cfg_(cfg),
      eos_(static_cast<int32_t>(tok.eos_id)),
      bos_(static_cast<int32_t>(tok.bos_id)),
      shards_(std::move(shards)) {
  const ChunkingPolicy& ch = cfg_.chunking;
  const bool cut = ch.max_tokens > 0;
  piece_prefix_.push_back(0);
  for (const auto& sh : shards_) {
    TRAIL_CHECK(sh->num_docs() < (1ull << 32), sh->path(), ": too many documents");
    std::vector<uint64_t> first;
    std::vector<uint32_t> owner;
    uint64_t pieces = 0, tokens = 0;
    if (cut) first.reserve(sh->num_docs() + 1);
    for (uint64_t d = 0; d < sh->num_docs(); ++d) {
      const uint64_t len = sh->doc_length(d);
      uint64_t chunks = 1;
      if (cut && len > ch.max_tokens) {
        const uint64_t stride = ch.max_tokens - ch.overlap;
        chunks = 1 + (len - ch.max_tokens + stride - 1) / stride;
      }
      if (cut) {
        first.push_back(pieces);
        owner.insert(owner.end(), chunks, static_cast<uint32_t>(d));
      }
      // Stream tokens of the document: its chunks (overlaps counted in each) plus EOS and BOS
      // marks (each on every chunk under the independent boundary, else once).
      const uint64_t stride = cut ? ch.max_tokens - ch.overlap : 0;
      const uint64_t chunk_tokens =
          chunks == 1 ? len : len + (chunks - 1) * (ch.max_tokens - stride);
      const uint64_t marks = ch.boundary == ChunkBoundary::kIndependent ? chunks : 1;
      const uint64_t eos = cfg_.append_eos ? marks : 0, bos = cfg_.prepend_bos ? marks : 0;
      tokens += chunk_tokens + eos + bos;
      pieces += chunks;
    }
    if (cut) first.push_back(pieces);
    doc_first_piece_.push_back(std::move(first));
    piece_doc_.push_back(std::move(owner));
    piece_prefix_.push_back(piece_prefix_.back() + pieces);
    shard_tokens_.push_back(tokens);
    epoch_tokens_ += tokens;
  }
  TRAIL_CHECK(epoch_tokens_ > 0, "source '", name_, "' has no tokens");
  total_tokens_ = spec.sampling == Sampling::kPermutation && spec.max_epochs > 0
                      ? spec.max_epochs * epoch_tokens_
                      : kUnlimited;
}

uint64_t SourceStream::num_windows(int64_t seq_len) const {
  if (total_tokens_ == kUnlimited) return kUnlimited;
  // Window j covers tokens [jL, jL+L]; every token but the first is a target in one window.
  const uint64_t L = static_cast<uint64_t>(seq_len);
  return total_tokens_ <= 1 ? 1 : (total_tokens_ - 1 + L - 1) / L;
}

SourceStream::Piece SourceStream::PieceOf(uint32_t shard, uint64_t local) const {
  if (piece_doc_[shard].empty()) return {shard, local, 0};
  const uint32_t doc = piece_doc_[shard][local];
  return {shard, doc, static_cast<uint32_t>(local - doc_first_piece_[shard][doc])};
}

uint64_t SourceStream::PieceBos(const Piece& pc) const {
  return PieceStartsWithBos(cfg_, pc.chunk) ? 1 : 0;
}

uint64_t SourceStream::PieceLength(const Piece& pc) const {
  const ChunkingPolicy& ch = cfg_.chunking;
  const uint64_t len = shards_[pc.shard]->doc_length(pc.doc);
  if (ch.max_tokens == 0) return len + (cfg_.append_eos ? 1 : 0) + PieceBos(pc);
  const uint64_t start = ChunkStart(ch, pc.chunk);
  const uint64_t chunk_len = ChunkLength(ch, len, pc.chunk);
  const bool last = start + chunk_len == len;
  const bool eos = cfg_.append_eos && (last || ch.boundary == ChunkBoundary::kIndependent);
  return chunk_len + (eos ? 1 : 0) + PieceBos(pc);
}

uint64_t SourceStream::Emit(const Piece& pc, uint64_t offset, uint64_t n, uint64_t pass,
                            RawWindow& out) {
  const ChunkingPolicy& ch = cfg_.chunking;
  const ShardReader& sh = *shards_[pc.shard];
  const DocRecord rec = sh.doc(pc.doc);
  const uint64_t start = ChunkStart(ch, pc.chunk);
  const uint64_t chunk_len = ChunkLength(ch, rec.length, pc.chunk);
  const uint64_t piece_len = PieceLength(pc);
  n = std::min(n, piece_len - offset);

  Segment seg;
  seg.source = index_;
  seg.shard = pc.shard;
  seg.doc = pc.doc;
  seg.chunk = pc.chunk;
  seg.piece_offset = offset;
  seg.window_offset = static_cast<uint64_t>(out.length);
  seg.length = n;
  seg.pass = pass;
  // The piece: [BOS] (offset 0, with prepend_bos), the chunk's tokens, [EOS] (last).
  const uint64_t bos = PieceBos(pc), doc_end = bos + chunk_len;
  seg.piece_bos = bos == 1;
  seg.ends_with_eos = piece_len > doc_end && offset + n == piece_len;
  const int32_t local_doc = static_cast<int32_t>(out.segments.size());
  out.segments.push_back(seg);

  const int64_t at = out.length;
  CopyPieceTokens(sh, {rec.token_start + start, chunk_len, bos, bos_, eos_}, offset, n,
                  out.tokens.data() + at);
  // Under the "once" overlap policy the first `overlap` tokens of a later chunk are context.
  const uint64_t context = (pc.chunk > 0 && ch.overlap_loss_once) ? ch.overlap : 0;
  const bool continuation = ch.boundary == ChunkBoundary::kContinuation;
  // Continuation positions count the document's stream tokens: its first piece's BOS shifts
  // every later piece by one.
  const uint64_t shift = continuation ? start + (cfg_.prepend_bos && pc.chunk > 0 ? 1 : 0) : 0;
  const int32_t pos0 = static_cast<int32_t>(offset + shift);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = offset + i;  // in the piece
    out.doc[at + i] = local_doc;
    out.target_ok[at + i] = k >= bos && k < bos + context ? 0 : 1;
    out.positions[at + i] = cfg_.positions == PositionMode::kWindow
                                ? static_cast<int32_t>(at + i)
                                : pos0 + static_cast<int32_t>(i);
  }
  out.length += static_cast<int64_t>(n);
  return n;
}

const SourceStream::EpochOrder& SourceStream::Epoch(uint64_t e) {
  if (auto* hit = FindCached(epochs_, [&](const EpochOrder& o) { return o.epoch == e; })) {
    return *hit;
  }
  EpochOrder o;
  o.epoch = e;
  const Permutation perm(shards_.size(), cfg_.seed, OrderStream(name_id_, kRoleShards, e));
  o.prefix.push_back(0);
  for (uint64_t i = 0; i < shards_.size(); ++i) {
    o.shards.push_back(static_cast<uint32_t>(perm(i)));
    o.prefix.push_back(o.prefix.back() + shard_tokens_[o.shards.back()]);
  }
  epochs_.push_front(std::move(o));
  if (epochs_.size() > kEpochCache) epochs_.pop_back();
  return epochs_.front();
}

const SourceStream::ShardOrder& SourceStream::Order(uint64_t e, uint32_t shard) {
  if (auto* hit = FindCached(
          orders_, [&](const ShardOrder& o) { return o.epoch == e && o.shard == shard; })) {
    return *hit;
  }
  ShardOrder o;
  o.epoch = e;
  o.shard = shard;
  const uint64_t n = piece_prefix_[shard + 1] - piece_prefix_[shard];
  const Permutation perm(n, cfg_.seed, OrderStream(name_id_, kRolePieces, e, shard));
  o.pieces.resize(n);
  o.prefix.resize(n + 1);
  o.prefix[0] = 0;
  const bool cut = cfg_.chunking.max_tokens > 0;
  const ShardReader& sh = *shards_[shard];
  const uint64_t marks = (cfg_.append_eos ? 1 : 0) + (cfg_.prepend_bos ? 1 : 0);  // EOS, BOS
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t piece = perm(i);
    o.pieces[i] = static_cast<uint32_t>(piece);
    const uint64_t len = cut ? PieceLength(PieceOf(shard, piece)) : sh.doc_length(piece) + marks;
    o.prefix[i + 1] = o.prefix[i] + len;
  }
  orders_.push_front(std::move(o));
  if (orders_.size() > kOrderCache) orders_.pop_back();
  return orders_.front();
}

const SourceStream::Block& SourceStream::DrawBlock(uint64_t b) {
  if (auto* hit = FindCached(blocks_, [&](const Block& o) { return o.block == b; })) return *hit;
  Block bl;
  bl.block = b;
  const uint64_t B = cfg_.replacement_block_tokens;
  const uint64_t pieces = num_pieces();
  const uint64_t stream = OrderStream(name_id_, kRoleDraws, b);
  bl.prefix.push_back(0);
  for (uint64_t i = 0; bl.prefix.back() < B; ++i) {
    const PhiloxBlock r = Philox4x32(cfg_.seed, stream, i);
    const uint64_t u = (static_cast<uint64_t>(r[1]) << 32) | r[0];
    const uint64_t g = static_cast<uint64_t>((static_cast<unsigned __int128>(u) * pieces) >> 64);
    const auto it = std::upper_bound(piece_prefix_.begin(), piece_prefix_.end(), g) - 1;
    const uint32_t shard = static_cast<uint32_t>(it - piece_prefix_.begin());
    const uint64_t len = PieceLength(PieceOf(shard, g - *it));
    bl.pieces.push_back(g);
    bl.prefix.push_back(std::min(B, bl.prefix.back() + len));
  }
  blocks_.push_front(std::move(bl));
  if (blocks_.size() > kBlockCache) blocks_.pop_back();
  return blocks_.front();
}

uint64_t SourceStream::Fill(uint64_t p, uint64_t n, RawWindow& out) {
  if (total_tokens_ != kUnlimited) n = p >= total_tokens_ ? 0 : std::min(n, total_tokens_ - p);
  return sampling_ == Sampling::kPermutation ? FillPermutation(p, n, out)
                                             : FillReplacement(p, n, out);
}

uint64_t SourceStream::FillPermutation(uint64_t p, uint64_t n, RawWindow& out) {
  uint64_t done = 0;
  while (done < n) {
    const uint64_t e = p / epoch_tokens_;
    uint64_t q = p % epoch_tokens_;
    const EpochOrder& eo = Epoch(e);
    const size_t slot =
        std::upper_bound(eo.prefix.begin(), eo.prefix.end(), q) - eo.prefix.begin() - 1;
    const uint32_t shard = eo.shards[slot];
    q -= eo.prefix[slot];
    const ShardOrder& so = Order(e, shard);
    size_t pos = std::upper_bound(so.prefix.begin(), so.prefix.end(), q) - so.prefix.begin() - 1;
    uint64_t off = q - so.prefix[pos];
    // Walk this shard's pieces in order; the next shard or epoch is located afresh.
    for (; pos < so.pieces.size() && done < n; ++pos, off = 0) {
      const uint64_t k = Emit(PieceOf(shard, so.pieces[pos]), off, n - done, e, out);
      done += k;
      p += k;
    }
  }
  return done;
}

uint64_t SourceStream::FillReplacement(uint64_t p, uint64_t n, RawWindow& out) {
  const uint64_t B = cfg_.replacement_block_tokens;
  uint64_t done = 0;
  while (done < n) {
    const uint64_t b = p / B, q = p % B;
    const Block& bl = DrawBlock(b);
    size_t i = std::upper_bound(bl.prefix.begin(), bl.prefix.end(), q) - bl.prefix.begin() - 1;
    uint64_t off = q - bl.prefix[i];
    for (; i < bl.pieces.size() && done < n; ++i, off = 0) {
      const uint64_t g = bl.pieces[i];
      const auto it = std::upper_bound(piece_prefix_.begin(), piece_prefix_.end(), g) - 1;
      const uint32_t shard = static_cast<uint32_t>(it - piece_prefix_.begin());
      // The block's last draw is cut at the block end.
      const uint64_t room = bl.prefix[i + 1] - bl.prefix[i] - off;
      const uint64_t k = Emit(PieceOf(shard, g - *it), off, std::min(n - done, room), b, out);
      done += k;
      p += k;
    }
  }
  return done;
}

}  // namespace trail::data
