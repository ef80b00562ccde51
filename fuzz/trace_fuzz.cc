// Step trace reader (traces/step_N.trace, which an auditor reads from a published run).
#include "fuzz/fuzz_input.h"
#include "train/step_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("step.trace", fuzz::AsText(data, size));
  fuzz::Refused([&] { train::ReadStepTrace(path); });
  return 0;
}
