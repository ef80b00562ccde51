#include "corpus/dedup/shingles.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>

#include "core/mix.h"

namespace trail::corpus {

std::vector<uint64_t> WordHashes(std::string_view s) {
  std::vector<uint64_t> out;
  for (const Word& w : Words(s)) out.push_back(w.hash);
  return out;
}

uint64_t NgramHash(const uint64_t* w, size_t n) {
  uint64_t h = 0x243f6a8885a308d3ull;
  for (size_t j = 0; j < n; ++j) h = Mix64(h ^ w[j]);
  return h;
}

std::vector<Word> Words(std::string_view s) {
  std::vector<Word> out;
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const int32_t n = static_cast<int32_t>(s.size());
  int32_t i = 0;
  uint64_t h = 0;
  bool in_word = false;
  int32_t word_begin = 0;
  while (i < n) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(p, i, n, c);  // invalid bytes give c < 0: a separator
    const bool word_char =
        c >= 0 && (c < 0x80 ? ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9')
                            : u_isalnum(c));
    if (word_char) {
      const UChar32 f =
          c < 0x80 ? ((c >= 'A' && c <= 'Z') ? c + 32 : c) : u_foldCase(c, U_FOLD_CASE_DEFAULT);
      h = Mix64(h ^ (static_cast<uint64_t>(f) + 0x9e3779b97f4a7c15ull));
      if (!in_word) word_begin = at;
      in_word = true;
    } else if (in_word) {
      out.push_back({h, static_cast<uint32_t>(word_begin), static_cast<uint32_t>(at)});
      h = 0;
      in_word = false;
    }
  }
  if (in_word) out.push_back({h, static_cast<uint32_t>(word_begin), static_cast<uint32_t>(n)});
  return out;
}

std::vector<uint64_t> ShinglesOfWords(const std::vector<uint64_t>& w, int n) {
  std::vector<uint64_t> out;
  if (w.empty()) return out;
  const size_t k = std::min<size_t>(static_cast<size_t>(n), w.size());
  out.reserve(w.size() - k + 1);
  for (size_t i = 0; i + k <= w.size(); ++i) out.push_back(NgramHash(w.data() + i, k));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint64_t> Shingles(std::string_view utf8, int n) {
  return ShinglesOfWords(WordHashes(utf8), n);
}

double ExactJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, inter = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++inter;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(inter) / static_cast<double>(a.size() + b.size() - inter);
}

}  // namespace trail::corpus
