#include "corpus/quality.h"

#include "corpus/shingles.h"

#include "core/mix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace trail::corpus {
namespace {

// Byte classes: white space (' ', \t, \n, \r, \f, \v); ASCII punctuation as the "C" locale's
// ispunct (! through /, : through @, [ through `, { through ~); a letter (ASCII, or any byte >=
// 0x80: part of a UTF-8 letter or symbol); a sentence end ('.', '!', '?'). One table lookup per
// byte, not the locale calls or chains of comparisons: they run for every byte of every document.
enum : uint8_t { kSpace = 1, kPunct = 2, kSentenceEnd = 4, kLetter = 8 };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    uint8_t k = 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') k |= kSpace;
    if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')) k |= kPunct;
    if (c == '.' || c == '!' || c == '?') k |= kSentenceEnd;
    if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) k |= kLetter;
    t[size_t(c)] = k;
  }
  return t;
}();
uint8_t ClassOf(char c) { return kByteClass[static_cast<unsigned char>(c)]; }
bool IsSpace(char c) { return (ClassOf(c) & kSpace) != 0; }
bool IsAlpha(char c) { return (ClassOf(c) & kLetter) != 0; }

// Calls fn(token, punct) with every token: a run of punctuation (punct true) or a run of other
// non-space bytes.
template <class Fn>
void ForEachToken(std::string_view s, Fn&& fn) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size()) break;
    const uint8_t kind = ClassOf(s[i]) & kPunct;  // the token goes on while space|punct is this
    size_t j = i + 1;
    while (j < s.size() && (ClassOf(s[j]) & (kSpace | kPunct)) == kind) ++j;
    fn(s.substr(i, j - i), kind != 0);
    i = j;
  }
}

// std::tolower in the "C" locale, without the locale call.
char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

void SplitLines(std::string_view s, std::vector<std::string_view>& out) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t e = s.find('\n', start);
    if (e == std::string_view::npos) e = s.size();
    out.push_back(s.substr(start, e - start));
    if (e == s.size()) break;
    start = e + 1;
  }
  if (!out.empty() && out.back().empty() && s.size() > 0) out.pop_back();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

size_t Count(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string_view::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

// The per-thread tables below: one grown for a long document is not kept once it is done, so
// between documents a worker holds at most this many slots per table (~400 KB).
constexpr size_t kKeptSlots = 16384;

// Per-thread vectors reused from document to document (a fresh one per document cost a
// malloc and free each); one grown past 16 KiB for a long document is released, so a worker
// keeps about 128 KiB of them between documents (the memory-budget test counts it).
template <class T>
std::vector<T>& Reused(std::vector<T>& v) {
  v.clear();
  return v;
}
template <class T>
void Release(std::vector<T>& v) {
  if (v.capacity() * sizeof(T) > (size_t{16} << 10)) std::vector<T>().swap(v);
}

// (duplicate elements, their characters): every occurrence after the first counts. Exact
// string equality, through a flat table of the views reused per thread (no node per element).
std::pair<size_t, size_t> Duplicates(const std::vector<std::string_view>& xs) {
  thread_local std::vector<std::pair<std::string_view, uint32_t>> slots;  // (view, stamp)
  thread_local uint32_t stamp = 0;
  size_t cap = 16;
  while (cap < 2 * xs.size()) cap <<= 1;
  if (cap > slots.size()) {
    slots.assign(cap, {std::string_view(), 0});
    stamp = 0;
  }
  if (++stamp == 0) {
    for (auto& sl : slots) sl.second = 0;
    stamp = 1;
  }
  const size_t mask = slots.size() - 1;
  size_t n = 0, chars = 0;
  for (std::string_view x : xs) {
    for (size_t i = std::hash<std::string_view>()(x) & mask;; i = (i + 1) & mask) {
      if (slots[i].second != stamp) {
        slots[i] = {x, stamp};
        break;
      }
      if (slots[i].first == x) {
        ++n;
        chars += x.size();
        break;
      }
    }
  }
  if (slots.size() > kKeptSlots) std::vector<std::pair<std::string_view, uint32_t>>().swap(slots);
  return {n, chars};
}

uint64_t BytesHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
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
  // Hints that h's home slot is needed soon: a long document's table is far larger than the
  // caches, and fetching a few grams ahead hides most of each probe's miss.
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

void Add(std::vector<RuleResult>& out, const char* rule, double value, double threshold,
         bool pass) {
  out.push_back({rule, value, threshold, pass});
}

}  // namespace

