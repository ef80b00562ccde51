// Which of a set of short token sequences (evaluation items) share an n-gram with the training
// documents, and the maximal shared run around each shared n-gram (docs/data.md §9.4): one pass
// over every training document, the queries' n-grams held in memory. The find index
// (find_index.h) keeps only winnowed grams, enough for runs of 50 tokens but not for the 13-gram
// overlap of GPT-3's decontamination, which needs every n-gram of the corpus; this scan sees
// them all.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/readings.h"

namespace trail::data {

struct NgramHit {
  size_t query = 0;
  uint64_t number = 0;  // the training document's number (find_index.h)
  TokenRange doc_tokens;
  uint64_t query_begin = 0;  // the run is query tokens [query_begin, query_begin + length)
};

// Every maximal run shared by a query and a training document that contains at least one
// common n-gram, ordered by query, document number and document offset. Queries shorter than n
// are not matched (the caller counts them). `progress(done, total)` gets documents scanned.
std::vector<NgramHit> ScanForNgrams(const CanonicalStream& stream,
                                    const std::vector<std::vector<uint32_t>>& queries, uint32_t n,
                                    const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace trail::data
