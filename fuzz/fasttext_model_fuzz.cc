// fastText model reader and native inference on arbitrary bytes: a model it accepts predicts
// without crashing or unbounded work, at most k labels, in range, best first.
#include "corpus/langid/fasttext_predict.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("input.ftz", fuzz::AsText(data, size));
  corpus::ft::Model model;
  if (fuzz::Refused([&] { model = corpus::ft::LoadModel(path); })) return 0;
  const corpus::ft::Predictor p(std::move(model));
  for (const char* line : {"", "hello world", "Ein kleiner Text auf Deutsch", "__label__x y </s> z",
                           "\xe6\x97\xa5\xe6\x9c\xac \xff\x80"}) {
    for (int32_t k : {1, 3}) {
      std::vector<corpus::ft::Prediction> preds;
      if (fuzz::Refused([&] { preds = p.Predict(line, k); })) continue;  // e.g. NaN weights
      if (int32_t(preds.size()) > k) fuzz::Violated("more than k predictions");
      for (size_t i = 0; i < preds.size(); ++i) {
        if (preds[i].label < 0 || preds[i].label >= p.num_labels())
          fuzz::Violated("label out of range");
        if (i > 0 && preds[i].score > preds[i - 1].score)
          fuzz::Violated("predictions not best first");
      }
    }
  }
  return 0;
}
