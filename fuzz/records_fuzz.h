// Shared by the JSONL and WARC targets: the file name's suffix follows the input's magic bytes,
// so one target reaches the plain, gzip and zstd paths of a reader.
#pragma once

#include <string>
#include <string_view>

namespace trail::fuzz {

inline std::string CompressionSuffix(std::string_view input) {
  if (input.size() >= 2 && input[0] == '\x1f' && input[1] == '\x8b') return ".gz";
  static constexpr std::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);
  if (input.substr(0, 4) == kZstdMagic) return ".zst";
  return "";
}

}  // namespace trail::fuzz
