// Trajectory reader (trajectory.jsonl) on arbitrary bytes, strict and as an auditor reads it
// (the chained prefix); both must agree on what they accept.
#include "fuzz/fuzz_input.h"
#include "train/trajectory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trail;
  const std::string path = fuzz::WriteScratch("trajectory.jsonl", fuzz::AsText(data, size));
  std::string problem;
  uint64_t prefix_bytes = 0, strict_bytes = 0;
  std::vector<train::TrajectoryRecord> prefix;
  fuzz::Refused([&] { prefix = train::ReadChainedPrefix(path, nullptr, &problem, &prefix_bytes); });
  const bool strict_refused =
      fuzz::Refused([&] { train::ReadTrajectory(path, nullptr, &strict_bytes); });
  if (problem.empty() && !strict_refused && strict_bytes != prefix_bytes) {
    fuzz::Violated("strict and prefix readers disagree on the complete bytes");
  }
  if (prefix_bytes > size) fuzz::Violated("complete bytes beyond the file");
  return 0;
}
