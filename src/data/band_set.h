// The committed LSH band keys of the training documents (docs/data.md §9.6): for each band of the
// corpus factory's near-dedup banding, the sorted set of the band keys of every training
// document's text (its token ids decoded). "No training document is a near duplicate of this
// text" is then shown band by band, by two adjacent keys that enclose the text's key. A
// publication carries it as kBandSetPath when it was published with the build's configuration.
//
// File: "TRLBAND1", version u32 = 1, ngram u32, bands u32, rows u32, seed u64, threshold f64
// (40 bytes), then `bands` counts u64, then for each band in order its count keys u64,
// ascending and distinct. Key i of band b is at byte HeaderBytes(bands) + 8·(Σ_{c<b} count_c + i).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::data {

inline constexpr const char* kBandSetPath = "data/training-bands.lsh";
inline constexpr uint64_t kBandSetFixedBytes = 40;
// At most this many MinHash functions (bands × rows; the factory's default is 100), so a hostile
// file or proof cannot make a reader hash a text a million times.
inline constexpr uint64_t kMaxBandHashes = 4096;

// The factory's near-dedup parameters (docs/corpus.md): word n-gram shingles, MinHash of
// bands × rows hashes seeded by `seed`, `threshold` its verified Jaccard.
struct BandParams {
  uint32_t ngram = 5, bands = 20, rows = 5;
  uint64_t seed = 0;
  double threshold = 0.8;
  bool operator==(const BandParams&) const = default;
};

inline uint64_t BandSetHeaderBytes(uint32_t bands) { return kBandSetFixedBytes + 8ull * bands; }

// keys[b]: band b's keys, sorted and distinct.
std::string BandSetBytes(const BandParams& p, const std::vector<std::vector<uint64_t>>& keys);

struct BandSetHeader {
  BandParams params;
  std::vector<uint64_t> counts;  // per band
  std::vector<uint64_t> first;   // per band, the index of its first key among all keys
  uint64_t KeyOffset(uint32_t band, uint64_t i) const {
    return BandSetHeaderBytes(params.bands) + 8 * (first[band] + i);
  }
};
// The parameters from the first kBandSetFixedBytes (throws naming `where` when they are not a
// band set's, or out of range: ngram <= 1024, bands × rows <= kMaxBandHashes).
BandParams ParseBandParams(const uint8_t* p, const std::string& where);
// The whole header (BandSetHeaderBytes(bands) bytes) of a file of `size` bytes.
BandSetHeader ParseBandSetHeader(const uint8_t* p, uint64_t size, const std::string& where);

// The probability that a document whose Jaccard similarity to a text is s shares no band with
// it: (1 - s^rows)^bands.
double BandMissProbability(double s, const BandParams& p);

}  // namespace trail::data
