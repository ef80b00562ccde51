#include "corpus/filters/quality_ngrams.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "core/le_bytes.h"
#include "core/mix.h"
#include "corpus/dedup/shingles.h"

namespace trail::corpus {
namespace {

// A word's 64-bit hash from a few fixed-size loads (words are short: a byte-at-a-time hash
// chains a multiply per byte): under 8 bytes, two overlapping loads (or three bytes) that
// together hold every byte, with the length; longer words 8 bytes at a time, the last load
// overlapping. Only equality of hashes matters (n-grams are counted by hash).
uint64_t WordHash(std::string_view s) {
  constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  if (n >= 8) {
    uint64_t h = n * kGolden;
    for (size_t i = 0; i + 8 < n; i += 8) h = Mix64(h ^ GetU64(p + i));
    return Mix64(h ^ GetU64(p + n - 8));
  }
  uint64_t v = 0;
  if (n >= 4) {
    v = uint64_t(GetU32(p)) << 32 | GetU32(p + n - 4);
  } else if (n > 0) {
    v = uint64_t(p[0]) << 16 | uint64_t(p[n / 2]) << 8 | p[n - 1];
  }
  return Mix64(v ^ (n * kGolden));
}

// Counts of 64-bit gram hashes: open addressing with linear probing, slots marked by a stamp
// so a reset (once per n-gram size of a document) costs nothing unless the size changes.
class GramCounter {
 public:
  struct Entry {
    uint64_t hash;
    uint32_t count, first;
    uint32_t stamp;
  };
  void Reset(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    if (cap > slots_.size()) {
      slots_.assign(cap, Entry{0, 0, 0, 0});
      stamp_ = 0;
    }
    mask_ = slots_.size() - 1;
    if (++stamp_ == 0) {  // stamps wrapped: clear for real
      for (Entry& e : slots_) e.stamp = 0;
      stamp_ = 1;
    }
  }
  // Counts h; returns its slot, so the caller can read the entry back without probing again.
  uint32_t Add(uint64_t h, uint32_t pos) {
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (e.stamp != stamp_) {
        e = Entry{h, 1, pos, stamp_};
        return static_cast<uint32_t>(i);
      }
      if (e.hash == h) {
        ++e.count;
        return static_cast<uint32_t>(i);
      }
    }
  }
  const Entry& At(uint32_t slot) const { return slots_[slot]; }
  // Hints that h's home slot is needed soon: fetching a few grams ahead hides most of a probe's
  // miss when the table is larger than L1.
  void Prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }
  void Trim() {
    if (slots_.size() > kKeptSlots) std::vector<Entry>().swap(slots_);
  }

 private:
  std::vector<Entry> slots_;
  size_t mask_ = 0;
  uint32_t stamp_ = 0;
};

std::string_view GramRuleNameSlow(const char* kind, int n);

// "gopher.<kind>_<n>gram_char_frac", made once per (kind, n) and kept for the process; the
// common sizes from a table built once (no lock per document), others through a locked map.
std::string_view GramRuleName(const char* kind, int n) {
  using Names = std::array<std::string, 33>;
  auto make = [](const char* k) {
    Names names;
    for (int i = 0; i < int(names.size()); ++i) {
      names[size_t(i)] = "gopher." + std::string(k) + "_" + std::to_string(i) + "gram_char_frac";
    }
    return names;
  };
  static const Names top = make("top"), dup = make("dup");
  if (n >= 0 && n < int(top.size())) {
    if (std::string_view(kind) == "top") return top[size_t(n)];
    if (std::string_view(kind) == "dup") return dup[size_t(n)];
  }
  return GramRuleNameSlow(kind, n);
}

std::string_view GramRuleNameSlow(const char* kind, int n) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::unique_ptr<const std::string>> names;
  const std::lock_guard<std::mutex> lock(mu);
  auto& name = names[{kind, n}];
  if (!name) {
    name = std::make_unique<const std::string>("gopher." + std::string(kind) + "_" +
                                               std::to_string(n) + "gram_char_frac");
  }
  return *name;
}