namespace {

std::vector<std::string_view>& ThreadWords() {
  thread_local std::vector<std::string_view> v;
  return v;
}
std::vector<std::string_view>& ThreadLines() {
  thread_local std::vector<std::string_view> v;
  return v;
}

// What several rule families read: the text's words (tokens that are not all punctuation), its
// lines and the denominators, each clamped to at least 1. The word and line lists are the
// thread's, reused: one TextView per thread at a time.
struct TextView {
  explicit TextView(std::string_view t)
      : text(t), words(Reused(ThreadWords())), lines(Reused(ThreadLines())) {
    SplitLines(t, lines);
    // About one word per 6 bytes of prose: a short text's words without regrowth (capped, so a
    // long one without spaces does not reserve what it never uses).
    words.reserve(std::min<size_t>(t.size() / 6 + 1, 1 << 16));
    ForEachToken(t, [&](std::string_view tok, bool punct) {
      if (!punct) words.push_back(tok);  // (a token is all punctuation or has none)
    });
    n_words = static_cast<double>(words.size());
    safe_words = std::max(1.0, n_words);
    n_lines = std::max<double>(1, lines.size());
    n_chars = std::max<double>(1, t.size());
  }
  ~TextView() { Release(words), Release(lines); }
  TextView(const TextView&) = delete;
  TextView& operator=(const TextView&) = delete;
  std::string_view text;
  std::vector<std::string_view>& words;
  std::vector<std::string_view>& lines;
  double n_words, safe_words, n_lines, n_chars;
};

bool IsStopWord(std::string_view w, const std::vector<std::string>& stop_words) {
  return std::any_of(stop_words.begin(), stop_words.end(), [&](const std::string& sw) {
    return sw.size() == w.size() &&
           std::equal(w.begin(), w.end(), sw.begin(), [](char x, char y) { return AsciiLower(x) == y; });
  });
}

void GopherQuality(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  const std::string_view text = v.text;
  Add(out, "gopher.min_doc_words", v.n_words, cfg.min_doc_words, v.n_words >= cfg.min_doc_words);
  Add(out, "gopher.max_doc_words", v.n_words, cfg.max_doc_words, v.n_words <= cfg.max_doc_words);
  // Counts and lengths summed as integers: the same values as double sums (exact below 2^53),
  // without a floating-point add's latency chained through every word.
  size_t len_sum = 0;
  for (std::string_view w : v.words) len_sum += w.size();
  const double avg = v.words.empty() ? 0 : static_cast<double>(len_sum) / v.n_words;
  Add(out, "gopher.min_avg_word_length", avg, cfg.min_avg_word_length, avg >= cfg.min_avg_word_length);
  Add(out, "gopher.max_avg_word_length", avg, cfg.max_avg_word_length, avg <= cfg.max_avg_word_length);
  const double hashes = static_cast<double>(Count(text, "#")) / v.safe_words;
  Add(out, "gopher.hash_word_ratio", hashes, cfg.max_symbol_word_ratio, hashes <= cfg.max_symbol_word_ratio);
  const double ellipses =
      static_cast<double>(Count(text, "...") + Count(text, "\xe2\x80\xa6")) / v.safe_words;
  Add(out, "gopher.ellipsis_word_ratio", ellipses, cfg.max_symbol_word_ratio,
      ellipses <= cfg.max_symbol_word_ratio);
  double bullets = 0, end_ellipsis = 0;
  for (std::string_view l : v.lines) {
    const std::string_view t = Trim(l);
    bullets += t.rfind("\xe2\x80\xa2", 0) == 0 || t.rfind("- ", 0) == 0 ? 1 : 0;
    end_ellipsis += (t.size() >= 3 && t.substr(t.size() - 3) == "...") ||
                            (t.size() >= 3 && t.substr(t.size() - 3) == "\xe2\x80\xa6")
                        ? 1
                        : 0;
  }
  Add(out, "gopher.bullet_lines_ratio", bullets / v.n_lines, cfg.max_bullet_lines_ratio,
      bullets / v.n_lines <= cfg.max_bullet_lines_ratio);
  Add(out, "gopher.ellipsis_lines_ratio", end_ellipsis / v.n_lines, cfg.max_ellipsis_lines_ratio,
      end_ellipsis / v.n_lines <= cfg.max_ellipsis_lines_ratio);
  size_t alpha = 0, stops = 0, longest_stop = 0;
  for (const std::string& sw : cfg.stop_words) longest_stop = std::max(longest_stop, sw.size());
  for (std::string_view w : v.words) {
    alpha += std::any_of(w.begin(), w.end(), IsAlpha) ? 1 : 0;
    if (w.size() > longest_stop) continue;  // (a word longer than every stop word is none)
    stops += IsStopWord(w, cfg.stop_words) ? 1 : 0;
  }
  const double alpha_ratio = static_cast<double>(alpha) / v.safe_words;
  Add(out, "gopher.alpha_words_ratio", alpha_ratio, cfg.min_alpha_words_ratio,
      alpha_ratio >= cfg.min_alpha_words_ratio);
  const double stop_count = static_cast<double>(stops);
  Add(out, "gopher.stop_words", stop_count, cfg.min_stop_words, stop_count >= cfg.min_stop_words);
}

// Paragraphs: the trimmed text split at runs of two or more newlines.
void Paragraphs(std::string_view text, std::vector<std::string_view>& paras) {
  const std::string_view t = Trim(text);
  size_t start = 0;
  while (start <= t.size()) {
    size_t e = t.find("\n\n", start);
    if (e == std::string_view::npos) e = t.size();
    paras.push_back(t.substr(start, e - start));
    if (e == t.size()) break;
    start = e;
    while (start < t.size() && t[start] == '\n') ++start;
  }
}

void GopherDuplicateLines(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  thread_local std::vector<std::string_view> paras;
  Paragraphs(v.text, Reused(paras));
  const auto [dup_para, dup_para_chars] = Duplicates(paras);
  const double n_paras = std::max<double>(1, paras.size());
  Release(paras);
  Add(out, "gopher.dup_para_frac", dup_para / n_paras, cfg.dup_para_frac,
      dup_para / n_paras <= cfg.dup_para_frac);
  Add(out, "gopher.dup_para_char_frac", dup_para_chars / v.n_chars, cfg.dup_para_char_frac,
      dup_para_chars / v.n_chars <= cfg.dup_para_char_frac);
  const auto [dup_lines, dup_line_chars] = Duplicates(v.lines);
  Add(out, "gopher.dup_line_frac", dup_lines / v.n_lines, cfg.dup_line_frac,
      dup_lines / v.n_lines <= cfg.dup_line_frac);
  Add(out, "gopher.dup_line_char_frac", dup_line_chars / v.n_chars, cfg.dup_line_char_frac,
      dup_line_chars / v.n_chars <= cfg.dup_line_char_frac);
}

// The n-grams of a text's words, n growing: NgramHash is a left fold, so the hashes of n-grams
// extend those of (n-1)-grams by one word. N-grams are compared by hash (64 bits: collisions are
// negligible at document sizes); the character length of "w1 w2 ... wn" is carried along.
// Its arrays are the thread's, reused: one WordGrams per thread at a time.
class WordGrams {
 public:
  explicit WordGrams(const std::vector<std::string_view>& words)
      : word_hash_(Reused(Arrays().word_hash)), gram_(Reused(Arrays().gram)),
        first_count_(Reused(Arrays().first_count)), len_prefix_(Reused(Arrays().len_prefix)),
        items_(Reused(Arrays().items)), slots_(Reused(Arrays().slots)) {
    word_hash_.resize(words.size());
    len_prefix_.assign(words.size() + 1, 0);
    for (size_t i = 0; i < words.size(); ++i) {
      word_hash_[i] = BytesHash(words[i]);
      len_prefix_[i + 1] = len_prefix_[i] + words[i].size();
    }
  }
  ~WordGrams() {
    Release(word_hash_), Release(gram_), Release(first_count_), Release(len_prefix_);
    Release(items_), Release(slots_);
  }
  WordGrams(const WordGrams&) = delete;
  WordGrams& operator=(const WordGrams&) = delete;
  // Counts the n-grams gram(0 .. m-1); returns m. Then first_count(i) is the number of
  // occurrences of n-gram i at its first occurrence and 0 at the others, and repeated(i) says
  // whether n-gram i occurs more than once.
  size_t Count(size_t n, GramCounter& counter) {
    Extend(n);
    const size_t m = word_hash_.size() >= n ? word_hash_.size() - n + 1 : 0;
    first_count_.resize(m);
    if (m <= kPartitionAbove) {
      CountRange(nullptr, 0, m, counter);
    } else {
      CountPartitioned(m, counter);
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

  // The n-grams distributed over 2^kPartitionBits partitions by their hash's top bits (equal
  // n-grams land together, in ascending position), then each partition counted on its own.
  void CountPartitioned(size_t m, GramCounter& counter) {
    constexpr size_t kParts = size_t{1} << kPartitionBits;
    size_t begin[kParts + 1] = {};
    for (size_t i = 0; i < m; ++i) ++begin[(gram_[i] >> (64 - kPartitionBits)) + 1];
    for (size_t p = 0; p < kParts; ++p) begin[p + 1] += begin[p];
    size_t next[kParts];
    std::copy(begin, begin + kParts, next);
    items_.resize(m);
    for (size_t i = 0; i < m; ++i) {
      items_[next[gram_[i] >> (64 - kPartitionBits)]++] = {gram_[i], static_cast<uint32_t>(i)};
    }
    for (size_t p = 0; p < kParts; ++p) CountRange(items_.data(), begin[p], begin[p + 1], counter);
  }

  void Extend(size_t n) {
    if (gram_n_ == 0 || n < gram_n_) {
      gram_.resize(word_hash_.size());
      for (size_t i = 0; i < gram_.size(); ++i) gram_[i] = NgramHash(&word_hash_[i], 1);
      gram_n_ = 1;
    }
    for (; gram_n_ < n; ++gram_n_) {
      for (size_t i = 0; i + gram_n_ < word_hash_.size(); ++i) gram_[i] = Mix64(gram_[i] ^ word_hash_[i + gram_n_]);
    }
  }
  struct ThreadArrays {
    std::vector<uint64_t> word_hash, gram;
    std::vector<uint32_t> first_count, slots;
    std::vector<size_t> len_prefix;
    std::vector<Item> items;
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
  size_t gram_n_ = 0;
};

void GopherNgrams(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  WordGrams grams(v.words);
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
    out.push_back({GramRuleName("top", n), top / v.n_chars, frac, top / v.n_chars <= frac});
  }
  for (const auto& [n, frac] : cfg.dup_ngram_char_frac) {
    // Word i is covered when a repeated n-gram starting at some j <= i reaches past it, i.e.
    // when i is below the end of the last repeated n-gram started so far.
    size_t dup_chars = 0;
    if (static_cast<size_t>(n) < unrepeated) {
      const size_t m = grams.Count(static_cast<size_t>(n), counter);
      size_t covered_end = 0;
      for (size_t i = 0; i < v.words.size(); ++i) {
        if (i < m && grams.repeated(i)) covered_end = i + static_cast<size_t>(n);
        if (i < covered_end) dup_chars += v.words[i].size();
      }
      if (covered_end == 0) unrepeated = static_cast<size_t>(n);
    }
    const double dup = static_cast<double>(dup_chars);
    out.push_back({GramRuleName("dup", n), dup / v.n_chars, frac, dup / v.n_chars <= frac});
  }
  counter.Trim();
}

void C4Document(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  const std::string_view text = v.text;
  if (cfg.c4_lorem_ipsum) {  // "lorem ipsum" in any ASCII case, without a lowered copy
    constexpr std::string_view kLorem = "lorem ipsum";
    bool lorem = false;
    for (size_t i = 0; !lorem && i + kLorem.size() <= text.size(); ++i) {
      if (AsciiLower(text[i]) != 'l') continue;
      lorem = std::equal(kLorem.begin(), kLorem.end(), text.begin() + i,
                         [](char want, char c) { return AsciiLower(c) == want; });
    }
    Add(out, "c4.lorem_ipsum", lorem, 0, !lorem);
  }
  if (cfg.c4_curly_bracket) {
    const bool curly = text.find('{') != std::string_view::npos;
    Add(out, "c4.curly_bracket", curly, 0, !curly);
  }
  // A sentence ends at '.', '!' or '?' followed by white space or the end of the text; counted
  // without a branch per byte (kSentenceEnd shifted onto kSpace).
  static_assert(kSentenceEnd >> 2 == kSpace);
  size_t ends = 0;
  const size_t n = text.size();
  for (size_t i = 0; i + 1 < n; ++i) ends += (ClassOf(text[i]) >> 2) & ClassOf(text[i + 1]) & kSpace;
  if (n > 0) ends += (ClassOf(text[n - 1]) >> 2) & kSpace;
  const double sentences = static_cast<double>(ends);
  Add(out, "c4.min_sentences", sentences, cfg.c4_min_sentences, sentences >= cfg.c4_min_sentences);
}

void FineWeb(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  size_t punct_lines = 0, short_count = 0;
  thread_local std::vector<std::string_view> stripped;
  Reused(stripped);
  for (std::string_view l : v.lines) {
    const std::string_view t = Trim(l);
    if (t.empty()) continue;
    stripped.push_back(t);
    const char last = t.back();
    const bool punct = last == '.' || last == '!' || last == '?' || last == '"' || last == '\'';
    punct_lines += punct ? 1 : 0;
    short_count += t.size() <= static_cast<size_t>(cfg.fineweb_short_line_length) ? 1 : 0;
  }
  const double punct_end = static_cast<double>(punct_lines);
  const double short_lines = static_cast<double>(short_count);
  const double ne = std::max<double>(1, stripped.size());
  Add(out, "fineweb.line_punct_ratio", punct_end / ne, cfg.fineweb_line_punct_ratio,
      punct_end / ne >= cfg.fineweb_line_punct_ratio);
  Add(out, "fineweb.short_line_ratio", short_lines / ne, cfg.fineweb_short_line_ratio,
      short_lines / ne <= cfg.fineweb_short_line_ratio);
  const auto [dup_l, dup_c] = Duplicates(stripped);
  (void)dup_l;
  size_t line_chars = 0;
  for (std::string_view t : stripped) line_chars += t.size();
  Release(stripped);
  const double char_dup = dup_c / std::max<double>(1, line_chars);
  Add(out, "fineweb.char_dup_ratio", char_dup, cfg.fineweb_char_dup_ratio,
      char_dup <= cfg.fineweb_char_dup_ratio);
  const double newline_ratio = static_cast<double>(Count(v.text, "\n")) / v.safe_words;
  Add(out, "fineweb.newline_ratio", newline_ratio, cfg.fineweb_newline_ratio,
      newline_ratio <= cfg.fineweb_newline_ratio);
}

}  // namespace

std::vector<RuleResult> QualityRules(std::string_view text, const QualityConfig& cfg) {
  std::vector<RuleResult> out;
  out.reserve(48);  // every rule's result: no regrowth
  const TextView v(text);
  GopherQuality(v, cfg, out);
  if (cfg.repetition) {
    GopherDuplicateLines(v, cfg, out);
    GopherNgrams(v, cfg, out);
  }
  C4Document(v, cfg, out);
  FineWeb(v, cfg, out);
  return out;
}

bool PassesAll(const std::vector<RuleResult>& rules) {
  return std::all_of(rules.begin(), rules.end(), [](const RuleResult& r) { return r.pass; });
}

std::string FirstFailure(const std::vector<RuleResult>& rules) {
  for (const RuleResult& r : rules) {
    if (!r.pass) return std::string(r.rule);
  }
  return "";
}

}  // namespace trail::corpus
