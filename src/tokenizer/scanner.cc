#include "tokenizer/scanner.h"

#include <array>
#include <vector>

#include "core/utf8.h"
#include "tokenizer/code_point_map.h"
#include "tokenizer/patterns.h"
#include "tokenizer/unicode.h"

namespace trail::tok {
namespace {

// Class bits of a code point.
enum : uint8_t {
  kLetter = 1,   // \p{L}
  kNumber = 2,   // \p{N}
  kSpace = 4,    // \s (White_Space)
  kNewline = 8,  // [\r\n]
  kUpper = 16,   // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
  kLower = 32,   // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
};
// A code point of none of the first three classes is o200k's "other", [^\s\p{L}\p{N}].

uint8_t ClassOf(char32_t cp) {
  using G = GeneralCategory;
  const G g = CategoryOf(cp);
  uint8_t f = 0;
  const bool mark = g == G::kMn || g == G::kMc || g == G::kMe;
  if (g == G::kLu || g == G::kLl || g == G::kLt || g == G::kLm || g == G::kLo) f |= kLetter;
  if (g == G::kNd || g == G::kNl || g == G::kNo) f |= kNumber;
  if (IsWhiteSpace(cp)) f |= kSpace;
  if (cp == '\r' || cp == '\n') f |= kNewline;
  if (g == G::kLu || g == G::kLt || g == G::kLm || g == G::kLo || mark) f |= kUpper;
  if (g == G::kLl || g == G::kLm || g == G::kLo || mark) f |= kLower;
  return f;
}

// Class bits of every code point (ASCII also directly), built once from the pinned Unicode data.
struct ClassTable {
  std::array<uint8_t, 128> ascii{};
  CodePointMap<uint8_t> classes{ClassOf};
  // What a case-insensitive contraction letter matches: fold['s' - 'a'] = {S, s, U+017F}.
  std::array<std::vector<char32_t>, 26> fold;

  ClassTable() {
    for (char32_t c = 0; c < 128; ++c) ascii[c] = ClassOf(c);
    for (char letter : std::string_view("dlmrstve")) fold[letter - 'a'] = CaseFoldClass(letter);
  }
};

const ClassTable& Classes() {
  static const ClassTable table;
  return table;
}

struct Char {
  uint8_t cls;
  uint8_t len;  // bytes
  char32_t cp;
};

// The code point at text[pos] (valid UTF-8) with its class bits.
inline Char At(const ClassTable& t, std::string_view text, size_t pos) {
  const auto b = static_cast<unsigned char>(text[pos]);
  if (b < 0x80) return {t.ascii[b], 1, b};
  size_t len;
  const char32_t cp = DecodeValidUtf8(text.data() + pos, len);
  return {t.classes[cp], static_cast<uint8_t>(len), cp};
}

class Scan {
 public:
  explicit Scan(std::string_view text) : t_(Classes()), text_(text), n_(text.size()) {}

  Char At(size_t pos) const { return tok::At(t_, text_, pos); }

  // End of the run of characters having any of `bits`, from pos.
  size_t RunOf(size_t pos, uint8_t bits) const {
    while (pos < n_) {
      const Char c = At(pos);
      if (!(c.cls & bits)) break;
      pos += c.len;
    }
    return pos;
  }
  // End of the run of [^\s\p{L}\p{N}] from pos.
  size_t RunOfOther(size_t pos) const {
    while (pos < n_) {
      const Char c = At(pos);
      if (c.cls & (kLetter | kNumber | kSpace)) break;
      pos += c.len;
    }
    return pos;
  }
  // End of up to `max` characters having `bits`, from pos.
  size_t UpTo(size_t pos, uint8_t bits, int max) const {
    for (int k = 0; k < max && pos < n_; ++k) {
      const Char c = At(pos);
      if (!(c.cls & bits)) break;
      pos += c.len;
    }
    return pos;
  }
  // End of a run of ASCII bytes in `set` from pos.
  size_t RunOfBytes(size_t pos, std::string_view set) const {
    while (pos < n_ && set.find(text_[pos]) != std::string_view::npos) ++pos;
    return pos;
  }

