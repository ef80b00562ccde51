// The near-dedup band keys a publication commits to (data/band_set.h, docs/data.md §9.6),
// computed with the corpus factory's own shingling, MinHash and banding (near_dedup.h), so a
// text's keys compare with the training documents' exactly as the factory compares documents.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "corpus/pipeline/config.h"
#include "data/band_set.h"
#include "data/stream.h"
#include "tokenizer/tokenizer.h"

namespace trail::corpus {

data::BandParams BandParamsOf(const CorpusConfig& cfg);
// One key per band (DocumentBands); empty when the text has no word to shingle.
std::vector<uint64_t> TextBandKeys(std::string_view text, const data::BandParams& p);
// Per band, the sorted distinct keys of every training document's text (its ids decoded).
std::vector<std::vector<uint64_t>> TrainingBandKeys(const data::CanonicalStream& stream,
                                                    const tok::Tokenizer& tokenizer,
                                                    const data::BandParams& p);

}  // namespace trail::corpus
