// Hugging Face tokenizer.json loader on arbitrary text; a loaded tokenizer encodes and decodes
// a fixed text without failing, and writing it back out loads again.
#include "fuzz/fuzz_input.h"
#include "tokenizer/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("tokenizer.json", fuzz::AsText(data, size));
  std::unique_ptr<tok::Tokenizer> t;
  if (fuzz::Refused([&] { t = tok::LoadHfTokenizerJson(path); })) return 0;
  const std::string text = "Hello, world! 123 \xc3\xa9t\xc3\xa9 \xe2\x82\xac";
  fuzz::Refused([&] {
    const std::vector<uint32_t> ids = t->Encode(text);
    if (t->Decode(ids) != text) fuzz::Violated("a loaded tokenizer does not round-trip");
  });
  const std::string again = fuzz::WriteScratch("again.json", tok::ToHfTokenizerJson(*t));
  tok::LoadHfTokenizerJson(again);  // what trail writes, trail reads
  return 0;
}
