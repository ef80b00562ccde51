// The Gopher repeated-n-gram rules of corpus/filters/quality.h's QualityRules, and the per-thread
// scratch vectors the quality rules share.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "corpus/filters/quality.h"

namespace trail::corpus {

// Appends, in this order, "gopher.top_<n>gram_char_frac" for each (n, limit) of
// cfg.top_ngram_char_frac, then "gopher.dup_<n>gram_char_frac" for cfg.dup_ngram_char_frac, over
// the text's words (in order; the characters of "w1 w2 ... wn" are its words' plus n - 1).
// top: the largest (characters of a repeated n-gram) × (its number of occurrences), over
// n_chars; 0 when no n-gram repeats. dup: the characters of the words that some occurrence of a
// repeated n-gram covers, each word once, over n_chars. Each passes at most its limit.
void RepeatedNgramRules(const std::vector<std::string_view>& words, double n_chars,
                        const QualityConfig& cfg, std::vector<RuleResult>& out);

// The per-thread tables below: one grown for a long document is not kept once it is done, so
// between documents a worker holds at most this many slots per table (~400 KB).
constexpr size_t kKeptSlots = 16384;

// Per-thread vectors reused from document to document (a fresh one per document cost a
// malloc and free each); one grown past 16 KiB for a long document is released, so a worker
// keeps about 128 KiB of them between documents (the memory-budget test counts it).
template <class T>
std::vector<T>& Reused(std::vector<T>& v) {
  v.clear();
  return v;
}
template <class T>
void Release(std::vector<T>& v) {
  if (v.capacity() * sizeof(T) > (size_t{16} << 10)) std::vector<T>().swap(v);
}

}  // namespace trail::corpus
