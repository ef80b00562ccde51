// WARC reader (.warc or .warc.gz by the input's magic bytes): corrupt records are quarantined and
// reading resumes; documents are valid UTF-8.
#include "core/utf8.h"
#include "corpus/read/reader.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/records_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string_view input = fuzz::AsText(data, size);
  const std::string path = fuzz::WriteScratch("input.warc" + fuzz::CompressionSuffix(input), input);
  uint64_t skipped = 0;
  fuzz::Refused([&] {
    corpus::ReadWarcRecords(
        path, 1 << 16,
        [&](corpus::RawRecord&& r) {
          if (!IsValidUtf8(r.text)) fuzz::Violated("document not UTF-8");
        },
        [&](corpus::Quarantined&& q) {
          if (q.reason.empty()) fuzz::Violated("quarantined without a reason");
        },
        &skipped);
  });
  return 0;
}
