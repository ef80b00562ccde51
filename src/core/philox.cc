#include "core/philox.h"

#include "core/philox_rounds.h"

namespace trail {

PhiloxBlock Philox4x32(uint64_t seed, uint64_t stream, uint64_t index) {
  PhiloxBlock out;
  PhiloxRounds(seed, stream, index, out.data());
  return out;
}

uint64_t StreamIdForName(const char* name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char* p = name; *p; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace trail
