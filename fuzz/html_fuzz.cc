// HTML text extraction on arbitrary bytes: never fails, and its text is valid UTF-8.
#include "core/utf8.h"
#include "corpus/read/extract.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const corpus::ExtractedHtml h = corpus::ExtractHtml(fuzz::AsText(data, size));
  if (ValidUtf8Prefix(h.text) != h.text.size()) fuzz::Violated("extracted text is not UTF-8");
  if (h.text.size() > 4 * size + 64) fuzz::Violated("extracted text grew without bound");
  return 0;
}
