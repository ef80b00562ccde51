// The tokenizer's encoder on arbitrary bytes, with round trip as the oracle: decode(encode(x))
// is x byte for byte (any bytes: invalid UTF-8 is encoded byte by byte), every id is in the
// vocabulary, and encoding again (now through the piece cache) gives the same ids.
//
// Tokenizers: the files named in $TRAIL_FUZZ_TOKENIZERS (colon-separated; `make fuzz` passes
// cl100k_base and o200k_base), else a small BPE trained at start-up with the cl100k pattern.
#include <cstdlib>
#include <sstream>

#include "fuzz/fuzz_input.h"
#include "tokenizer/loaders.h"
#include "tokenizer/trainer.h"

namespace {

using trail::tok::Tokenizer;

std::vector<std::unique_ptr<Tokenizer>> MakeTokenizers() {
  std::vector<std::unique_ptr<Tokenizer>> out;
  if (const char* list = std::getenv("TRAIL_FUZZ_TOKENIZERS"); list != nullptr && *list) {
    std::stringstream paths(list);
    for (std::string p; std::getline(paths, p, ':');) out.push_back(trail::tok::LoadTokenizer(p));
    return out;
  }
  const std::vector<std::string> docs = {
      "In the beginning God created the heaven and the earth. And the earth was without form.",
      "Il était une fois, dans un pays lointain, 1234 élèves qui n'aimaient pas l'été.",
      "Ein Vogel sang: »Grüß Gott!« — 3.14159 ist π; 東京は日本の首都です。 Привет, мир!",
      "def f(x):\n    return x ** 2  # squares\n\n\tif (a && b) { c++; }\r\n",
  };
  trail::tok::TrainOptions opt;
  opt.vocab_size = 400;
  opt.pattern = trail::tok::NamedPattern("cl100k");
  opt.specials = {"<|endoftext|>"};
  opt.min_frequency = 1;
  out.push_back(trail::tok::TrainBpe(docs, opt));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  static const std::vector<std::unique_ptr<Tokenizer>> tokenizers = MakeTokenizers();
  const std::string_view text = fuzz::AsText(data, size);
  for (const auto& t : tokenizers) {
    tok::EncodeOptions all;
    all.allow_all_special = true;
    for (const tok::EncodeOptions& opt : {tok::EncodeOptions{}, all}) {
      const std::vector<uint32_t> ids = t->Encode(text, opt);
      for (uint32_t id : ids) {
        if (id >= t->vocab_size()) fuzz::Violated(t->name() + ": id beyond the vocabulary");
      }
      if (t->Decode(ids) != text) fuzz::Violated(t->name() + ": decode(encode(x)) != x");
      if (t->Encode(text, opt) != ids) fuzz::Violated(t->name() + ": encoding is not stable");
    }
  }
  return 0;
}
