// Training recipe (TOML) on arbitrary text.
#include "fuzz/fuzz_input.h"
#include "train/recipe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string text(fuzz::AsText(data, size));
  fuzz::Refused([&] { train::ParseRecipe(text, "recipe.toml", /*data_vocab=*/512); });
  return 0;
}