// The n-grams of a text's words, n growing: NgramHash is a left fold, so the hashes of n-grams
// extend those of (n-1)-grams by one word. N-grams are compared by hash (64 bits: collisions are
// negligible at document sizes); the character length of "w1 w2 ... wn" is carried along.
// Its arrays are the thread's, reused: one WordGrams per thread at a time.
class WordGrams {
 public:
  explicit WordGrams(const std::vector<std::string_view>& words)
      : word_hash_(Reused(Arrays().word_hash)),
        gram_(Reused(Arrays().gram)),
        first_count_(Reused(Arrays().first_count)),
        len_prefix_(Reused(Arrays().len_prefix)),
        items_(Reused(Arrays().items)),
        slots_(Reused(Arrays().slots)),
        candidates_(Reused(Arrays().candidates)) {
    word_hash_.resize(words.size());
    len_prefix_.assign(words.size() + 1, 0);
    for (size_t i = 0; i < words.size(); ++i) {
      word_hash_[i] = WordHash(words[i]);
      len_prefix_[i + 1] = len_prefix_[i] + words[i].size();
    }
  }
  ~WordGrams() {
    Release(word_hash_), Release(gram_), Release(first_count_), Release(len_prefix_);
    Release(items_), Release(slots_), Release(candidates_);
  }
  WordGrams(const WordGrams&) = delete;
  WordGrams& operator=(const WordGrams&) = delete;
  // Counts the n-grams gram(0 .. m-1); returns m. Then first_count(i) is the number of
  // occurrences of n-gram i at its first occurrence and 0 at the others, and repeated(i) says
  // whether n-gram i occurs more than once.
  //
  // After a smaller size k was counted, only n-grams whose k-grams are all repeated can
  // repeat, and every occurrence of such an n-gram is such a position too (the same words):
  // only those candidates are counted, the rest are unique. Sizes asked in ascending order
  // (as the rules do) thin out fast: a quarter of the KJV's 4-grams repeat, 2% of its 10-grams.
  size_t Count(size_t n, GramCounter& counter) {
    const size_t m = word_hash_.size() >= n ? word_hash_.size() - n + 1 : 0;
    if (n == gram_n_) return m;  // counted last
    if (gram_n_ == 0 || n < gram_n_) {
      Extend(n);
      first_count_.resize(m);
      if (m <= kPartitionAbove) {
        CountRange(nullptr, 0, m, counter);
      } else {
        CountPartitioned(nullptr, m, counter);
      }
    } else {
      FindCandidates(n - gram_n_, m);
      first_count_.assign(m, 1);  // a non-candidate is unique: its one occurrence is its first
      for (uint32_t i : candidates_) {
        for (size_t k = gram_n_; k < n; ++k) gram_[i] = Mix64(gram_[i] ^ word_hash_[i + k]);
      }
      grams_partial_ = true;  // the others' hashes stay at the smaller size
      gram_n_ = n;
      if (candidates_.size() <= kPartitionAbove) {
        items_.resize(candidates_.size());
        for (size_t c = 0; c < candidates_.size(); ++c)
          items_[c] = {gram_[candidates_[c]], candidates_[c]};
        CountRange(items_.data(), 0, items_.size(), counter);
      } else {
        CountPartitioned(candidates_.data(), candidates_.size(), counter);
      }
    }
    return m;
  }
  uint32_t first_count(size_t i) const { return first_count_[i] & ~kRepeatedBit; }
  bool repeated(size_t i) const { return (first_count_[i] & kRepeatedBit) != 0; }
  size_t chars(size_t i, size_t n) const { return len_prefix_[i + n] - len_prefix_[i] + (n - 1); }

 private:
  static constexpr uint32_t kRepeatedBit = 0x80000000u;
  // A document with more n-grams than this (a table larger than L2) counts them partition by
  // partition (by the hash's top bits), each in a table that stays in cache: a long document's
  // table is otherwise far larger than the caches and every probe misses.
  static constexpr size_t kPartitionAbove = size_t{1} << 15;
  static constexpr int kPartitionBits = 6;
  struct Item {
    uint64_t hash;
    uint32_t pos;
  };

  // Counts the n-grams items[b, e) (or, without items, positions b..e-1) and sets first_count_
  // for their positions. Positions ascend, so an n-gram's first entry is its first occurrence.
  void CountRange(const Item* items, size_t b, size_t e, GramCounter& counter) {
    auto hash = [&](size_t k) { return items ? items[k].hash : gram_[k]; };
    auto pos = [&](size_t k) { return items ? items[k].pos : static_cast<uint32_t>(k); };
    counter.Reset(e - b);
    std::vector<uint32_t>& slots = slots_;
    slots.resize(e - b);
    constexpr size_t kAhead = 16;
    for (size_t k = b; k < e; ++k) {
      if (k + kAhead < e) counter.Prefetch(hash(k + kAhead));
      slots[k - b] = counter.Add(hash(k), pos(k));
    }
    for (size_t k = b; k < e; ++k) {
      const GramCounter::Entry& en = counter.At(slots[k - b]);
      const uint32_t p = pos(k);
      first_count_[p] = (en.first == p ? en.count : 0) | (en.count > 1 ? kRepeatedBit : 0);
    }
  }

  // The n-grams at the given positions (ascending; nullptr: 0 .. count-1) distributed over
  // 2^kPartitionBits partitions by their hash's top bits (equal n-grams land together, in
  // ascending position), then each partition counted on its own.
  void CountPartitioned(const uint32_t* positions, size_t count, GramCounter& counter) {
    constexpr size_t kParts = size_t{1} << kPartitionBits;
    auto pos = [&](size_t k) { return positions ? positions[k] : static_cast<uint32_t>(k); };
    size_t begin[kParts + 1] = {};
    for (size_t k = 0; k < count; ++k) ++begin[(gram_[pos(k)] >> (64 - kPartitionBits)) + 1];
    for (size_t p = 0; p < kParts; ++p) begin[p + 1] += begin[p];
    size_t next[kParts];
    std::copy(begin, begin + kParts, next);
    std::vector<Item>& parts = Arrays().parts;
    parts.resize(count);
    for (size_t k = 0; k < count; ++k) {
      const uint64_t h = gram_[pos(k)];
      parts[next[h >> (64 - kPartitionBits)]++] = {h, pos(k)};
    }
    for (size_t p = 0; p < kParts; ++p) CountRange(parts.data(), begin[p], begin[p + 1], counter);
    Release(parts);
  }

