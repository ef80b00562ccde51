// Near-duplicate clustering: MinHash signatures, LSH banding for candidate pairs, every
// candidate verified by exact Jaccard over the shingle sets, union-find over verified pairs
// only. A cluster's survivor is its member with the smallest key (a stable document key), so
// which duplicate is kept never depends on input order or run order. Splits are assigned per
// cluster, so a cluster is never split across train/validation/test (the split-leak check: a
// cluster is the transitive closure of verified pairs, so A~B and B~C put A and C in one split even
// if A and C were never compared).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trail::corpus {

struct NearDedupConfig {
  int bands = 20, rows = 5;  // 100 hashes; P(candidate | J=0.8) = 0.9996, P(J=0.5) = 0.47
  double threshold = 0.8;    // exact Jaccard to call a verified duplicate
  uint64_t seed = 0;
  int threads = 1;
};

struct NearDedupResult {
  std::vector<uint32_t> survivor;  // per document: the index of its cluster's survivor
  std::vector<std::pair<uint32_t, uint32_t>> verified;  // i < j, sorted
  uint64_t candidates = 0;                              // distinct LSH candidate pairs
};

// shingles[i]: sorted unique shingle hashes of document i; keys[i]: its stable key (unique).
NearDedupResult NearDedup(const std::vector<std::string>& keys,
                          const std::vector<std::vector<uint64_t>>& shingles,
                          const NearDedupConfig& cfg);

// LSH band b's hash of a MinHash signature of bands × rows values: Mix64(b + 1) folded with its
// rows' values, each through Mix64 (h = Mix64(h ^ value)).
uint64_t BandHash(const uint32_t* signature, int band, int rows);

class MinHasher;
// A document's band hashes, one per band, from its text: word `ngram`-gram shingles, their
// MinHash signature (hasher: bands × rows hashes), BandHash per band. Empty when the text has
// no shingle (such a document takes no part in near dedup).
std::vector<uint64_t> DocumentBands(std::string_view text, int ngram, const MinHasher& hasher,
                                    int bands, int rows);

enum class Split { kTrain, kValidation, kTest };
const char* SplitName(Split s);
// The split of a cluster (named by its survivor's key): a seeded hash of the key mapped to
// [0, 1) and compared with the cumulative ratios train, train + validation.
Split SplitOfCluster(const std::string& survivor_key, uint64_t seed, double train_ratio,
                     double validation_ratio);

}  // namespace trail::corpus
