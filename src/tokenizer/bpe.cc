#include "tokenizer/bpe.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/error.h"

namespace trail::tok {
namespace {

inline uint64_t MixKey(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

constexpr uint32_t kNoRank = UINT32_MAX;
constexpr size_t kShortPiece = 48;  // longer pieces use the heap-based merge loop
// Link values of EncodeLong's part list: no neighbour, and a part merged into its left one.
constexpr uint32_t kEnd = UINT32_MAX, kMerged = UINT32_MAX - 1;

}  // namespace

size_t StringHash::operator()(std::string_view s) const noexcept {
  // FNV-1a over 8-byte words then the tail: fast for the short strings tokens are.
  uint64_t h = 0xcbf29ce484222325ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
  return static_cast<size_t>(MixKey(h));
}

void TokenIndex::Build(const std::string* tokens, size_t n) {
  tokens_ = tokens;
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  const StringHash hash;
  for (uint32_t id = 0; id < n; ++id) {
    const std::string& t = tokens[id];
    if (t.empty()) continue;
    const uint64_t h = hash(t);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id == UINT32_MAX) {
        s = {static_cast<uint32_t>(h >> 32), id};
        break;
      }
      TRAIL_CHECK(!(s.tag == static_cast<uint32_t>(h >> 32) && tokens[s.id] == t),
                  "vocabulary has two ids for the same bytes (ids ", s.id, " and ", id, ")");
    }
  }
}

int64_t TokenIndex::Find(std::string_view s) const {
  const uint64_t h = StringHash()(s);
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id == UINT32_MAX) return -1;
    if (slot.tag == tag && tokens_[slot.id] == s) return slot.id;
  }
}

BpeModel::BpeModel(std::vector<std::string> tokens, bool ignore_merges)
    : tokens_(std::move(tokens)), ignore_merges_(ignore_merges) {
  index_.Build(tokens_.data(), tokens_.size());
  for (int b = 0; b < 256; ++b) {
    const int64_t id = index_.Find(std::string_view(reinterpret_cast<const char*>(&b), 1));
    TRAIL_CHECK(id >= 0, "vocabulary has no token for byte ", b,
                " (a byte-level BPE needs all 256)");
    byte_token_[b] = static_cast<uint32_t>(id);
  }
}

void BpeModel::AddMerge(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
  staged_.push_back({((uint64_t{left} << 32) | right) + 1, rank, merged});
}

void BpeModel::AddMergesFromRanks() {
  for (uint32_t id = 0; id < tokens_.size(); ++id) {
    const std::string& t = tokens_[id];
    for (size_t k = 1; k < t.size(); ++k) {
      const int64_t l = index_.Find(std::string_view(t).substr(0, k));
      if (l < 0) continue;
      const int64_t r = index_.Find(std::string_view(t).substr(k));
      if (r < 0) continue;
      AddMerge(static_cast<uint32_t>(l), static_cast<uint32_t>(r), id, id);
    }
  }
}

void BpeModel::Finalize() {
  size_t cap = 16;
  while (cap < staged_.size() * 2) cap <<= 1;
  table_.assign(cap, Pair{});
  mask_ = cap - 1;
  merge_count_ = 0;
  for (const Pair& p : staged_) {
    for (uint64_t i = MixKey(p.key) & mask_;; i = (i + 1) & mask_) {
      if (table_[i].key == 0) {
        table_[i] = p;
        ++merge_count_;
        break;
      }
      if (table_[i].key == p.key) {  // the same pair twice: the first (lowest) rank wins
        if (p.rank < table_[i].rank) table_[i] = p;
        break;
      }
    }
  }
  staged_.clear();
  staged_.shrink_to_fit();
  byte_pairs_.assign(1 << 16, RankMerged{kNoRank, 0});
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const Pair* p = FindPair(byte_token_[a], byte_token_[b]);
      if (p) byte_pairs_[a << 8 | b] = {p->rank, p->merged};
    }
  }
}

std::vector<BpeModel::Merge> BpeModel::Merges() const {
  std::vector<Merge> out;
  for (const Pair& p : table_) {
    if (p.key == 0) continue;
    const uint64_t k = p.key - 1;
    out.push_back({static_cast<uint32_t>(k >> 32), static_cast<uint32_t>(k), p.rank, p.merged});
  }
  std::sort(out.begin(), out.end(), [](const Merge& a, const Merge& b) {
    return a.rank != b.rank ? a.rank < b.rank
                            : (a.left != b.left ? a.left < b.left : a.right < b.right);
  });
  return out;
}

const BpeModel::Pair* BpeModel::FindPair(uint32_t left, uint32_t right) const {
  const uint64_t key = ((uint64_t{left} << 32) | right) + 1;
  for (uint64_t i = MixKey(key) & mask_;; i = (i + 1) & mask_) {
    const Pair& p = table_[i];
    if (p.key == key) return &p;
    if (p.key == 0) return nullptr;
  }
}

