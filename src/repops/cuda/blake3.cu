// State-hash leaves on the GPU (blake3_leaf.h): one block a leaf; its threads compute the BLAKE3
// chunks' chaining values, then join them level by level, so only the 32-byte digests leave the
// device.
#include "repops/cuda/blake3_leaf.h"
#include "repops/cuda/launch.h"

namespace trail::repops::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    LeafKernel(const DeviceLeafChunk* chunks, int64_t n, Blake3Words key, uint8_t* digests) {
  __shared__ Blake3Words nodes[kMaxLeafBlake3Chunks];
  for (int64_t leaf = blockIdx.x; leaf < n; leaf += gridDim.x) {
    const DeviceLeafChunk ch = chunks[leaf];
    const auto* elements = reinterpret_cast<const uint32_t*>(ch.data);
    int64_t level = LeafBlake3Chunks(ch.count);
    const bool single = level == 1;
    for (int64_t c = threadIdx.x; c < level; c += kThreads)
      nodes[c] = LeafChunkOutput(elements, ch.count, ch.index, key, c, single);
    __syncthreads();
    while (level > 1) {
      const int64_t pairs = level / 2;
      const bool root = level == 2;
      Blake3Words mine;
      const int64_t p = threadIdx.x;  // pairs <= 128 < kThreads
      if (p < pairs) mine = Blake3ParentOf(nodes[2 * p], nodes[2 * p + 1], key, root);
      const bool carry = (level % 2 == 1) && threadIdx.x == 0;
      const Blake3Words odd = carry ? nodes[level - 1] : Blake3Words{};
      __syncthreads();
      if (p < pairs) nodes[p] = mine;
      if (carry) nodes[pairs] = odd;
      level = pairs + (level % 2);
      __syncthreads();
    }
    if (threadIdx.x < 8) {
      const uint32_t w = nodes[0].w[threadIdx.x];
      uint8_t* out = digests + leaf * 32 + threadIdx.x * 4;
      for (int b = 0; b < 4; ++b) out[b] = static_cast<uint8_t>(w >> (8 * b));
    }
    __syncthreads();
  }
}

}  // namespace

void LaunchChunkLeaves(const DeviceLeafChunk* chunks, int64_t n, const uint32_t* key,
                       uint8_t* digests) {
  if (n == 0) return;
  Blake3Words k;
  for (int i = 0; i < 8; ++i) k.w[i] = key[i];
  LeafKernel<<<static_cast<unsigned>(n < 65535 ? n : 65535), kThreads>>>(chunks, n, k, digests);
}

}  // namespace trail::repops::cuda
