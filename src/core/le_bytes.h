// Little-endian integer encoding for trail's file formats. The formats are defined as
// little-endian; supported hosts (x86-64, aarch64) are little-endian, which lets readers map
// token arrays directly.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace trail {

static_assert(std::endian::native == std::endian::little,
              "trail's file formats are read in place and need a little-endian host");

inline void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
// Appending to a byte string (a header being assembled).
inline void AppendU32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
inline void AppendU64(std::string& s, uint64_t v) {
  s.append(reinterpret_cast<const char*>(&v), 8);
}
inline void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t GetU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace trail
