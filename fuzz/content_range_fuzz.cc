// The Content-Range parser of the HTTP source (fetch/content_range.h): any header either gives
// first <= last (< total when given) or nothing.
#include "fetch/content_range.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto r = trail::fetch::ParseContentRange(std::string(trail::fuzz::AsText(data, size)));
  if (r && (r->first > r->last || (r->total && r->last >= *r->total))) __builtin_trap();
  return 0;
}
