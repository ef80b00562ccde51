// JSONL document reader (dolma schema; plain, .gz, .zst by the input's magic bytes): it never
// stops on a bad record — every record is a document or quarantined, nothing throws — and what
// it hands on is valid UTF-8 within the record limit.
#include "core/utf8.h"
#include "corpus/read/reader.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/records_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string_view input = fuzz::AsText(data, size);
  const std::string name = "input.jsonl" + fuzz::CompressionSuffix(input);
  const std::string path = fuzz::WriteScratch(name, input);
  constexpr uint64_t kMaxRecord = 1 << 16;
  fuzz::Refused([&] {  // only an unreadable file (e.g. a corrupt stream header) may throw
    corpus::ReadJsonlRecords(
        path, kMaxRecord,
        [&](corpus::RawRecord&& r) {
          if (!IsValidUtf8(r.text) || !IsValidUtf8(r.id)) fuzz::Violated("document not UTF-8");
          if (r.text.size() > kMaxRecord) fuzz::Violated("document beyond the record limit");
        },
        [&](corpus::Quarantined&& q) {
          if (q.reason.empty()) fuzz::Violated("quarantined without a reason");
        });
  });
  return 0;
}
