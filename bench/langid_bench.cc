// Language ID throughput, one thread: trail's native fastText inference against libfasttext
// (Debian's libfasttext0, called as the corpus factory called it: predictLine on one line per
// document, k = 1) on the same documents, alternating rounds; MB/s of input and the ratio. Both
// must give the same answers (checked while timing).
//   langid_bench MODEL.ftz FILE... (each file's blank-line-separated paragraphs are documents)
#include <fasttext/fasttext.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/file_util.h"
#include "corpus/langid/fasttext_predict.h"

using namespace trail;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: langid_bench MODEL.ftz FILE...\n");
    return 2;
  }
  std::vector<std::string> docs;
  size_t bytes = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string text = ReadFileToString(argv[i]);
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find("\n\n", pos);
      if (end == std::string::npos) end = text.size();
      std::string doc = text.substr(pos, end - pos);
      for (char& c : doc) c = (c == '\n' || c == '\r') ? ' ' : c;
      if (!doc.empty()) bytes += doc.size(), docs.push_back(std::move(doc));
      pos = end + 2;
    }
  }
  fasttext::FastText ref;
  ref.loadModel(argv[1]);
  const corpus::ft::Predictor native(corpus::ft::LoadModel(argv[1]));
  std::vector<std::string> want(docs.size()), got(docs.size());
  auto run_ref = [&] {
    std::vector<std::pair<fasttext::real, std::string>> preds;
    for (size_t i = 0; i < docs.size(); ++i) {
      std::istringstream in(docs[i] + "\n");
      ref.predictLine(in, preds, 1, 0.0);
      want[i] = preds.empty() ? "" : preds[0].second;
    }
  };
  auto run_native = [&] {
    for (size_t i = 0; i < docs.size(); ++i) {
      const auto p = native.Predict(docs[i], 1);
      got[i] = p.empty() ? "" : native.Label(p[0].label);
    }
  };
  const auto [t_ref, t_native] = bench::InterleavedMedians(run_ref, run_native, 5);
  if (want != got) {
    std::fprintf(stderr, "FAIL: native and libfasttext labels differ\n");
    return 1;
  }
  const double mb = double(bytes) / 1e6;
  std::printf("language ID, %zu documents, %.1f MB, one thread (medians of 5 alternating rounds)\n",
              docs.size(), mb);
  std::printf("  libfasttext predictLine  %8.1f MB/s\n", mb / t_ref);
  std::printf("  trail native             %8.1f MB/s   %.2fx\n", mb / t_native, t_ref / t_native);
  return 0;
}
