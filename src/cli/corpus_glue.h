// The corpus factory's pieces that `trail data find`, `trail data verify-proof` and `trail
// publish` use: query normalization, content hashes, lineage verdicts, LSH band keys. Cross
// builds leave the factory out (the top-level CMakeLists.txt, TRAIL_CORPUS); there each of these
// refuses by name (or, for the lineage, finds nothing), and the rest of those commands works.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/band_set.h"
#include "data/find.h"
#include "data/stream.h"
#include "tokenizer/tokenizer.h"

namespace trail::cli::corpus_glue {

// corpus/read/query_text.h and read/normalize.h.
std::string NormalizeQueryText(std::string_view raw, const std::string& where);
std::string ContentHash(std::string_view text);

// corpus/pipeline/pipeline.h (LineageByContent), survivor readings not yet added; empty in a
// build without the factory.
std::vector<data::BuildVerdict> LineageByContent(const std::string& lineage_db,
                                                 const std::string& hash);

// corpus/dedup/band_commitment.h.
std::vector<uint64_t> TextBandKeys(std::string_view text, const data::BandParams& p);
// The band set file's bytes (data/band_set.h) of the stream's training documents with the
// parameters of the corpus configuration at `corpus_config`.
std::string TrainingBandSet(const data::CanonicalStream& stream, const tok::Tokenizer& tokenizer,
                            const std::string& corpus_config);

}  // namespace trail::cli::corpus_glue
