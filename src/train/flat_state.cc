#include "train/flat_state.h"

#include <algorithm>

#include "core/error.h"

namespace trail::train {

int64_t FlatState::ChunkAt(int64_t flat) const {
  const auto& ch = layout_.chunks();
  const auto it = std::lower_bound(ch.begin(), ch.end(), flat,
                                   [](const StateChunk& c, int64_t f) { return c.flat < f; });
  const int64_t c = it - ch.begin();
  TRAIL_CHECK(layout_.FlatBegin(c) == flat, "flat offset ", flat, " is not a chunk boundary");
  return c;
}

FlatState::FlatState(std::span<const int64_t> tensor_sizes) : layout_(tensor_sizes) {
  tensor_begin_.push_back(0);
  for (int64_t n : tensor_sizes) tensor_begin_.push_back(tensor_begin_.back() + n);
}

void FlatState::ForEachPiece(
    int64_t begin, int64_t count,
    const std::function<void(size_t, int64_t, int64_t, int64_t)>& fn) const {
  const int64_t end = begin + count;
  TRAIL_CHECK(begin >= 0 && count >= 0 && end <= tensor_begin_.back(), "flat range [", begin, ", ",
              end, ") outside the state's ", tensor_begin_.back(), " elements");
  // The first tensor ending after begin.
  size_t t = std::upper_bound(tensor_begin_.begin(), tensor_begin_.end(), begin) -
             tensor_begin_.begin() - 1;
  for (int64_t at = begin; at < end; ++t) {
    const int64_t n = std::min(end, tensor_begin_[t + 1]) - at;
    if (n > 0) fn(t, at - tensor_begin_[t], n, at);
    at += std::max<int64_t>(n, 0);
  }
}

void FlatState::Read(repops::Backend& be, const std::vector<DeviceTensor>& tensors, int64_t begin,
                     int64_t count, float* out) const {
  ForEachPiece(begin, count, [&](size_t t, int64_t off, int64_t n, int64_t flat) {
    const TensorView piece = TensorView::Contiguous(
        const_cast<float*>(tensors[t].data<float>() + off), DType::kF32, be.device(), {n});
    be.CopyToHost(piece, out + (flat - begin));
  });
}

void FlatState::Write(repops::Backend& be, std::vector<DeviceTensor>& tensors, int64_t begin,
                      std::span<const float> values) const {
  ForEachPiece(begin, static_cast<int64_t>(values.size()),
               [&](size_t t, int64_t off, int64_t n, int64_t flat) {
                 const TensorView piece = TensorView::Contiguous(tensors[t].data<float>() + off,
                                                                 DType::kF32, be.device(), {n});
                 be.CopyFromHost(values.data() + (flat - begin), piece);
               });
}

std::vector<Digest> FlatState::Leaves(repops::Backend& be, const std::vector<DeviceTensor>& tensors,
                                      int64_t c0, int64_t c1) const {
  std::vector<repops::LeafChunk> chunks;
  for (int64_t c = c0; c < c1; ++c) {
    const StateChunk& ch = layout_.chunks()[c];
    chunks.push_back({tensors[ch.tensor].data<float>() + ch.offset, ch.index, ch.count});
  }
  std::vector<Digest> out(chunks.size());
  be.ChunkLeaves(chunks, out.data());
  return out;
}

std::vector<repops::LeafChunk> FlatState::RangeChunks(const float* range, int64_t c0,
                                                      int64_t c1) const {
  const int64_t base = layout_.FlatBegin(c0);
  std::vector<repops::LeafChunk> chunks;
  for (int64_t c = c0; c < c1; ++c) {
    const StateChunk& ch = layout_.chunks()[c];
    chunks.push_back({range + (ch.flat - base), ch.index, ch.count});
  }
  return chunks;
}

std::vector<Digest> FlatState::Leaves(repops::Backend& be, const float* range, int64_t c0,
                                      int64_t c1) const {
  const std::vector<repops::LeafChunk> chunks = RangeChunks(range, c0, c1);
  std::vector<Digest> out(chunks.size());
  be.ChunkLeaves(chunks, out.data());
  return out;
}

std::vector<float> FlatState::ChunkSumSqs(repops::Backend& be, const float* range, int64_t c0,
                                          int64_t c1) const {
  const std::vector<repops::LeafChunk> chunks = RangeChunks(range, c0, c1);
  std::vector<float> out(chunks.size());
  be.ChunkSumSqs(chunks, out.data());
  return out;
}

}  // namespace trail::train
