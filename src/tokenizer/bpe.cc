#include "tokenizer/bpe.h"

#include <algorithm>
#include <cstring>
#include <queue>

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
  // A linked list of parts and a heap of candidate merges ordered by (rank, position); stale
  // heap entries are skipped when popped.
  const size_t n = piece.size();
  std::vector<uint32_t> token(n);
  std::vector<int64_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    token[i] = byte_token_[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1 < n ? static_cast<int64_t>(i + 1) : -1;
    prev[i] = static_cast<int64_t>(i) - 1;
  }
  struct Cand {
    uint32_t rank;
    size_t pos;
    uint32_t left, right, merged;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push = [&](size_t i) {
    if (next[i] < 0) return;
    const Pair* p = FindPair(token[i], token[next[i]]);
    if (p) heap.push({p->rank, i, token[i], token[next[i]], p->merged});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Cand c = heap.top();
    heap.pop();
    if (!alive[c.pos] || next[c.pos] < 0 || token[c.pos] != c.left ||
        token[next[c.pos]] != c.right) {
      continue;
    }
    const size_t r = static_cast<size_t>(next[c.pos]);
    token[c.pos] = c.merged;
    alive[r] = false;
    next[c.pos] = next[r];
    if (next[r] >= 0) prev[next[r]] = static_cast<int64_t>(c.pos);
    push(c.pos);
    if (prev[c.pos] >= 0) push(static_cast<size_t>(prev[c.pos]));
  }
  for (int64_t i = 0; i >= 0; i = next[i]) out.push_back(token[i]);
}

}  // namespace trail::tok
