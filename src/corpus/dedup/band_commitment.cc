#include "corpus/dedup/band_commitment.h"

#include <algorithm>

#include "corpus/dedup/minhash.h"
#include "corpus/dedup/near_dedup.h"
#include "data/find_index.h"

namespace trail::corpus {

data::BandParams BandParamsOf(const CorpusConfig& cfg) {
  data::BandParams p;
  p.ngram = static_cast<uint32_t>(cfg.ngram);
  p.bands = static_cast<uint32_t>(cfg.bands);
  p.rows = static_cast<uint32_t>(cfg.rows);
  p.seed = cfg.seed;
  p.threshold = cfg.near_threshold;
  return p;
}

std::vector<uint64_t> TextBandKeys(std::string_view text, const data::BandParams& p) {
  const MinHasher hasher(static_cast<int>(p.bands * p.rows), p.seed);
  return DocumentBands(text, static_cast<int>(p.ngram), hasher, static_cast<int>(p.bands),
                       static_cast<int>(p.rows));
}

std::vector<std::vector<uint64_t>> TrainingBandKeys(const data::CanonicalStream& stream,
                                                    const tok::Tokenizer& tokenizer,
                                                    const data::BandParams& p) {
  const MinHasher hasher(static_cast<int>(p.bands * p.rows), p.seed);
  const data::DocumentNumbers numbers(stream);
  std::vector<std::vector<uint64_t>> keys(p.bands);
  for (uint64_t g = 0; g < numbers.size(); ++g) {
    const std::string text = tokenizer.Decode(data::DocumentTokens(stream, numbers.Ref(g)));
    const std::vector<uint64_t> bands =
        DocumentBands(text, static_cast<int>(p.ngram), hasher, static_cast<int>(p.bands),
                      static_cast<int>(p.rows));
    for (size_t b = 0; b < bands.size(); ++b) keys[b].push_back(bands[b]);
  }
  for (auto& k : keys) {
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
  }
  return keys;
}

}  // namespace trail::corpus
