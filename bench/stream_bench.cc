// The canonical stream's speed: window assembly with labels and masks (tokens/s on one core,
// next to a plain copy-and-widen of the same number of tokens as the speed-of-light baseline),
// and random seeks deep into the stream on a ~1 GB corpus (ms per seek, cold caches).
//
//   stream_bench [--gb 1.0] [--seq-len 2048] [--dir DIR]
// The corpus is written once into DIR (default $TMPDIR) and removed at the end.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "data/batcher.h"
#include "data/permutation.h"
#include "data/shard_writer.h"
#include "data/stream.h"

using namespace trail;
using namespace trail::data;

namespace {

// Two sources, 8 shards each of u16 tokens, document lengths 1..2047 (mean ~1024).
Manifest WriteCorpus(const std::string& dir, double gigabytes, int64_t seq_len) {
  const uint64_t total_tokens = static_cast<uint64_t>(gigabytes * 1e9 / 2);
  Manifest m;
  m.tokenizer.contract.fill(0x42);
  m.tokenizer.vocab_size = 50257;
  m.tokenizer.token_bytes = 2;
  m.tokenizer.eos_id = 50256;
  m.tokenizer.pad_id = 50256;
  m.stream.seed = 1;
  m.stream.seq_len = seq_len;
  const char* names[2] = {"web", "code"};
  const double share[2] = {0.7, 0.3};
  std::vector<uint32_t> doc;
  uint64_t rng = 12345;
  for (int s = 0; s < 2; ++s) {
    SourceSpec spec;
    spec.name = names[s];
    spec.target_share = share[s];
    for (int h = 0; h < 8; ++h) {
      const std::string file = spec.name + "-" + std::to_string(h) + ".tshard";
      ShardWriterOptions opt;
      opt.vocab_size = m.tokenizer.vocab_size;
      opt.contract = m.tokenizer.contract;
      ShardWriter w(dir + "/" + file, opt);
      uint64_t written = 0, d = 0;
      const uint64_t budget = static_cast<uint64_t>(total_tokens * share[s] / 8);
      while (written < budget) {
        rng = Mix64(rng);
        doc.resize(1 + rng % 2047);
        for (auto& t : doc) t = static_cast<uint32_t>((rng = Mix64(rng)) % 50256);
        w.Add(spec.name + "/" + std::to_string(h) + "/" + std::to_string(d++), s, doc);
        written += doc.size();
      }
      const ShardSummary sum = w.Finish();
      spec.shards.push_back({file, sum.sha256, sum.num_tokens, sum.num_docs});
    }
    m.sources.push_back(spec);
  }
  SaveManifest(m, dir + "/manifest.json");
  return LoadManifest(dir + "/manifest.json");
}

}  // namespace

int main(int argc, char** argv) {
  double gb = 1.0;
  int64_t L = 2048;
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp ? tmp : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--gb")) gb = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seq-len")) L = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--dir")) base = argv[i + 1];
  }
  const std::string dir = base + "/trail-stream-bench";
  std::filesystem::create_directories(dir);

  double t_write = 0;
  Manifest m;
  t_write = bench::Seconds([&] { m = WriteCorpus(dir, gb, L); });
  uint64_t tokens = 0, docs = 0;
  for (const auto& s : m.sources) {
    for (const auto& sh : s.shards) tokens += sh.tokens, docs += sh.documents;
  }
  std::printf("corpus: %.2f GB, %llu tokens, %llu documents, 16 shards (written in %.1f s)\n",
              tokens * 2 / 1e9, (unsigned long long)tokens, (unsigned long long)docs, t_write);

  std::unique_ptr<CanonicalStream> stream;
  const double t_open = bench::Seconds([&] { stream = std::make_unique<CanonicalStream>(m); });
  std::printf("open (verifies every shard's SHA-256): %.2f s\n", t_open);

  // 1. Assembly throughput: consecutive windows, each packed (labels, masks, ids, positions).
  PackedBatch batch;
  batch.Resize(1, L);
  RawWindow w;
  const int kWindows = 4096;
  uint64_t next = 1000;
  auto assemble = [&] {
    for (int i = 0; i < kWindows; ++i) {
      batch.input_tokens = batch.real_tokens = batch.target_tokens = 0;
      stream->Window(next++, w);
      PackRow(w, Semantics::kIndependent, batch, 0);
    }
  };
  // Baseline: widen the same number of u16 tokens to int32 (what any loader must at least do).
  std::vector<uint16_t> src(static_cast<size_t>(L + 1) * 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 7);
  std::vector<int32_t> dst(static_cast<size_t>(L + 1));
  auto widen = [&] {
    for (int i = 0; i < kWindows; ++i) {
      const uint16_t* s = src.data() + (i % 64) * (L + 1);
      for (int64_t j = 0; j <= L; ++j) dst[j] = s[j];
      asm volatile("" : : "r"(dst.data()) : "memory");
    }
  };
  const auto [t_asm, t_copy] = bench::InterleavedMedians(assemble, widen, 9);
  const double tok = static_cast<double>(kWindows) * L;
  std::printf(
      "window assembly + packing, L=%lld, 1 core: %.1f M tokens/s (copy-and-widen "
      "baseline %.1f M tokens/s, ratio %.2f)\n",
      (long long)L, tok / t_asm / 1e6, tok / t_copy / 1e6, t_copy / t_asm);

  // 2. Seeks: random windows tens of millions deep; every seek lands in another epoch/shard,
  // so the shard's piece order is rebuilt (cold), as after a restart.
  std::vector<double> seek_ms;
  uint64_t r = 99;
  for (int i = 0; i < 60; ++i) {
    r = Mix64(r);
    const uint64_t target = 10'000'000 + r % 90'000'000;
    seek_ms.push_back(1e3 * bench::Seconds([&] { stream->Window(target, w); }));
  }
  std::sort(seek_ms.begin(), seek_ms.end());
  std::printf(
      "seek to a random window in [1e7, 1e8), cold: median %.2f ms, p90 %.2f ms, max "
      "%.2f ms (target < 10 ms)\n",
      bench::Median(seek_ms), seek_ms[seek_ms.size() * 9 / 10], seek_ms.back());

  // 3. A whole step the way a trainer consumes it: 64 windows after a seek.
  std::vector<double> step_ms;
  for (int i = 0; i < 9; ++i) {
    r = Mix64(r);
    const uint64_t first = 10'000'000 + r % 90'000'000;
    step_ms.push_back(1e3 * bench::Seconds([&] {
                        for (uint64_t k = 0; k < 64; ++k) {
                          batch.input_tokens = 0;
                          stream->Window(first + k, w);
                          PackRow(w, Semantics::kIndependent, batch, 0);
                        }
                      }));
  }
  std::printf("64-window step after a seek: median %.2f ms\n", bench::Median(step_ms));
  std::filesystem::remove_all(dir);
  return 0;
}
