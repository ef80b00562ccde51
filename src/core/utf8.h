// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
#pragma once

#include <cstddef>
#include <string_view>

namespace trail {

// Length of the longest prefix of s that is valid UTF-8.
size_t ValidUtf8Prefix(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return ValidUtf8Prefix(s) == s.size(); }

}  // namespace trail