  // Length of 's|'t|'re|'ve|'m|'ll|'d at pos (0 if none); case-insensitive per simple case
  // folding when `fold` ('s also matches 'S and U+017F LATIN SMALL LETTER LONG S).
  size_t Contraction(size_t pos, bool fold) const {
    if (pos + 1 >= n_ || text_[pos] != '\'') return 0;
    const Char c = At(pos + 1);
    auto is = [&](const Char& x, char lower) {
      if (x.cp == static_cast<char32_t>(lower)) return true;
      if (!fold) return false;
      for (char32_t f : t_.fold[lower - 'a']) {
        if (x.cp == f) return true;
      }
      return false;
    };
    if (is(c, 's') || is(c, 't') || is(c, 'm') || is(c, 'd')) return 1 + c.len;
    const size_t p2 = pos + 1 + c.len;
    if (p2 >= n_) return 0;
    const Char d = At(p2);
    if ((is(c, 'r') || is(c, 'v')) && is(d, 'e')) return 1 + c.len + d.len;
    if (is(c, 'l') && is(d, 'l')) return 1 + c.len + d.len;
    return 0;
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ at pos, where text[pos] is white space. Within the maximal
  // white-space run: the first alternative ends after the run's last [\r\n] (the greedy \s*
  // gives back characters until one is [\r\n]); the second takes the run but its last character
  // unless the run ends the text (the lookahead needs white space or the end after it); the
  // third takes the single character that is left.
  size_t Whitespace(size_t pos, bool newlines) const {
    size_t end = pos, last_start = pos, after_newline = 0;
    while (end < n_) {
      const Char c = At(end);
      if (!(c.cls & kSpace)) break;
      last_start = end;
      end += c.len;
      if (c.cls & kNewline) after_newline = end;
    }
    if (newlines && after_newline) return after_newline - pos;
    if (end == n_) return end - pos;
    if (last_start > pos) return last_start - pos;
    return end - pos;
  }

  // The tail shared by cl100k and o200k: ` ?[^\s\p{L}\p{N}]+[<trailing>]*`, else the
  // white-space alternatives (with \s*[\r\n]+), at pos holding c.
  size_t OtherOrWhitespace(size_t pos, const Char& c, std::string_view trailing) const {
    constexpr uint8_t kNotOther = kLetter | kNumber | kSpace;
    size_t start = pos;
    if (c.cp == ' ' && pos + 1 < n_ && !(At(pos + 1).cls & kNotOther)) start = pos + 1;
    if (!(At(start).cls & kNotOther)) return RunOfBytes(RunOfOther(start), trailing) - pos;
    return Whitespace(pos, true);
  }

  size_t Gpt2(size_t pos) const;
  size_t Cl100k(size_t pos) const;
  size_t O200k(size_t pos) const;

 private:
  size_t O200kLetters(size_t start, bool alt1) const;

  const ClassTable& t_;
  std::string_view text_;
  size_t n_;
};

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t Scan::Gpt2(size_t pos) const {
  if (const size_t k = Contraction(pos, false)) return k;
  const Char c = At(pos);
  // ' ?' takes the space only when the class run follows it.
  const Char next = c.cp == ' ' && pos + 1 < n_ ? At(pos + 1) : Char{kSpace, 0, 0};
  const size_t start = next.len ? pos + 1 : pos;
  const uint8_t cls = next.len ? next.cls : c.cls;
  if (cls & kLetter) return RunOf(start, kLetter) - pos;
  if (cls & kNumber) return RunOf(start, kNumber) - pos;
  if (!(cls & kSpace)) return RunOfOther(start) - pos;
  return Whitespace(pos, false);
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+
size_t Scan::Cl100k(size_t pos) const {
  if (const size_t k = Contraction(pos, true)) return k;
  const Char c = At(pos);
  if (c.cls & kLetter) return RunOf(pos, kLetter) - pos;
  if (!(c.cls & (kNewline | kNumber)) && pos + c.len < n_ && (At(pos + c.len).cls & kLetter)) {
    return RunOf(pos + c.len, kLetter) - pos;
  }
  if (c.cls & kNumber) return UpTo(pos, kNumber, 3) - pos;
  return OtherOrWhitespace(pos, c, "\r\n");
}

// One of o200k's two letter alternatives from `start` (after the optional prefix), without the
// contraction: alt1 = [U]*[W]+, alt2 = [U]+[W]*. Returns the end, or 0 when it does not match.
// For alt1 the greedy [U]* takes the maximal U run; if a W character follows, [W]+ takes the W
// run from there; otherwise [U]* gives back characters until the one after it is W, so the match
// ends just after the run's last W character (U and W share Lm, Lo and M).
size_t Scan::O200kLetters(size_t start, bool alt1) const {
  size_t u = start, after_last_w = 0;
  while (u < n_) {
    const Char c = At(u);
    if (!(c.cls & kUpper)) break;
    u += c.len;
    if (c.cls & kLower) after_last_w = u;
  }
  if (!alt1) return u > start ? RunOf(u, kLower) : 0;
  if (u < n_ && (At(u).cls & kLower)) return RunOf(u, kLower);
  return after_last_w;
}

// [^\r\n\p{L}\p{N}]?[U]*[W]+(?i:'s|…)?|[^\r\n\p{L}\p{N}]?[U]+[W]*(?i:'s|…)?|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t Scan::O200k(size_t pos) const {
  const Char c = At(pos);
  const bool prefix = !(c.cls & (kNewline | kLetter | kNumber));
  // In the pattern's order: alt1 with the prefix, alt1 without, alt2 with, alt2 without. A match
  // ends after its start, so 0 means none.
  for (const bool alt1 : {true, false}) {
    size_t end = prefix ? O200kLetters(pos + c.len, alt1) : 0;
    if (end == 0) end = O200kLetters(pos, alt1);
    if (end != 0) return end + Contraction(end, true) - pos;
  }
  if (c.cls & kNumber) return UpTo(pos, kNumber, 3) - pos;
  return OtherOrWhitespace(pos, c, "\r\n/");
}

}  // namespace

ScannerKind ScannerFor(std::string_view pattern) {
  if (pattern == kGpt2Pattern) return ScannerKind::kGpt2;
  if (pattern == kCl100kPattern) return ScannerKind::kCl100k;
  if (pattern == kO200kPattern) return ScannerKind::kO200k;
  return ScannerKind::kNone;
}

size_t ScanPiece(ScannerKind kind, std::string_view text, size_t pos) {
  const Scan scan(text);
  switch (kind) {
    case ScannerKind::kGpt2:
      return scan.Gpt2(pos);
    case ScannerKind::kCl100k:
      return scan.Cl100k(pos);
    case ScannerKind::kO200k:
      return scan.O200k(pos);
    case ScannerKind::kNone:
      break;
  }
  return 0;
}

}  // namespace trail::tok
