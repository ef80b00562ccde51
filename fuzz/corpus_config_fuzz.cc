// Corpus factory configuration (TOML) on arbitrary text.
#include "corpus/pipeline/config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("corpus.toml", fuzz::AsText(data, size));
  fuzz::Refused([&] { corpus::LoadCorpusConfig(path); });
  return 0;
}
