// safetensors reader on arbitrary bytes; what it accepts must be consistent and round-trip.
#include "core/safetensors.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("input.safetensors", fuzz::AsText(data, size));
  SafetensorsFile f;
  if (fuzz::Refused([&] { f = ReadSafetensors(path); })) return 0;
  uint64_t bytes = 0;
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : f.tensors) bytes += t.nbytes(), ptrs.push_back(&t);
  if (bytes > size) fuzz::Violated("tensors hold more bytes than the file");
  // Accepted files are written back and read again unchanged.
  const std::string again = fuzz::ScratchDir() + "/again.safetensors";
  WriteSafetensors(again, ptrs, f.metadata);
  const SafetensorsFile g = ReadSafetensors(again);
  if (g.tensors.size() != f.tensors.size() || g.metadata != f.metadata) {
    fuzz::Violated("a rewritten file reads differently");
  }
  return 0;
}
