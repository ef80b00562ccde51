// The find index of a data manifest's training documents (docs/data.md §9): what makes "where was
// this text trained on?" a lookup instead of a scan of the corpus. Built once per manifest
// (`trail data index`), bound to the manifest's bytes, read in place.
//
// Documents are numbered globally: the training sources in manifest order, each source's shards
// in its list's order, the documents of a shard in index order. The index holds
//   - every document's content hash: SHA-256 of its token ids, each as 4 bytes little-endian;
//   - the winnowed fingerprints of its token n-grams: with GramHash over n consecutive tokens,
//     for every window of w consecutive grams of a document the gram with the least hash
//     (the rightmost on a tie) is selected; each selected gram once. A document shorter than
//     n + w - 1 tokens but with at least n has its least gram selected. Any run of at least
//     n + w - 1 tokens shared by a query and a document shares a selected gram at the same
//     place in both, so a query finds every such run (`guaranteed_tokens`).
//
// File (all integers little-endian):
//   header, 128 bytes: "TRLFIND1", version u32 = 1, gram u32 (n), window u32 (w), reserved u32
//     = 0, num_docs u64, num_grams u64, the manifest file's SHA-256 [32], zeros to 128
//   documents: num_docs records of 40 bytes sorted by (hash, number): hash [32], number u64
//   grams: num_grams records of 16 bytes sorted by (hash, number, offset): gram hash u64,
//     document number u32, token offset of the gram in the document u32
//   trailer: "TRLFEND1", SHA-256 of every byte before it
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/hash.h"
#include "data/readings.h"

namespace trail::data {

inline constexpr uint32_t kDefaultGram = 13;    // GPT-3's decontamination n-gram
inline constexpr uint32_t kDefaultWindow = 38;  // with n = 13: every shared run of 50 tokens

// x = 0x9e3779b97f4a7c15; for each token t in order: x = Mix64(x ^ t).
uint64_t GramHash(const uint32_t* tokens, uint32_t n);
// The selected gram offsets of a token sequence (ascending), by the rule above.
std::vector<uint32_t> WinnowedGrams(std::span<const uint32_t> tokens, uint32_t n, uint32_t w);
// SHA-256 of the ids as 4-byte little-endian words.
Digest TokensHash(std::span<const uint32_t> tokens);

struct FindIndexOptions {
  uint32_t gram = kDefaultGram, window = kDefaultWindow;
};

struct FindIndexSummary {
  uint64_t documents = 0, tokens = 0, grams = 0, bytes = 0;
  double seconds = 0;
};

// Builds the index of the stream's training documents into `path` (atomically).
// `manifest_sha256`: the SHA-256 of the manifest file the stream was opened from.
FindIndexSummary BuildFindIndex(CanonicalStream& stream, const Digest& manifest_sha256,
                                const std::string& path, const FindIndexOptions& opt = {});

// A document's place: its number, and its source, shard and index (DocumentRef).
class DocumentNumbers {
 public:
  explicit DocumentNumbers(const CanonicalStream& stream);
  uint64_t size() const { return starts_.back(); }
  DocumentRef Ref(uint64_t number) const;

 private:
  std::vector<uint64_t> starts_;  // first number of each (source, shard), in order; + total
  std::vector<std::pair<uint32_t, uint32_t>> shards_;
};

// The token ids of training document `ref`.
std::vector<uint32_t> DocumentTokens(const CanonicalStream& stream, const DocumentRef& ref);

class FindIndex {
 public:
  // Maps and checks the file (magic, version, sizes, trailing SHA-256, the manifest's hash);
  // errors name the file and say how to rebuild it.
  FindIndex(const std::string& path, const Digest& manifest_sha256);

  uint32_t gram() const { return gram_; }
  uint32_t window() const { return window_; }
  uint64_t num_docs() const { return num_docs_; }
  uint64_t num_grams() const { return num_grams_; }
  // The shortest shared run a query is certain to find.
  uint64_t guaranteed_tokens() const { return gram_ + window_ - 1; }
  // Numbers of the documents whose content hash is `h`.
  std::vector<uint64_t> DocumentsWithHash(const Digest& h) const;
  struct GramHit {
    uint32_t doc, offset;
  };
  // The grams with hash `h`, at most `limit` (a gram in more documents is boilerplate).
  std::vector<GramHit> GramsWithHash(uint64_t h, size_t limit, bool* truncated) const;

 private:
  MappedFile file_;
  uint32_t gram_ = 0, window_ = 0;
  uint64_t num_docs_ = 0, num_grams_ = 0;
  const uint8_t* docs_ = nullptr;
  const uint8_t* grams_ = nullptr;
};

}  // namespace trail::data
