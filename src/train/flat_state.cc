#include "train/flat_state.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/thread_pool.h"

namespace trail::train {

int64_t FlatState::ChunkAt(int64_t flat) const {
  const auto& ch = layout_.chunks();
  const auto it = std::lower_bound(ch.begin(), ch.end(), flat,
                                   [](const StateChunk& c, int64_t f) { return c.flat < f; });
  const int64_t c = it - ch.begin();
  TRAIL_CHECK(layout_.FlatBegin(c) == flat, "flat offset ", flat, " is not a chunk boundary");
  return c;
}

void FlatState::ForEachChunk(
    int64_t c0, int64_t c1,
    const std::function<void(int64_t, int64_t, int64_t, int64_t)>& fn) const {
  for (int64_t c = c0; c < c1; ++c) {
    const StateChunk& ch = layout_.chunks()[c];
    fn(ch.tensor, ch.offset, ch.count, ch.flat);
  }
}

void FlatState::Read(const std::vector<Tensor>& tensors, int64_t begin, int64_t count,
                     float* out) const {
  ForEachChunk(ChunkAt(begin), ChunkAt(begin + count), [&](int64_t t, int64_t off, int64_t n,
                                                          int64_t flat) {
    std::memcpy(out + (flat - begin), tensors[t].data<float>() + off, n * sizeof(float));
  });
}

void FlatState::Write(std::vector<Tensor>& tensors, int64_t begin,
                      std::span<const float> values) const {
  const int64_t end = begin + static_cast<int64_t>(values.size());
  ForEachChunk(ChunkAt(begin), ChunkAt(end), [&](int64_t t, int64_t off, int64_t n, int64_t flat) {
    std::memcpy(tensors[t].data<float>() + off, values.data() + (flat - begin), n * sizeof(float));
  });
}

std::vector<Digest> FlatState::Leaves(const std::vector<Tensor>& tensors, int64_t c0,
                                      int64_t c1) const {
  std::vector<Digest> out(c1 - c0);
  KernelPool().ParallelFor(out.size(), [&](size_t i) {
    const StateChunk& ch = layout_.chunks()[c0 + i];
    out[i] = ChunkLeafDigest(DType::kF32, ch.index, tensors[ch.tensor].data<float>() + ch.offset,
                             ch.count);
  });
  return out;
}

std::vector<Digest> FlatState::Leaves(const float* range, int64_t c0, int64_t c1) const {
  std::vector<Digest> out(c1 - c0);
  const int64_t base = layout_.FlatBegin(c0);
  KernelPool().ParallelFor(out.size(), [&](size_t i) {
    const StateChunk& ch = layout_.chunks()[c0 + i];
    out[i] = ChunkLeafDigest(DType::kF32, ch.index, range + (ch.flat - base), ch.count);
  });
  return out;
}

}  // namespace trail::train
