// Audit attestation reader (what `trail audit collect` reads from every auditor): parsing and
// signature verification on arbitrary bytes.
#include "audit/attestation.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("attestation.json", fuzz::AsText(data, size));
  fuzz::Refused([&] { audit::ReadSignedAttestation(path); });
  return 0;
}
