#include "corpus/pipeline/doc_stages.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "core/hash.h"
#include "corpus/read/extract.h"
#include "corpus/dedup/minhash.h"
#include "corpus/dedup/near_dedup.h"
#include "corpus/read/normalize.h"
#include "corpus/filters/quality.h"
#include "corpus/read/reader.h"

namespace trail::corpus {
namespace {

// HTML (an html file, a WARC response's body) -> its main text, on the workers rather than the
// thread that reads the sources. Part of the read stage: its time counts there, and the raw
// bytes the lineage records (size, SHA-256, sample) are the extracted text's, as always.
class ExtractStage : public DocStage {
 public:
  const char* name() const override { return "read"; }
  void Apply(PendingDoc& p) const override {
    if (!p.html) return;
    p.raw = ExtractHtml(p.raw).text;
    p.html = false;
  }
};

// Raw bytes -> normalized text (encoding repair, NFC), with the raw bytes' hash and sample
// kept for the lineage; a document with only white space left is dropped.
class NormalizeStage : public DocStage {
 public:
  explicit NormalizeStage(const CorpusConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "normalize"; }
  void Apply(PendingDoc& p) const override {
    DocRecord& d = p.rec;
    const SourceConfig& s = cfg_.sources[d.source_index];
    d.raw_bytes = p.raw.size();
    d.raw_sha256 = ToHex(Sha256({reinterpret_cast<const uint8_t*>(p.raw.data()), p.raw.size()}));
    d.raw_sample = SampleBytes(p.raw);
    NormalizeConfig nc;
    nc.declared_encoding = s.encoding;
    nc.esperanto_x_system = s.esperanto_x_system;
    d.text = NormalizeText(p.raw, nc, &d.norm);
    // Most texts come out of normalization unchanged: their content hash (ContentHash, a
    // prefix of the text's SHA-256) is then the raw bytes' hash, already computed.
    d.content_hash = d.text == p.raw ? d.raw_sha256.substr(0, 32) : ContentHash(d.text);
    std::string().swap(p.raw);
    if (d.text.find_first_not_of(" \t\n") == std::string::npos)
      d.drop = Drop(DropReason::kEmptyAfterNormalize);
  }

 private:
  const CorpusConfig& cfg_;
};

// fastText language ID; a filter only for sources with language_filter (else recorded).
class LanguageStage : public DocStage {
 public:
  LanguageStage(const CorpusConfig& cfg, const LanguageIdentifier& lid) : cfg_(cfg), lid_(lid) {}
  const char* name() const override { return "language"; }
  void Apply(PendingDoc& p) const override {
    DocRecord& d = p.rec;
    d.lang = lid_.Identify(d.text);
    if (!cfg_.sources[d.source_index].language_filter) return;
    const auto& ok = cfg_.allowed_languages;
    if (!ok.empty() && std::find(ok.begin(), ok.end(), d.lang.language) == ok.end()) {
      d.drop = Drop(DropReason::kLanguageNotAllowed);
    } else if (d.lang.score < cfg_.min_language_score) {
      d.drop = Drop(DropReason::kLanguageLowScore);
    }
  }

 private:
  const CorpusConfig& cfg_;
  const LanguageIdentifier& lid_;
};

// The heuristic quality rules; a filter only for sources with quality_filter (else recorded).
class QualityStage : public DocStage {
 public:
  explicit QualityStage(const CorpusConfig& cfg) : cfg_(cfg) {}
  const char* name() const override { return "quality"; }
  void Apply(PendingDoc& p) const override {
    DocRecord& d = p.rec;
    const std::vector<RuleResult> rules = QualityRules(d.text, cfg_.quality_cfg);
    d.rules_json = RuleValuesJson(rules);
    if (!cfg_.sources[d.source_index].quality_filter) return;
    const std::string fail = FirstFailure(rules);
    if (!fail.empty()) d.drop = Drop(DropReason::kQuality, fail);
  }

 private:
  const CorpusConfig& cfg_;
};

// The near-dedup signature of a document still kept: shingles → MinHash → LSH band hashes, here
// on the workers (and in each read task) rather than in the cross-document phase, which only
// sorts them. Its time counts in the near_dedup stage; it drops nothing.
class SignatureStage : public DocStage {
 public:
  explicit SignatureStage(const CorpusConfig& cfg)
      : cfg_(cfg), hasher_(cfg.bands * cfg.rows, cfg.seed) {}
  const char* name() const override { return "near_dedup"; }
  void Apply(PendingDoc& p) const override {
    p.rec.bands = DocumentBands(p.rec.text, cfg_.ngram, hasher_, cfg_.bands, cfg_.rows);
  }

 private:
  const CorpusConfig& cfg_;
  const MinHasher hasher_;
};

}  // namespace

std::vector<std::unique_ptr<DocStage>> PerDocumentStages(const CorpusConfig& cfg,
                                                         const LanguageIdentifier* lid) {
  std::vector<std::unique_ptr<DocStage>> stages;
  const bool html = std::any_of(cfg.sources.begin(), cfg.sources.end(), [](const SourceConfig& s) {
    return s.format == "html" || s.format == "warc";
  });
  if (html) stages.push_back(std::make_unique<ExtractStage>());
  stages.push_back(std::make_unique<NormalizeStage>(cfg));
  if (lid != nullptr) stages.push_back(std::make_unique<LanguageStage>(cfg, *lid));
  if (cfg.quality) stages.push_back(std::make_unique<QualityStage>(cfg));
  stages.push_back(std::make_unique<SignatureStage>(cfg));
  return stages;
}

void RunDocStages(const std::vector<std::unique_ptr<DocStage>>& stages,
                  std::vector<PendingDoc>& chunk, ThreadPool& pool,
                  std::map<std::string, double>& seconds) {
  for (const auto& stage : stages) {
    const auto t = std::chrono::steady_clock::now();
    pool.ParallelFor(chunk.size(), [&](size_t i) {
      DocRecord& d = chunk[i].rec;
      if (d.drop.dropped()) return;
      stage->Apply(chunk[i]);
      if (d.drop.dropped()) d.drop_stage = stage->name();
    });
    seconds[stage->name()] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
}

std::string RuleValuesJson(const std::vector<RuleResult>& rules) {
  if (rules.empty()) return "";
  std::string j = "[";
  j.reserve(rules.size() * 24 + 2);  // a typical value's text: one allocation per document
  char buf[64];
  for (const RuleResult& r : rules) {
    j += j.size() == 1 ? "[" : ",[";
    if (std::isfinite(r.value))
      j.append(buf, std::to_chars(buf, buf + sizeof buf, r.value).ptr);
    else
      j += "null";
    j += r.pass ? ",1]" : ",0]";
  }
  return j + "]";
}

}  // namespace trail::corpus
