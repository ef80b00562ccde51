// tiktoken rank file loader on arbitrary text (as r50k_base, the smallest published encoding;
// the SHA-256 pin is off so that the parser itself is reached).
#include "fuzz/fuzz_input.h"
#include "tokenizer/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("r50k_base.tiktoken", fuzz::AsText(data, size));
  fuzz::Refused([&] { tok::LoadTiktoken("r50k_base", path, /*verify_pin=*/false); });
  return 0;
}
