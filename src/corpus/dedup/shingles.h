// Word n-gram shingles for near-duplicate detection. Words are maximal runs of letters and
// digits (Unicode, via ICU), case-folded; everything else separates words. Each word is hashed
// to 64 bits and an n-gram's hash chains its words' hashes, so a shingle set is a set of 64-bit
// values. A document with fewer than n words gets one shingle of all its words (so short texts
// still compare), and an empty document none.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace trail::corpus {

struct Word {
  uint64_t hash;
  uint32_t begin, end;  // byte offsets in the text
};
std::vector<Word> Words(std::string_view utf8);
std::vector<uint64_t> WordHashes(std::string_view utf8);
// Hash of the n words starting at w (the shingle hash).
uint64_t NgramHash(const uint64_t* w, size_t n);
// Sorted, unique shingle hashes.
std::vector<uint64_t> Shingles(std::string_view utf8, int n);
std::vector<uint64_t> ShinglesOfWords(const std::vector<uint64_t>& words, int n);

// |A ∩ B| / |A ∪ B| of two sorted unique sets (1 for two empty sets).
double ExactJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

}  // namespace trail::corpus
