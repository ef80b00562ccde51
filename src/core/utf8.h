// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), and
// decoding and encoding of single code points.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trail {

// Length of the longest prefix of s that is valid UTF-8.
size_t ValidUtf8Prefix(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return ValidUtf8Prefix(s) == s.size(); }

// The code point that starts at s, which must be valid UTF-8 (checked before: no bounds or
// continuation checks here, this is on the pre-tokenizer's hot path); len gets its byte count.
inline char32_t DecodeValidUtf8(const char* s, size_t& len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  const unsigned b = p[0];
  if (b < 0x80) {
    len = 1;
    return b;
  }
  if (b < 0xE0) {
    len = 2;
    return (b & 0x1F) << 6 | (p[1] & 0x3F);
  }
  if (b < 0xF0) {
    len = 3;
    return (b & 0x0F) << 12 | (p[1] & 0x3F) << 6 | (p[2] & 0x3F);
  }
  len = 4;
  return (b & 0x07) << 18 | (p[1] & 0x3F) << 12 | (p[2] & 0x3F) << 6 | (p[3] & 0x3F);
}

// Appends cp (at most U+10FFFF, not a surrogate) as UTF-8.
void AppendUtf8(char32_t cp, std::string& out);

}  // namespace trail
