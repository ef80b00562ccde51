#include "data/document_set.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/le_bytes.h"
#include "data/find_index.h"

namespace trail::data {

std::vector<Digest> TrainingDocumentHashes(const CanonicalStream& stream) {
  const DocumentNumbers numbers(stream);
  std::vector<Digest> out;
  out.reserve(numbers.size());
  for (uint64_t g = 0; g < numbers.size(); ++g) {
    out.push_back(TokensHash(DocumentTokens(stream, numbers.Ref(g))));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string DocumentSetBytes(const std::vector<Digest>& hashes) {
  std::string s("TRLDSET1", 8);
  AppendU32(s, 1);
  AppendU32(s, 0);
  AppendU64(s, hashes.size());
  for (const Digest& d : hashes) s.append(reinterpret_cast<const char*>(d.data()), d.size());
  return s;
}

uint64_t ParseDocumentSetHeader(const uint8_t* p, uint64_t size, const std::string& where) {
  TRAIL_CHECK(
      size >= kDocumentSetHeaderBytes && std::memcmp(p, "TRLDSET1", 8) == 0 && GetU32(p + 8) == 1,
      where, ": not a training-document set (version 1)");
  const uint64_t count = GetU64(p + 16);
  TRAIL_CHECK(count <= (size - kDocumentSetHeaderBytes) / 32 &&
                  size == kDocumentSetHeaderBytes + 32 * count,
              where, ": ", size, " bytes for ", count, " hashes");
  return count;
}

}  // namespace trail::data
