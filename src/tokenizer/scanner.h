// Hand-written pre-tokenizers for the patterns of the reference encodings: GPT-2 (r50k, p50k),
// cl100k (also Llama 3's) and o200k. Each returns the same pieces as the pattern compiled by
// PCRE2 after PinUnicodeClasses (tests compare them on every reference text and on random
// strings from every general category), from the same pinned Unicode data, several times faster
// than the regex. A scanner follows its pattern's alternatives in order, leftmost-first, and
// resolves the backtracking of `\s+(?!\S)`, `\s*[\r\n]+` and o200k's `[U]*[W]+` in closed form
// (scanner.cc says how).
#pragma once

#include <cstddef>
#include <string_view>

namespace trail::tok {

enum class ScannerKind { kNone, kGpt2, kCl100k, kO200k };

// The scanner for a pattern, by its exact text; kNone for every other pattern.
ScannerKind ScannerFor(std::string_view pattern);

// Length in bytes of the piece that starts at text[pos]: pos < text.size(), text valid UTF-8.
size_t ScanPiece(ScannerKind kind, std::string_view text, size_t pos);

}  // namespace trail::tok
