// The Content-Range header of a 206 answer (RFC 9110 §14.4): "bytes FIRST-LAST/TOTAL", TOTAL
// "*" when the server does not say. Whatever the header holds, the parse either returns the
// three numbers or nothing; the HTTP source then compares them with what it asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trail::fetch {

struct ContentRange {
  uint64_t first = 0, last = 0;
  std::optional<uint64_t> total;  // absent for "*"
};

std::optional<ContentRange> ParseContentRange(const std::string& header);

}  // namespace trail::fetch
