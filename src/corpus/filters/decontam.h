// Benchmark decontamination: an index of the word n-grams (default 13, on the same normalized
// words as the shingles) of evaluation items; a training document that shares an n-gram with
// an item is contaminated. Items shorter than n words cannot be checked this way and are
// counted, not indexed (indexing them whole would flag every document that mentions, say, a
// state and its capital). The action follows GPT-3's rules: drop the document, or cut
// `margin` characters around each matched span, drop pieces shorter than min_piece
// characters, and drop the document if it falls into more than max_pieces pieces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trail::corpus {

struct EvalItem {
  std::string benchmark, id, text;
};

struct ContaminationHit {
  size_t item;          // index into the items the index was built from
  uint32_t begin, end;  // byte span of the matched n-gram in the document
};

class ContaminationIndex {
 public:
  ContaminationIndex(const std::vector<EvalItem>& items, int ngram = 13);
  int ngram() const { return n_; }
  size_t indexed_items() const { return indexed_; }
  size_t short_items() const { return short_; }
  std::vector<ContaminationHit> Find(std::string_view doc) const;

 private:
  int n_;
  size_t indexed_ = 0, short_ = 0;
  std::vector<std::pair<uint64_t, uint32_t>> grams_;  // sorted (n-gram hash, first item)
};

struct DecontamConfig {
  bool cut = false;  // false: drop contaminated documents
  uint32_t margin = 200, min_piece = 200, max_pieces = 10;
};

struct DecontamOutcome {
  bool dropped = false;
  std::string text;  // the kept text (pieces joined with "\n"), empty when dropped
  std::vector<ContaminationHit> hits;
};

DecontamOutcome Decontaminate(std::string_view doc, const ContaminationIndex& index,
                              const DecontamConfig& cfg);

}  // namespace trail::corpus
