// Encode throughput of trail's tokenizer on one thread (and on N threads over lines), in MB/s.
//   tokenizer_bench RANK_OR_JSON_FILE TEXT_FILE [repeats] [threads]
// Prints one line: "<MB/s single-thread median> <tokens> <MB/s with threads>";
// bench/run_tokenizer_bench.sh runs it side by side with the reference encoders under node.
// threads = 0 (the worst-case rows: one long piece) skips the batch run and prints instead
// "<median seconds> <tokens> <peak RSS in MB>".
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/file_util.h"
#include "tokenizer/loaders.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tokenizer_bench TOKENIZER TEXT [repeats] [threads]\n");
    return 2;
  }
  const auto tok = trail::tok::LoadTokenizer(argv[1]);
  const std::string text = trail::ReadFileToString(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 2;
  std::vector<double> t;
  size_t tokens = 0;
  for (int r = 0; r <= repeats; ++r) {
    std::vector<uint32_t> ids;
    const double s = trail::bench::Seconds([&] { tok->EncodeOrdinary(text, ids); });
    if (r > 0) t.push_back(s);  // the first run warms the caches
    tokens = ids.size();
  }
  if (threads == 0) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("%.3f %zu %.0f\n", trail::bench::Median(t), tokens, usage.ru_maxrss / 1024.0);
    return 0;
  }
  // Many documents over threads (lines stand in for documents).
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    lines.emplace_back(text.substr(pos, eol + 1 - pos));
    pos = eol + 1;
  }
  std::vector<double> tt;
  for (int r = 0; r < 3; ++r) {
    tt.push_back(trail::bench::Seconds([&] { tok->EncodeBatch(lines, threads); }));
  }
  const double mb = text.size() / 1e6;
  std::printf("%.2f %zu %.2f\n", mb / trail::bench::Median(t), tokens,
              mb / trail::bench::Median(tt));
  return 0;
}
