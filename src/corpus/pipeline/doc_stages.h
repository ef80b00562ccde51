// The per-document stages of the corpus build — normalize, language, quality — behind one small
// interface. Each looks at one document at a time (so a chunk of documents runs on a thread
// pool), records its result in the document's record and, when it drops the document, sets
// `drop` to "<stage>.<reason>". Every stage is deterministic per document: neither the thread
// count nor the other documents of a chunk change a verdict.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "corpus/pipeline/config.h"
#include "corpus/pipeline/doc_record.h"
#include "corpus/langid/langid.h"

namespace trail::corpus {

// A document between the read stage and its document run: its record and, until
// normalization consumes it, the raw text as read.
struct PendingDoc {
  DocRecord rec;
  std::string raw;
  bool html = false;  // raw is HTML (html and warc sources): its text is extracted first
};

class DocStage {
 public:
  virtual ~DocStage() = default;
  virtual const char* name() const = 0;
  // Called from worker threads, once per document that no earlier stage dropped.
  virtual void Apply(PendingDoc& doc) const = 0;
};

// The stages the config enables, in their order: HTML extraction (named "read", the stage it
// belongs to) when a source is html or warc, normalize, language, quality, and the near-dedup
// signature (band hashes; named "near_dedup"). `lid` (may be null when the config has no
// language stage) must outlive them.
std::vector<std::unique_ptr<DocStage>> PerDocumentStages(const CorpusConfig& cfg,
                                                         const LanguageIdentifier* lid);

// Runs every stage over the chunk in order, each on the pool, skipping dropped documents and
// noting which stage dropped each one (drop_stage). Adds each stage's wall time to seconds.
void RunDocStages(const std::vector<std::unique_ptr<DocStage>>& stages,
                  std::vector<PendingDoc>& chunk, ThreadPool& pool,
                  std::map<std::string, double>& seconds);

// A document's quality rule results as the lineage stores them: [[value, pass], ...] in the
// rules' fixed order; numbers in to_chars' shortest exact form, null for a non-finite value.
std::string RuleValuesJson(const std::vector<RuleResult>& rules);

}  // namespace trail::corpus
