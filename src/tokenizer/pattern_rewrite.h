// Pins a pre-tokenizer pattern's character classes to trail's Unicode data (unicode.h) before
// PCRE2 compiles it, so the regex never consults PCRE2's own (older) Unicode tables:
//   \s \S            -> the White_Space set and its complement (PCRE2's \s also has U+180E)
//   \d \D            -> Nd and its complement
//   \p{X} \P{X} \pX  -> the ranges of general category or group X (unicode.h: PropertyRanges),
//   \p{^X}              or of White_Space; inside a class the ranges join the class
//   (?i:...)         -> (?:...) with each cased literal replaced by its simple case folding
//                       class: (?i:'s) -> (?:'[sSſ])
// What cannot be pinned is refused with an error naming it: other properties (\p{Han},
// \p{Alphabetic}), \w \W \b \B \X, POSIX classes, and case-insensitivity anywhere but around
// literals in a (?i:...) group. Text inside \Q...\E is literal and copied as it is.
#pragma once

#include <string>

namespace trail::tok {

std::string PinUnicodeClasses(const std::string& pattern);

}  // namespace trail::tok
