#include "cli/corpus_glue.h"

#include "core/error.h"

#if TRAIL_WITH_CORPUS
#include "corpus/dedup/band_commitment.h"
#include "corpus/pipeline/pipeline.h"
#include "corpus/read/normalize.h"
#include "corpus/read/query_text.h"
#endif

namespace trail::cli::corpus_glue {

#if TRAIL_WITH_CORPUS

std::string NormalizeQueryText(std::string_view raw, const std::string& where) {
  return corpus::NormalizeQueryText(raw, where);
}

std::string ContentHash(std::string_view text) { return corpus::ContentHash(text); }

std::vector<data::BuildVerdict> LineageByContent(const std::string& lineage_db,
                                                 const std::string& hash) {
  std::vector<data::BuildVerdict> out;
  for (const corpus::LineageVerdict& v : corpus::LineageByContent(lineage_db, hash)) {
    out.push_back({v.key, v.source, v.split, v.kept, v.dropped, v.survivor, std::nullopt});
  }
  return out;
}

std::vector<uint64_t> TextBandKeys(std::string_view text, const data::BandParams& p) {
  return corpus::TextBandKeys(text, p);
}

std::string TrainingBandSet(const data::CanonicalStream& stream, const tok::Tokenizer& tokenizer,
                            const std::string& corpus_config) {
  const data::BandParams p = corpus::BandParamsOf(corpus::LoadCorpusConfig(corpus_config));
  return data::BandSetBytes(p, corpus::TrainingBandKeys(stream, tokenizer, p));
}

#else

namespace {
[[noreturn]] void Missing(const char* what) {
  TRAIL_FAIL(what,
             " needs the corpus factory, which this build of trail leaves out (a cross "
             "build): use the native build");
}
}  // namespace

std::string NormalizeQueryText(std::string_view, const std::string&) {
  Missing("a text query (its normalization)");
}
std::string ContentHash(std::string_view) { Missing("a text query (its content hash)"); }
std::vector<data::BuildVerdict> LineageByContent(const std::string&, const std::string&) {
  return {};
}
std::vector<uint64_t> TextBandKeys(std::string_view, const data::BandParams&) {
  Missing("a near-absence proof (its band keys)");
}
std::string TrainingBandSet(const data::CanonicalStream&, const tok::Tokenizer&,
                            const std::string&) {
  Missing("--corpus-config (the band keys)");
}

#endif

}  // namespace trail::cli::corpus_glue
