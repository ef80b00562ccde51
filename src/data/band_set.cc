#include "data/band_set.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/le_bytes.h"

namespace trail::data {

std::string BandSetBytes(const BandParams& p, const std::vector<std::vector<uint64_t>>& keys) {
  TRAIL_CHECK(keys.size() == p.bands, "band set: ", keys.size(), " key lists for ", p.bands,
              " bands");
  TRAIL_CHECK(uint64_t{p.bands} * p.rows <= kMaxBandHashes, "band set: ", p.bands, " × ", p.rows,
              " hashes; at most ", kMaxBandHashes, " can be committed");
  std::string s("TRLBAND1", 8);
  AppendU32(s, 1);
  AppendU32(s, p.ngram);
  AppendU32(s, p.bands);
  AppendU32(s, p.rows);
  AppendU64(s, p.seed);
  s.append(reinterpret_cast<const char*>(&p.threshold), 8);
  for (const auto& k : keys) AppendU64(s, k.size());
  for (const auto& k : keys) {
    for (uint64_t v : k) AppendU64(s, v);
  }
  return s;
}

BandParams ParseBandParams(const uint8_t* p, const std::string& where) {
  TRAIL_CHECK(std::memcmp(p, "TRLBAND1", 8) == 0 && GetU32(p + 8) == 1, where,
              ": not a band set (version 1)");
  BandParams b;
  b.ngram = GetU32(p + 12);
  b.bands = GetU32(p + 16);
  b.rows = GetU32(p + 20);
  b.seed = GetU64(p + 24);
  std::memcpy(&b.threshold, p + 32, 8);
  TRAIL_CHECK(b.ngram >= 1 && b.ngram <= 1024 && b.bands >= 1 && b.rows >= 1 &&
                  uint64_t{b.bands} * b.rows <= kMaxBandHashes && b.threshold > 0 &&
                  b.threshold <= 1,
              where, ": band set parameters out of range");
  return b;
}

BandSetHeader ParseBandSetHeader(const uint8_t* p, uint64_t size, const std::string& where) {
  BandSetHeader h;
  h.params = ParseBandParams(p, where);
  uint64_t total = 0;
  for (uint32_t b = 0; b < h.params.bands; ++b) {
    const uint64_t n = GetU64(p + kBandSetFixedBytes + 8ull * b);
    TRAIL_CHECK(n <= size / 8, where, ": band ", b, " claims ", n, " keys");
    h.counts.push_back(n);
    h.first.push_back(total);
    total += n;
  }
  TRAIL_CHECK(size == BandSetHeaderBytes(h.params.bands) + 8 * total, where, ": ", size,
              " bytes for ", total, " keys");
  return h;
}

double BandMissProbability(double s, const BandParams& p) {
  return std::pow(1.0 - std::pow(s, p.rows), p.bands);
}

}  // namespace trail::data
