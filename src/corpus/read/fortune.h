// Records of a fortune(6) file: texts separated by lines holding a single '%'.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace trail::corpus {

struct FortuneRecord {
  uint64_t index;         // position among the file's separator slots (stable for keys)
  uint64_t offset;        // byte offset of the record in the file
  std::string_view text;  // without the separators
};

// Empty records (and a stray trailing "%") are skipped; the others keep their index.
std::vector<FortuneRecord> FortuneRecords(std::string_view file_text);

}  // namespace trail::corpus
