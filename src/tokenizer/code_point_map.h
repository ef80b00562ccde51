// A value for every code point in two stages: the 256-code-point block of cp selects one of the
// distinct blocks of values (Unicode data repeats whole blocks: 4,352 blocks, a few hundred
// distinct), so a lookup is two loads from a table of some hundred KiB.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace trail::tok {

template <class T>
class CodePointMap {
 public:
  // value_of(cp) for every cp in [0, U+10FFFF].
  template <class F>
  explicit CodePointMap(F&& value_of) {
    std::map<std::vector<T>, uint16_t> seen;
    std::vector<T> block(256);
    for (char32_t b = 0; b < block_of_.size(); ++b) {
      for (char32_t k = 0; k < 256; ++k) block[k] = value_of(b << 8 | k);
      const auto [it, fresh] = seen.emplace(block, static_cast<uint16_t>(seen.size()));
      if (fresh) blocks_.insert(blocks_.end(), block.begin(), block.end());
      block_of_[b] = it->second;
    }
  }

  // cp must be at most U+10FFFF.
  T operator[](char32_t cp) const {
    return blocks_[size_t{block_of_[cp >> 8]} * 256 + (cp & 0xFF)];
  }

 private:
  std::array<uint16_t, 0x110000 / 256> block_of_{};
  std::vector<T> blocks_;
};

}  // namespace trail::tok
