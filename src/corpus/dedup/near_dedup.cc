#include "corpus/dedup/near_dedup.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/mix.h"
#include "core/philox.h"
#include "core/thread_pool.h"
#include "corpus/dedup/minhash.h"
#include "corpus/dedup/shingles.h"

namespace trail::corpus {
namespace {

uint64_t StringKey(const std::string& s) { return StreamIdForName(s.c_str()); }

}  // namespace

uint64_t BandHash(const uint32_t* signature, int band, int rows) {
  uint64_t h = Mix64(static_cast<uint64_t>(band) + 1);
  for (int r = 0; r < rows; ++r) h = Mix64(h ^ signature[band * rows + r]);
  return h;
}

std::vector<uint64_t> DocumentBands(std::string_view text, int ngram, const MinHasher& hasher,
                                    int bands, int rows) {
  const std::vector<uint64_t> sh = Shingles(text, ngram);
  if (sh.empty()) return {};
  std::vector<uint32_t> sig(static_cast<size_t>(bands) * static_cast<size_t>(rows));
  hasher.Signature(sh.data(), sh.size(), sig.data());
  std::vector<uint64_t> out(static_cast<size_t>(bands));
  for (int b = 0; b < bands; ++b) out[static_cast<size_t>(b)] = BandHash(sig.data(), b, rows);
  return out;
}

NearDedupResult NearDedup(const std::vector<std::string>& keys,
                          const std::vector<std::vector<uint64_t>>& shingles,
                          const NearDedupConfig& cfg) {
  const size_t n = keys.size();
  TRAIL_CHECK(shingles.size() == n, "near dedup: ", n, " keys but ", shingles.size(),
              " shingle sets");
  TRAIL_CHECK(cfg.bands >= 1 && cfg.rows >= 1, "near dedup: bands and rows must be positive");
  const int k = cfg.bands * cfg.rows;
  const MinHasher hasher(k, cfg.seed);
  ThreadPool pool(static_cast<size_t>(std::max(1, cfg.threads)));

  // 1. Signatures (empty documents take no part).
  std::vector<uint32_t> sig(n * static_cast<size_t>(k));
  pool.ParallelFor(n, [&](size_t i) {
    hasher.Signature(shingles[i].data(), shingles[i].size(), sig.data() + i * k);
  });

  // 2. LSH: per band, sort (band hash, doc) and pair up equal hashes.
  std::vector<std::pair<uint32_t, uint32_t>> cand;
  std::vector<std::pair<uint64_t, uint32_t>> bucket(n);
  for (int b = 0; b < cfg.bands; ++b) {
    size_t m = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (shingles[i].empty()) continue;
      bucket[m++] = {BandHash(sig.data() + i * k, b, cfg.rows), i};
    }
    std::sort(bucket.begin(), bucket.begin() + m);
    for (size_t s = 0; s < m;) {
      size_t e = s + 1;
      while (e < m && bucket[e].first == bucket[s].first) ++e;
      for (size_t x = s; x < e; ++x) {
        for (size_t y = x + 1; y < e; ++y) cand.push_back({bucket[x].second, bucket[y].second});
      }
      s = e;
    }
  }
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());

  // 3. Verify every candidate by exact Jaccard.
  std::vector<uint8_t> ok(cand.size(), 0);
  pool.ParallelFor(cand.size(), [&](size_t c) {
    ok[c] = ExactJaccard(shingles[cand[c].first], shingles[cand[c].second]) >= cfg.threshold;
  });
  NearDedupResult res;
  res.candidates = cand.size();
  for (size_t c = 0; c < cand.size(); ++c) {
    if (ok[c]) res.verified.push_back(cand[c]);
  }

  // 4. Union-find over verified pairs; a root is always its set's smallest key.
  std::vector<uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  for (const auto& [a, b] : res.verified) {
    uint32_t ra = find(a), rb = find(b);
    if (ra == rb) continue;
    if (keys[rb] < keys[ra]) std::swap(ra, rb);
    parent[rb] = ra;
  }
  res.survivor.resize(n);
  for (uint32_t i = 0; i < n; ++i) res.survivor[i] = find(i);
  return res;
}

const char* SplitName(Split s) {
  return s == Split::kTrain ? "train" : s == Split::kValidation ? "validation" : "test";
}

Split SplitOfCluster(const std::string& key, uint64_t seed, double train, double validation) {
  TRAIL_CHECK(train >= 0 && validation >= 0 && train + validation <= 1.0,
              "split ratios must be non-negative and sum to at most 1");
  const uint64_t h = Mix64(StringKey(key) ^ Mix64(seed + 0x5bd1e995));
  const double u = static_cast<double>(h >> 11) * 0x1p-53;
  if (u < train) return Split::kTrain;
  if (u < train + validation) return Split::kValidation;
  return Split::kTest;
}

}  // namespace trail::corpus
