// Near-dedup throughput per core on real text: shingling, MinHash signatures (SIMD and the
// scalar definition side by side), the quality rules (on documents of N lines, and on the whole
// file as one document), and the whole near-dedup pass, in MB/s of input text.
//   corpus_bench TEXT_FILE [lines_per_document]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/file_util.h"
#include "corpus/dedup/minhash.h"
#include "corpus/dedup/near_dedup.h"
#include "corpus/filters/quality.h"
#include "corpus/dedup/shingles.h"

using namespace trail;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: corpus_bench TEXT [lines_per_document]\n");
    return 2;
  }
  const std::string text = ReadFileToString(argv[1]);
  const int per_doc = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<std::string> docs;
  std::string cur;
  int lines = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    cur.append(text, pos, eol + 1 - pos);
    pos = eol + 1;
    if (++lines == per_doc) {
      docs.push_back(std::move(cur));
      cur.clear();
      lines = 0;
    }
  }
  if (!cur.empty()) docs.push_back(cur);
  const double mb = text.size() / 1e6;
  std::printf("%s: %.1f MB, %zu documents (one thread)\n", argv[1], mb, docs.size());

  std::vector<std::vector<uint64_t>> sh(docs.size());
  const double t_sh = bench::Median({bench::Seconds([&] {
                                       for (size_t i = 0; i < docs.size(); ++i)
                                         sh[i] = corpus::Shingles(docs[i], 5);
                                     }),
                                     bench::Seconds([&] {
                                       for (size_t i = 0; i < docs.size(); ++i)
                                         sh[i] = corpus::Shingles(docs[i], 5);
                                     }),
                                     bench::Seconds([&] {
                                       for (size_t i = 0; i < docs.size(); ++i)
                                         sh[i] = corpus::Shingles(docs[i], 5);
                                     })});
  std::printf("  word 5-gram shingles                 %8.1f MB/s\n", mb / t_sh);
  for (int k : {100, 1024}) {
    const corpus::MinHasher h(k, 1);
    std::vector<uint32_t> sig(k);
    auto simd = [&] {
      for (const auto& s : sh) h.Signature(s.data(), s.size(), sig.data());
    };
    auto scalar = [&] {
      for (const auto& s : sh) h.SignatureScalar(s.data(), s.size(), sig.data());
    };
    const auto [t_simd, t_scalar] = bench::InterleavedMedians(simd, scalar, 3);
    std::printf("  MinHash %4d hashes: SIMD %8.1f MB/s, scalar %7.1f MB/s (ratio %.1f)\n", k,
                mb / t_simd, mb / t_scalar, t_scalar / t_simd);
  }
  size_t passed = 0;
  const double t_q = bench::Seconds([&] {
    for (const std::string& d : docs) passed += corpus::PassesAll(corpus::QualityRules(d, {}));
  });
  std::printf("  quality rules (Gopher, C4, FineWeb)  %8.1f MB/s  (%zu of %zu documents pass)\n",
              mb / t_q, passed, docs.size());
  // The whole file as one document: a long text's repeated n-grams are counted partition by
  // partition, and most of its larger n-grams are skipped as unrepeatable.
  const std::string whole(text);
  const double t_whole = bench::Median({bench::Seconds([&] { corpus::QualityRules(whole, {}); }),
                                        bench::Seconds([&] { corpus::QualityRules(whole, {}); }),
                                        bench::Seconds([&] { corpus::QualityRules(whole, {}); })});
  std::printf("  quality rules, the file as one doc   %8.1f MB/s  (%.3f s)\n", mb / t_whole,
              t_whole);
  std::vector<std::string> keys(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) keys[i] = std::to_string(1000000 + i);
  corpus::NearDedupResult r;
  const double t_all = bench::Seconds([&] {
    std::vector<std::vector<uint64_t>> s(docs.size());
    for (size_t i = 0; i < docs.size(); ++i) s[i] = corpus::Shingles(docs[i], 5);
    r = corpus::NearDedup(keys, s, {});
  });
  size_t clusters = 0;
  for (size_t i = 0; i < r.survivor.size(); ++i) clusters += r.survivor[i] == i;
  std::printf(
      "  near dedup end to end (20x5 bands)   %8.1f MB/s  (%llu candidates, %zu verified, "
      "%zu clusters)\n",
      mb / t_all, (unsigned long long)r.candidates, r.verified.size(), clusters);
  return 0;
}
