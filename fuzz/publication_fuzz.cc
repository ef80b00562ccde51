// The publication reader (what a remote audit fetches first, audit/publication.h): parsing,
// bounds and signature verification on arbitrary bytes, then the lookups a fetch makes.
#include "audit/publication.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string text(fuzz::AsText(data, size));
  fuzz::Refused([&] {
    const audit::Publication p = audit::ParsePublication(text, "publication.json");
    (void)p.total_bytes();
    for (const fetch::RemoteFile& f : p.files) {
      if (p.Find(f.path) != &f || f.num_chunks() * f.chunk_bytes < f.size) __builtin_trap();
    }
  });
  return 0;
}