void BpeModel::EncodePiece(std::string_view piece, std::vector<uint32_t>& out) const {
  if (piece.empty()) return;
  if (ignore_merges_ || piece.size() == 1) {
    const int64_t id = index_.Find(piece);
    if (id >= 0) {
      out.push_back(static_cast<uint32_t>(id));
      return;
    }
  }
  EncodeByMerging(piece, out);
}

void BpeModel::EncodeByMerging(std::string_view piece, std::vector<uint32_t>& out) const {
  if (piece.size() > kShortPiece) {
    EncodeLong(piece, out);
    return;
  }
  // parts[i]: current token; rank[i]: rank of merging parts[i] and parts[i+1].
  uint32_t parts[kShortPiece], rank[kShortPiece], merged[kShortPiece];
  size_t n = piece.size();
  for (size_t i = 0; i < n; ++i) parts[i] = byte_token_[static_cast<unsigned char>(piece[i])];
  auto set_rank = [&](size_t i) {
    const Pair* p = FindPair(parts[i], parts[i + 1]);
    rank[i] = p ? p->rank : kNoRank;
    merged[i] = p ? p->merged : 0;
  };
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  for (size_t i = 0; i + 1 < n; ++i) {
    const RankMerged& p = byte_pairs_[bytes[i] << 8 | bytes[i + 1]];
    rank[i] = p.rank;
    merged[i] = p.merged;
  }
  while (n > 1) {
    size_t best = 0;
    uint32_t best_rank = kNoRank;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (rank[i] < best_rank) {
        best_rank = rank[i];
        best = i;
      }
    }
    if (best_rank == kNoRank) break;
    parts[best] = merged[best];
    for (size_t i = best + 1; i + 1 < n; ++i) {
      parts[i] = parts[i + 1];
      rank[i] = rank[i + 1];
      merged[i] = merged[i + 1];
    }
    --n;
    if (best + 1 < n) set_rank(best);
    if (best > 0) set_rank(best - 1);
  }
  out.insert(out.end(), parts, parts + n);
}

void BpeModel::EncodeLong(std::string_view piece, std::vector<uint32_t>& out) const {
  // The parts form a linked list over their first byte's position; candidate merges sit in a
  // min-heap of 8-byte keys (rank << 32 | position), so equal ranks merge leftmost first, as in
  // the short loop. A merge changes the pairs on both sides of it: the new ones are pushed and
  // the old entries stay behind. A popped entry is applied only if the pair now at its position
  // has its rank; since every current pair has an entry, the first such entry is the minimum
  // (rank, position) over the current pairs — the merge the definition takes next. At most
  // n + 2·merges < 3n entries: time O(n log n), memory 12n + 24n bytes.
  TRAIL_CHECK(piece.size() < kEnd, "a pre-tokenized piece of ", piece.size(),
              " bytes (more than 4 GiB): split the text");
  const uint32_t n = static_cast<uint32_t>(piece.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  std::vector<uint32_t> token(n), next(n), prev(n);
  std::vector<uint64_t> heap;
  heap.reserve(n + n / 2);
  for (uint32_t i = 0; i < n; ++i) {
    token[i] = byte_token_[bytes[i]];
    next[i] = i + 1 < n ? i + 1 : kEnd;
    prev[i] = i > 0 ? i - 1 : kEnd;
    if (i + 1 < n) {
      const uint32_t rank = byte_pairs_[bytes[i] << 8 | bytes[i + 1]].rank;
      if (rank != kNoRank) heap.push_back(uint64_t{rank} << 32 | i);
    }
  }
  const std::greater<uint64_t> later;  // std heaps are max-heaps; this makes the top the minimum
  std::make_heap(heap.begin(), heap.end(), later);
  auto push = [&](uint32_t i) {
    if (next[i] == kEnd) return;
    const Pair* p = FindPair(token[i], token[next[i]]);
    if (!p) return;
    heap.push_back(uint64_t{p->rank} << 32 | i);
    std::push_heap(heap.begin(), heap.end(), later);
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const uint64_t key = heap.back();
    heap.pop_back();
    const uint32_t i = static_cast<uint32_t>(key), r = next[i];
    if (r == kEnd || r == kMerged) continue;  // the last part, or merged into its left
    const Pair* p = FindPair(token[i], token[r]);
    if (!p || p->rank != key >> 32) continue;  // stale
    token[i] = p->merged;
    next[i] = next[r];
    next[r] = kMerged;
    if (next[i] != kEnd) prev[next[i]] = i;
    push(i);
    if (prev[i] != kEnd) push(prev[i]);
  }
  for (uint32_t i = 0; i != kEnd; i = next[i]) out.push_back(token[i]);
}

}  // namespace trail::tok