  // The positions whose next d + 1 (gram_n_)-grams all repeat, ascending, below m.
  void FindCandidates(size_t d, size_t m) {
    candidates_.clear();
    size_t run = 0;  // repeated (gram_n_)-grams from position j on
    for (size_t j = first_count_.size(); j-- > 0;) {
      run = repeated(j) ? run + 1 : 0;
      if (j < m && run > d) candidates_.push_back(static_cast<uint32_t>(j));
    }
    std::reverse(candidates_.begin(), candidates_.end());
  }

  void Extend(size_t n) {
    if (gram_n_ == 0 || n < gram_n_ || grams_partial_) {
      grams_partial_ = false;
      gram_.resize(word_hash_.size());
      for (size_t i = 0; i < gram_.size(); ++i) gram_[i] = NgramHash(&word_hash_[i], 1);
      gram_n_ = 1;
    }
    for (; gram_n_ < n; ++gram_n_) {
      for (size_t i = 0; i + gram_n_ < word_hash_.size(); ++i)
        gram_[i] = Mix64(gram_[i] ^ word_hash_[i + gram_n_]);
    }
  }
  struct ThreadArrays {
    std::vector<uint64_t> word_hash, gram;
    std::vector<uint32_t> first_count, slots;
    std::vector<size_t> len_prefix;
    std::vector<Item> items, parts;
    std::vector<uint32_t> candidates;
  };
  static ThreadArrays& Arrays() {
    thread_local ThreadArrays a;
    return a;
  }
  std::vector<uint64_t>& word_hash_;
  std::vector<uint64_t>& gram_;
  std::vector<uint32_t>& first_count_;  // first_count(i), and kRepeatedBit
  std::vector<size_t>& len_prefix_;
  std::vector<Item>& items_;
  std::vector<uint32_t>& slots_;  // each n-gram's entry in the counter, while counting
  std::vector<uint32_t>& candidates_;
  // The size counted last (0: none yet): first_count_ holds its counts, and gram_ its n-grams'
  // hashes (the candidates' only, if partial).
  size_t gram_n_ = 0;
  bool grams_partial_ = false;
};

}  // namespace

void RepeatedNgramRules(const std::vector<std::string_view>& words, double n_chars,
                        const QualityConfig& cfg, std::vector<RuleResult>& out) {
  for (const auto* sizes : {&cfg.top_ngram_char_frac, &cfg.dup_ngram_char_frac}) {
    for (const auto& [n, frac] : *sizes) {
      TRAIL_CHECK(n >= 1, "quality: an n-gram rule needs n >= 1, got ", n);
    }
  }
  WordGrams grams(words);
  thread_local GramCounter counter;
  // A repeated n-gram starts with a repeated (n-1)-gram, so once some size has no repeat, no
  // larger one has: those sizes score 0 without being counted (most short documents repeat no
  // 5-gram, and the sizes asked for are usually 2-4 and 5-10).
  size_t unrepeated = SIZE_MAX;  // the smallest size known to have no repeated n-gram
  for (const auto& [n, frac] : cfg.top_ngram_char_frac) {
    // Only a repeated n-gram counts (a text of unique n-grams has no "top" repetition); its
    // characters are those of its first occurrence.
    size_t top_chars = 0;
    if (static_cast<size_t>(n) < unrepeated) {
      const size_t m = grams.Count(static_cast<size_t>(n), counter);
      bool repeated = false;
      for (size_t i = 0; i < m; ++i) {
        const uint32_t count = grams.first_count(i);
        if (count < 2) continue;
        repeated = true;
        top_chars = std::max(top_chars, grams.chars(i, n) * count);
      }
      if (!repeated) unrepeated = static_cast<size_t>(n);
    }
    const double top = static_cast<double>(top_chars);
    out.push_back({GramRuleName("top", n), top / n_chars, frac, top / n_chars <= frac});
  }
  for (const auto& [n, frac] : cfg.dup_ngram_char_frac) {
    // Word i is covered when a repeated n-gram starting at some j <= i reaches past it, i.e.
    // when i is below the end of the last repeated n-gram started so far.
    size_t dup_chars = 0;
    if (static_cast<size_t>(n) < unrepeated) {
      const size_t m = grams.Count(static_cast<size_t>(n), counter);
      size_t covered_end = 0;
      for (size_t i = 0; i < words.size(); ++i) {
        if (i < m && grams.repeated(i)) covered_end = i + static_cast<size_t>(n);
        if (i < covered_end) dup_chars += words[i].size();
      }
      if (covered_end == 0) unrepeated = static_cast<size_t>(n);
    }
    const double dup = static_cast<double>(dup_chars);
    out.push_back({GramRuleName("dup", n), dup / n_chars, frac, dup / n_chars <= frac});
  }
  counter.Trim();
}

}  // namespace trail::corpus
