#include "corpus/filters/quality.h"

#include "core/le_bytes.h"
#include "corpus/filters/quality_ngrams.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>

namespace trail::corpus {
namespace {

// Byte classes: white space (' ', \t, \n, \r, \f, \v); ASCII punctuation as the "C" locale's
// ispunct (! through /, : through @, [ through `, { through ~); a letter (ASCII, or any byte >=
// 0x80: part of a UTF-8 letter or symbol). One table lookup per byte, not the locale calls or
// chains of comparisons: they run for every byte of every document.
enum : uint8_t { kSpace = 1, kPunct = 2, kLetter = 4 };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    uint8_t k = 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') k |= kSpace;
    if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
        (c >= '{' && c <= '~'))
      k |= kPunct;
    if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) k |= kLetter;
    t[size_t(c)] = k;
  }
  return t;
}();
uint8_t ClassOf(char c) { return kByteClass[static_cast<unsigned char>(c)]; }
bool IsSpace(char c) { return (ClassOf(c) & kSpace) != 0; }
bool IsAlpha(char c) { return (ClassOf(c) & kLetter) != 0; }

// The high bit of each byte of the result is set where that byte of w equals c; exact (no
// false positives from borrows): the eight-bytes-at-a-time scans below look for rare bytes.
uint64_t BytesEqual(uint64_t w, uint8_t c) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  const uint64_t t = w ^ (0x0101010101010101ull * c);
  return ~(((t & kLow7) + kLow7) | t | kLow7);
}

// Calls fn(i), ascending, for each position i of s where mask(8 bytes) marks a byte (as
// BytesEqual does), reading s eight bytes at a time; the last few bytes are read zero-padded
// and marks past the end are dropped.
template <class Mask, class Fn>
void ForEachMarkedByte(std::string_view s, Mask&& mask, Fn&& fn) {
  // (Byte i of a little-endian word is bits 8i..8i+7: le_bytes.h requires such a host.)
  for (size_t base = 0; base < s.size(); base += 8) {
    uint64_t w = 0;
    const size_t n = std::min<size_t>(8, s.size() - base);
    if (n == 8) {
      w = GetU64(reinterpret_cast<const uint8_t*>(s.data() + base));  // one load, not a call
    } else {
      std::memcpy(&w, s.data() + base, n);
    }
    uint64_t m = mask(w);
    if (n < 8) m &= (uint64_t{1} << (8 * n)) - 1;
    for (; m != 0; m &= m - 1) fn(base + static_cast<size_t>(std::countr_zero(m)) / 8);
  }
}

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
    return sw.size() == w.size() && std::equal(w.begin(), w.end(), sw.begin(),
                                               [](char x, char y) { return AsciiLower(x) == y; });
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
  Add(out, "gopher.min_avg_word_length", avg, cfg.min_avg_word_length,
      avg >= cfg.min_avg_word_length);
  Add(out, "gopher.max_avg_word_length", avg, cfg.max_avg_word_length,
      avg <= cfg.max_avg_word_length);
  const double hashes = static_cast<double>(Count(text, "#")) / v.safe_words;
  Add(out, "gopher.hash_word_ratio", hashes, cfg.max_symbol_word_ratio,
      hashes <= cfg.max_symbol_word_ratio);
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

void GopherDuplicateLines(const TextView& v, const QualityConfig& cfg,
                          std::vector<RuleResult>& out) {
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

void C4Document(const TextView& v, const QualityConfig& cfg, std::vector<RuleResult>& out) {
  const std::string_view text = v.text;
  if (cfg.c4_lorem_ipsum) {  // "lorem ipsum" in any ASCII case, without a lowered copy
    constexpr std::string_view kLorem = "lorem ipsum";
    bool lorem = false;
    // Candidates: every 'l' or 'L' (the bytes c with c | 0x20 == 'l').
    ForEachMarkedByte(
        text, [](uint64_t w) { return BytesEqual(w | 0x2020202020202020ull, 'l'); },
        [&](size_t i) {
          lorem = lorem || (i + kLorem.size() <= text.size() &&
                            std::equal(kLorem.begin(), kLorem.end(), text.begin() + i,
                                       [](char want, char c) { return AsciiLower(c) == want; }));
        });
    Add(out, "c4.lorem_ipsum", lorem, 0, !lorem);
  }
  if (cfg.c4_curly_bracket) {
    const bool curly = text.find('{') != std::string_view::npos;
    Add(out, "c4.curly_bracket", curly, 0, !curly);
  }
  // A sentence ends at '.', '!' or '?' followed by white space or the end of the text.
  size_t ends = 0;
  ForEachMarkedByte(
      text, [](uint64_t w) { return BytesEqual(w, '.') | BytesEqual(w, '!') | BytesEqual(w, '?'); },
      [&](size_t i) { ends += i + 1 == text.size() || IsSpace(text[i + 1]) ? 1 : 0; });
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
    RepeatedNgramRules(v.words, v.n_chars, cfg, out);
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
