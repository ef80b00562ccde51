// Training a byte-level BPE tokenizer from text.
//
// 1. Pre-tokenize every document with the pattern and count the pieces (in parallel; counts are
//    integers, so the totals do not depend on the thread count).
// 2. Start from the 256 byte tokens (id = byte value) and repeatedly merge the most frequent
//    adjacent pair, weighting each piece by its count. Ties go to the pair whose (left bytes,
//    right bytes) is smallest lexicographically. Merge k creates token 256 + k with rank k.
// 3. Stop at the vocabulary size (byte tokens + merges + special tokens) or when no pair occurs
//    at least min_frequency times.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace trail::tok {

struct TrainOptions {
  uint32_t vocab_size = 8192;         // including the 256 byte tokens and the special tokens
  std::string pattern;                // pre-tokenizer pattern
  std::vector<std::string> specials;  // appended after the merges, in this order
  int threads = 1;
  uint64_t min_frequency = 2;
  std::string name = "trained";
  Normalization normalization = Normalization::kNone;  // applied before counting and encoding
};

struct TrainStats {
  uint64_t documents = 0, bytes = 0, pieces = 0, unique_pieces = 0, merges = 0;
};

std::unique_ptr<Tokenizer> TrainBpe(const std::vector<std::string>& documents,
                                    const TrainOptions& opt, TrainStats* stats = nullptr);

// The patterns the trainer and the CLI know by name: gpt2, cl100k, o200k.
std::string NamedPattern(const std::string& name_or_regex);

}  // namespace trail::tok
