// Unicode character data pinned to one version of the Unicode Character Database, generated into
// unicode_data.inc by scripts/gen-unicode-data.js from the npm package @unicode/unicode-<version>.
//
// The pre-tokenizer's character classes (\p{L}, \p{N}, \p{Lu}…, \s, the case folding of (?i:)
// literals) come from here and never from a regex library's own tables, so token ids do not
// depend on which PCRE2 a machine has: PCRE2 10.42 carries Unicode 14, the reference encoders
// (tiktoken 1.0.22) Unicode 16, and the two split text with newer characters differently.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace trail::tok {

// The Unicode version of the data below; tokenizer contracts record it.
std::string_view UnicodeVersion();

// The general categories, Cn (unassigned) first.
// clang-format off
enum class GeneralCategory : uint8_t {
  kCn, kLu, kLl, kLt, kLm, kLo, kMn, kMc, kMe, kNd, kNl, kNo, kPc, kPd, kPs, kPe, kPi, kPf, kPo,
  kSm, kSc, kSk, kSo, kZs, kZl, kZp, kCc, kCf, kCs, kCo, kCount
};
// clang-format on
std::string_view CategoryName(GeneralCategory c);  // "Lu"

struct CodeRange {
  char32_t first, last;  // inclusive
};

// Cn for code points beyond U+10FFFF. O(1): a two-stage table built on first use.
GeneralCategory CategoryOf(char32_t cp);
bool IsWhiteSpace(char32_t cp);  // the White_Space property (what the references' \s means)
char32_t SimpleCaseFold(char32_t cp);
// Every code point whose simple case folding equals cp's, cp included, ascending: what a
// case-insensitive literal cp matches ('s' -> s, S, U+017F LATIN SMALL LETTER LONG S).
std::vector<char32_t> CaseFoldClass(char32_t cp);

// The code points of a property as ascending, disjoint, non-adjacent ranges. Names: a general
// category or group by its short or long name as PCRE2 and the Rust regex crate accept them
// ("L", "Letter", "Lu", "Uppercase_Letter", "LC" / "L&" for cased letters, "M", "N", "P", "S",
// "Z", "C", "Cn"), and "White_Space". Returns false for any other name.
bool PropertyRanges(std::string_view name, std::vector<CodeRange>& out);

// The complement of ascending, disjoint ranges within [0, 0x10FFFF].
std::vector<CodeRange> Complement(const std::vector<CodeRange>& ranges);

}  // namespace trail::tok
