#include "corpus/filters/decontam.h"

#include <algorithm>

#include "core/error.h"
#include "corpus/dedup/shingles.h"

namespace trail::corpus {

ContaminationIndex::ContaminationIndex(const std::vector<EvalItem>& items, int n) : n_(n) {
  TRAIL_CHECK(n >= 1, "decontamination n-gram length must be positive");
  for (uint32_t i = 0; i < items.size(); ++i) {
    const std::vector<uint64_t> w = WordHashes(items[i].text);
    if (w.size() < static_cast<size_t>(n)) {
      ++short_;
      continue;
    }
    ++indexed_;
    for (size_t k = 0; k + n <= w.size(); ++k) grams_.push_back({NgramHash(w.data() + k, n), i});
  }
  std::sort(grams_.begin(), grams_.end());
  // Keep the first item per n-gram.
  grams_.erase(std::unique(grams_.begin(), grams_.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               grams_.end());
}

std::vector<ContaminationHit> ContaminationIndex::Find(std::string_view doc) const {
  std::vector<ContaminationHit> hits;
  const std::vector<Word> words = Words(doc);
  if (words.size() < static_cast<size_t>(n_) || grams_.empty()) return hits;
  std::vector<uint64_t> h(words.size());
  for (size_t i = 0; i < words.size(); ++i) h[i] = words[i].hash;
  for (size_t k = 0; k + n_ <= words.size(); ++k) {
    const uint64_t g = NgramHash(h.data() + k, n_);
    auto it = std::lower_bound(grams_.begin(), grams_.end(), std::make_pair(g, uint32_t{0}));
    if (it != grams_.end() && it->first == g) {
      hits.push_back({it->second, words[k].begin, words[k + n_ - 1].end});
    }
  }
  return hits;
}

DecontamOutcome Decontaminate(std::string_view doc, const ContaminationIndex& index,
                              const DecontamConfig& cfg) {
  DecontamOutcome out;
  out.hits = index.Find(doc);
  if (out.hits.empty()) {
    out.text = std::string(doc);
    return out;
  }
  if (!cfg.cut) {
    out.dropped = true;
    return out;
  }
  // Remove [begin - margin, end + margin) around every hit; keep the pieces in between.
  std::vector<std::pair<size_t, size_t>> cuts;
  for (const ContaminationHit& h : out.hits) {
    cuts.push_back({h.begin > cfg.margin ? h.begin - cfg.margin : 0,
                    std::min<size_t>(doc.size(), size_t{h.end} + cfg.margin)});
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  for (const auto& [b, e] : cuts) {
    if (b > pos) pieces.push_back(doc.substr(pos, b - pos));
    pos = std::max(pos, e);
  }
  if (pos < doc.size()) pieces.push_back(doc.substr(pos));
  std::vector<std::string_view> kept;
  for (std::string_view p : pieces) {
    if (p.size() >= cfg.min_piece) kept.push_back(p);
  }
  if (kept.empty() || kept.size() > cfg.max_pieces) {
    out.dropped = true;
    return out;
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i) out.text += '\n';
    out.text += kept[i];
  }
  return out;
}

}  // namespace trail::corpus
