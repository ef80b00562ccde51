// Ops of the backend interface that exist only on it (the free functions have no counterpart):
// each backend gives the bits of the per-element definition.
#include <gtest/gtest.h>

#include <vector>

#include "repops/backend.h"
#include "repops/cpu_backend.h"
#include "repops/guarded_backend.h"
#include "repops/test_util.h"

namespace trail::repops {
namespace {

using testing::Bits;
using testing::Rand;

// ChunkSumSqs = SumSq chunk by chunk, on the CPU and on the guarded device.
TEST(Backend, ChunkSumSqsIsSumSqOfEachChunk) {
  const std::vector<int64_t> counts = {0, 1, 17, 4096, 65536, 300};
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const std::vector<float> x = Rand(total, 21, 3.0f);
  CpuBackend cpu;
  GuardedBackend guarded;
  for (Backend* be : {static_cast<Backend*>(&cpu), static_cast<Backend*>(&guarded)}) {
    const Buffer dev = UploadTo(*be, x.data(), total);
    std::vector<LeafChunk> chunks;
    int64_t off = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      chunks.push_back({dev.data<float>() + off, static_cast<int64_t>(i), counts[i]});
      off += counts[i];
    }
    std::vector<float> got(chunks.size());
    be->ChunkSumSqs(chunks, got.data());
    off = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      EXPECT_EQ(Bits(got[i]), Bits(ActiveKernels().sum_sq(x.data() + off, counts[i])))
          << be->description() << " chunk " << i;
      off += counts[i];
    }
  }
}

}  // namespace
}  // namespace trail::repops
