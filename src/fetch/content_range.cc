#include "fetch/content_range.h"

#include <cctype>

namespace trail::fetch {
namespace {

// Decimal digits at s[i...] into *v (at most 19 of them, so no overflow); false when none.
bool Number(const std::string& s, size_t& i, uint64_t* v) {
  const size_t start = i;
  *v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 19) {
    *v = *v * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
  }
  return i > start && (i == s.size() || !std::isdigit(static_cast<unsigned char>(s[i])));
}

}  // namespace

std::optional<ContentRange> ParseContentRange(const std::string& header) {
  static const std::string kUnit = "bytes ";
  if (header.compare(0, kUnit.size(), kUnit) != 0) return std::nullopt;
  size_t i = kUnit.size();
  ContentRange r;
  if (!Number(header, i, &r.first) || i >= header.size() || header[i++] != '-' ||
      !Number(header, i, &r.last) || i >= header.size() || header[i++] != '/' || r.last < r.first) {
    return std::nullopt;
  }
  if (i + 1 == header.size() && header[i] == '*') return r;
  uint64_t total = 0;
  if (!Number(header, i, &total) || i != header.size() || r.last >= total) return std::nullopt;
  r.total = total;
  return r;
}

}  // namespace trail::fetch
