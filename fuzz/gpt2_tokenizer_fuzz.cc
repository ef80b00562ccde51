// GPT-2's encoder.json + vocab.bpe loader; the input holds both files, separated by a line
// "--8<--".
#include "fuzz/fuzz_input.h"
#include "tokenizer/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::vector<std::string> parts = fuzz::SplitParts(fuzz::AsText(data, size), 2);
  const std::string enc = fuzz::WriteScratch("encoder.json", parts[0]);
  const std::string bpe = fuzz::WriteScratch("vocab.bpe", parts[1]);
  fuzz::Refused([&] { tok::LoadGpt2(enc, bpe); });
  return 0;
}
