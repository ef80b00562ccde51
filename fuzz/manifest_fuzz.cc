// Data manifest parser (manifest.json) on arbitrary text; an accepted manifest serializes to
// JSON that parses back to the same bytes.
#include "data/manifest.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string text(fuzz::AsText(data, size));
  data::Manifest m;
  if (fuzz::Refused([&] { m = data::ParseManifest(text, "manifest.json", fuzz::ScratchDir()); })) {
    return 0;
  }
  const std::string json = data::ManifestToJson(m);
  const data::Manifest again = data::ParseManifest(json, "again.json", fuzz::ScratchDir());
  if (data::ManifestToJson(again) != json) fuzz::Violated("manifest does not round-trip");
  return 0;
}
