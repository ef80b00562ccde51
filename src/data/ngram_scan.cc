#include "data/ngram_scan.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "data/find_index.h"

namespace trail::data {
namespace {

struct GramAt {
  uint32_t query, offset;
};

// Runs found so far per (query, document, diagonal = doc offset - query offset): query ranges.
using Covered =
    std::map<std::tuple<size_t, uint64_t, int64_t>, std::vector<std::pair<uint64_t, uint64_t>>>;

void MatchDocument(const std::vector<uint32_t>& doc, uint64_t number,
                   const std::vector<std::vector<uint32_t>>& queries,
                   const std::unordered_multimap<uint64_t, GramAt>& grams, uint32_t n,
                   Covered& covered, std::vector<NgramHit>& out) {
  for (size_t i = 0; i + n <= doc.size(); ++i) {
    auto [lo, hi] = grams.equal_range(GramHash(doc.data() + i, n));
    for (auto it = lo; it != hi; ++it) {
      const std::vector<uint32_t>& q = queries[it->second.query];
      const uint64_t qi = it->second.offset;
      if (!std::equal(q.begin() + qi, q.begin() + qi + n, doc.begin() + i)) continue;
      auto& ranges = covered[{it->second.query, number, int64_t(i) - int64_t(qi)}];
      if (std::any_of(ranges.begin(), ranges.end(),
                      [&](const auto& r) { return r.first <= qi && qi < r.second; })) {
        continue;
      }
      uint64_t qs = qi, ds = i, len = n;
      while (qs > 0 && ds > 0 && q[qs - 1] == doc[ds - 1]) --qs, --ds, ++len;
      while (qs + len < q.size() && ds + len < doc.size() && q[qs + len] == doc[ds + len]) ++len;
      ranges.push_back({qs, qs + len});
      out.push_back({it->second.query, number, {ds, ds + len}, qs});
    }
  }
}

}  // namespace

std::vector<NgramHit> ScanForNgrams(const CanonicalStream& stream,
                                    const std::vector<std::vector<uint32_t>>& queries, uint32_t n,
                                    const std::function<void(uint64_t, uint64_t)>& progress) {
  TRAIL_CHECK(n >= 1, "the n-gram length must be at least 1");
  std::unordered_multimap<uint64_t, GramAt> grams;
  for (size_t q = 0; q < queries.size(); ++q) {
    for (size_t i = 0; i + n <= queries[q].size(); ++i) {
      grams.emplace(GramHash(queries[q].data() + i, n),
                    GramAt{static_cast<uint32_t>(q), static_cast<uint32_t>(i)});
    }
  }
  const DocumentNumbers numbers(stream);
  std::vector<NgramHit> out;
  Covered covered;
  for (uint64_t g = 0; g < numbers.size(); ++g) {
    const std::vector<uint32_t> doc = DocumentTokens(stream, numbers.Ref(g));
    MatchDocument(doc, g, queries, grams, n, covered, out);
    if (progress && (g % 4096 == 4095 || g + 1 == numbers.size())) progress(g + 1, numbers.size());
  }
  std::sort(out.begin(), out.end(), [](const NgramHit& a, const NgramHit& b) {
    return std::tie(a.query, a.number, a.doc_tokens.begin) <
           std::tie(b.query, b.number, b.doc_tokens.begin);
  });
  return out;
}

}  // namespace trail::data
