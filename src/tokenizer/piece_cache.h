// A per-thread cache of piece -> token ids for one tokenizer: direct-mapped, fixed size, one
// cache line per slot, no allocation after the first use. A slot holds a piece of up to
// kMaxBytes bytes with up to kMaxIds ids; storing overwrites the slot the piece's hash selects,
// so frequent pieces stay (they come back at once) and a rare one costs one slot. The cache only
// saves work: a result is the same with or without it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace trail::tok {

class PieceCache {
 public:
  static constexpr size_t kMaxBytes = 22;
  static constexpr size_t kMaxIds = 8;

  // The cache of the calling thread for the tokenizer `owner` (emptied when the owner changes).
  static PieceCache& ForThread(uint64_t owner) {
    thread_local PieceCache cache;
    if (cache.owner_ != owner) {
      cache.slots_.assign(kSlots, Slot{});
      cache.owner_ = owner;
    }
    return cache;
  }

  // Appends the cached ids of piece (size <= kMaxBytes) to out; false when not cached.
  bool Lookup(std::string_view piece, uint64_t hash, std::vector<uint32_t>& out) const {
    const Slot& s = slots_[hash & (kSlots - 1)];
    if (s.hash != hash || s.bytes != piece.size() || s.ids == 0 ||
        std::memcmp(s.text, piece.data(), piece.size()) != 0) {
      return false;
    }
    out.insert(out.end(), s.id, s.id + s.ids);
    return true;
  }

  void Store(std::string_view piece, uint64_t hash, const uint32_t* ids, size_t n) {
    if (piece.size() > kMaxBytes || n == 0 || n > kMaxIds) return;
    Slot& s = slots_[hash & (kSlots - 1)];
    s.hash = hash;
    s.bytes = static_cast<uint8_t>(piece.size());
    s.ids = static_cast<uint8_t>(n);
    std::memcpy(s.text, piece.data(), piece.size());
    std::memcpy(s.id, ids, n * sizeof(uint32_t));
  }

 private:
  static constexpr size_t kSlots = 1 << 16;  // 4 MiB per thread
  struct alignas(64) Slot {
    uint64_t hash = 0;
    uint8_t bytes = 0, ids = 0;  // ids == 0: empty
    char text[kMaxBytes];
    uint32_t id[kMaxIds];
  };
  static_assert(sizeof(Slot) == 64);

  uint64_t owner_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace trail::tok
