// A byte-level BPE model: tokens are byte strings; a piece of text is encoded by starting from
// one token per byte and repeatedly merging the adjacent pair with the lowest merge rank (the
// leftmost on ties) until no pair has a rank. This is both tiktoken's rule (rank of the merged
// token) and Hugging Face's (rank = index in the merges list); the loaders fill the pair table
// accordingly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trail::tok {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept;
};

// Token bytes -> id: open addressing over the model's token strings (one probe is usually one
// cache line plus the token's inline bytes), several times faster than a node-based map on the
// encoder's hot path.
class TokenIndex {
 public:
  // Indexes tokens[0, n); the strings must outlive the index and not move (a std::vector's
  // buffer survives moving the vector).
  void Build(const std::string* tokens, size_t n);  // skips empty (unused) ids
  int64_t Find(std::string_view s) const;           // -1 when absent

 private:
  struct Slot {
    uint32_t tag = 0;          // high hash bits
    uint32_t id = UINT32_MAX;  // UINT32_MAX = empty
  };
  const std::string* tokens_ = nullptr;
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
};

class BpeModel {
 public:
  // tokens[id] = the id's bytes (ids without bytes, e.g. reserved gaps, are empty).
  BpeModel(std::vector<std::string> tokens, bool ignore_merges);

  // Declares that merging `left` and `right` gives `merged`, with priority `rank` (lower first).
  void AddMerge(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged);
  // tiktoken semantics: every pair of tokens whose concatenation is a token merges into it,
  // with that token's rank (its id).
  void AddMergesFromRanks();
  void Finalize();  // builds the pair table; call after the merges are added

  size_t size() const { return tokens_.size(); }
  const std::string& bytes(uint32_t id) const { return tokens_[id]; }
  int64_t FindToken(std::string_view bytes) const { return index_.Find(bytes); }
  bool ignore_merges() const { return ignore_merges_; }
  size_t num_merges() const { return merge_count_; }
  struct Merge {
    uint32_t left, right, rank, merged;
  };
  std::vector<Merge> Merges() const;  // every pair of the table, by rank then left then right

  // Appends the ids of one piece to out.
  void EncodePiece(std::string_view piece, std::vector<uint32_t>& out) const;
  // The same, for a caller that already found the piece is not a single token.
  void EncodeByMerging(std::string_view piece, std::vector<uint32_t>& out) const;

 private:
  struct Pair {
    uint64_t key = 0;  // (left << 32 | right) + 1; 0 = empty slot
    uint32_t rank = 0, merged = 0;
  };
  const Pair* FindPair(uint32_t left, uint32_t right) const;
  void EncodeLong(std::string_view piece, std::vector<uint32_t>& out) const;

  std::vector<std::string> tokens_;
  TokenIndex index_;
  uint32_t byte_token_[256];
  bool ignore_merges_;
  std::vector<Pair> staged_;  // merges before Finalize
  std::vector<Pair> table_;   // open addressing, power-of-two size
  // The merges of two byte tokens, dense by (first byte << 8 | second byte): a piece's first
  // round of pair lookups stays in a 512 KiB table instead of probing the large one.
  struct RankMerged {
    uint32_t rank, merged;
  };
  std::vector<RankMerged> byte_pairs_;
  uint64_t mask_ = 0;
  size_t merge_count_ = 0;
};

}  // namespace trail::tok
