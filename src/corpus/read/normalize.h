// Text normalization: bytes in any encoding -> clean NFC UTF-8.
//   1. Encoding: valid UTF-8 is kept; otherwise the source's declared encoding, else ICU's
//      charset detection, converts it (bytes that do not convert become U+FFFD and are counted).
//   2. Optional source-specific transliteration: Esperanto's x-system (cx -> ĉ, gx -> ĝ,
//      hx -> ĥ, jx -> ĵ, sx -> ŝ, ux -> ŭ; upper case too), for ASCII-only Esperanto sources.
//   3. Unicode NFC.
//   4. Line ends CRLF/CR -> LF; control characters other than tab and newline removed (counted).
// Never throws on bad bytes: what cannot be read is counted, not fatal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trail::corpus {

struct NormalizeConfig {
  std::string declared_encoding;  // e.g. "ISO-8859-3"; empty: detect when not UTF-8
  bool esperanto_x_system = false;
  bool nfc = true;
};

struct NormalizeStats {
  std::string encoding;   // "UTF-8", or the encoding converted from
  bool detected = false;  // the encoding was guessed, not declared
  uint64_t replaced = 0;  // characters that did not convert (now U+FFFD)
  uint64_t controls_removed = 0;
};

std::string NormalizeText(std::string_view raw, const NormalizeConfig& cfg,
                          NormalizeStats* stats = nullptr);

// The exact-dedup key of normalized text: the first 128 bits of its SHA-256, as 32 hex digits.
std::string ContentHash(std::string_view text);

}  // namespace trail::corpus
