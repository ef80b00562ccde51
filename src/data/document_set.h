// The committed set of training documents (docs/data.md §9.3): the content hash (data/
// find_index.h: SHA-256 of the token ids as 4-byte little-endian words) of every training
// document of a manifest, sorted ascending and distinct, so that "no training document is
// exactly this text" is shown by two adjacent entries that enclose the text's hash. A
// publication carries it as kDocumentSetPath.
//
// File: "TRLDSET1", version u32 = 1, reserved u32 = 0, count u64, then count hashes of 32 bytes,
// ascending (memcmp order), distinct. Entry i is at byte kDocumentSetHeaderBytes + 32·i.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/hash.h"
#include "data/stream.h"

namespace trail::data {

inline constexpr const char* kDocumentSetPath = "data/training-documents.sha256set";
inline constexpr uint64_t kDocumentSetHeaderBytes = 24;

// The sorted, distinct content hashes of the stream's training documents.
std::vector<Digest> TrainingDocumentHashes(const CanonicalStream& stream);
// The file's bytes.
std::string DocumentSetBytes(const std::vector<Digest>& hashes);
// The count the header at p (kDocumentSetHeaderBytes) gives for a file of `size` bytes; throws
// naming `where` when the header is not a document set's or the size does not match.
uint64_t ParseDocumentSetHeader(const uint8_t* p, uint64_t size, const std::string& where);

}  // namespace trail::data
