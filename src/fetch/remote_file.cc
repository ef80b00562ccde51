#include "fetch/remote_file.h"

#include "core/hash.h"

namespace trail::fetch {

std::string RemoteFile::CheckChunk(uint64_t i, std::string_view bytes) const {
  const std::string got =
      ToHex(Sha256({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
  if (got == chunks[i]) return "";
  return "bytes [" + std::to_string(ChunkBegin(i)) + ", " + std::to_string(ChunkEnd(i)) +
         ") are not the published ones (chunk " + std::to_string(i) + " SHA-256 " + got +
         ", published " + chunks[i] + ")";
}

}  // namespace trail::fetch
