#include "core/state_hash.h"

#include <blake3.h>

#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"

namespace trail {

ChunkLayout::ChunkLayout(std::span<const int64_t> tensor_sizes) {
  for (size_t t = 0; t < tensor_sizes.size(); ++t) {
    const int64_t n = tensor_sizes[t];
    TRAIL_CHECK(n >= 0, "chunk layout: tensor ", t, " has a negative size");
    for (int64_t off = 0, i = 0; off < n; off += kStateChunkElements, ++i) {
      chunks_.push_back({static_cast<int64_t>(t), i, off, std::min(kStateChunkElements, n - off),
                         elements_ + off});
    }
    elements_ += n;
  }
}

int64_t ChunkLayout::FlatBegin(int64_t c) const {
  TRAIL_CHECK(c >= 0 && c <= size(), "chunk layout: chunk ", c, " of ", size());
  return c == size() ? elements_ : chunks_[c].flat;
}

std::vector<int64_t> ChunkLayout::Split(int64_t parts) const {
  TRAIL_CHECK(parts >= 1, "chunk layout: cannot split into ", parts, " parts");
  std::vector<int64_t> b(parts + 1, size());
  int64_t c = 0;
  for (int64_t q = 0; q < parts; ++q) {
    // q·elements/parts without overflow for any realistic size (elements < 2^47).
    const int64_t target = q * elements_ / parts;
    while (c < size() && chunks_[c].flat < target) ++c;
    b[q] = c;
  }
  return b;
}

Digest ChunkLeafDigest(DType dtype, int64_t index, const void* data, int64_t count) {
  blake3_hasher h;
  blake3_hasher_init_derive_key(&h, kChunkContext);
  // The elements first, so they start on BLAKE3's 1 KiB chunk boundaries and are hashed many
  // chunks at a time; index and count after them.
  ForEachCanonicalPiece(dtype, static_cast<const uint8_t*>(data), static_cast<size_t>(count),
                        [&](const uint8_t* p, size_t n) { blake3_hasher_update(&h, p, n); });
  uint8_t tail[16];
  for (int i = 0; i < 8; ++i) {
    tail[i] = static_cast<uint8_t>(static_cast<uint64_t>(index) >> (8 * i));
    tail[8 + i] = static_cast<uint8_t>(static_cast<uint64_t>(count) >> (8 * i));
  }
  blake3_hasher_update(&h, tail, sizeof tail);
  Digest out{};
  blake3_hasher_finalize(&h, out.data(), out.size());
  return out;
}

Digest MerkleRoot(std::vector<Digest> level) {
  if (level.empty()) return Sha256({});
  while (level.size() > 1) {
    std::vector<Digest> up;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      Sha256Hasher h;
      const uint8_t tag = 1;
      h.Update(&tag, 1);
      h.Update(level[i].data(), 32);
      h.Update(level[i + 1].data(), 32);
      up.push_back(h.Finish());
    }
    if (level.size() % 2) up.push_back(level.back());
    level = std::move(up);
  }
  return level[0];
}

Digest TensorNodeDigest(const std::string& name, DType dtype, std::span<const int64_t> shape,
                        std::span<const Digest> leaves) {
  Sha256Hasher h;
  HashTensorHeader(h, kTensorTag, name, dtype, shape);
  const Digest root = MerkleRoot({leaves.begin(), leaves.end()});
  h.Update(root.data(), root.size());
  return h.Finish();
}

Digest StateRoot(std::vector<std::pair<std::string, Digest>> nodes) {
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Digest> level;
  for (size_t i = 0; i < nodes.size(); ++i) {
    TRAIL_CHECK(i == 0 || nodes[i - 1].first != nodes[i].first,
                "state hash: duplicate tensor name '", nodes[i].first, "'");
    level.push_back(nodes[i].second);
  }
  return MerkleRoot(std::move(level));
}

Digest ElementsRoot(DType dtype, const void* data, int64_t count) {
  const int64_t n = (count + kStateChunkElements - 1) / kStateChunkElements;
  std::vector<Digest> leaves(static_cast<size_t>(n));
  const auto* base = static_cast<const uint8_t*>(data);
  auto leaf = [&](size_t c) {
    const int64_t first = static_cast<int64_t>(c) * kStateChunkElements;
    leaves[c] = ChunkLeafDigest(dtype, static_cast<int64_t>(c), base + first * DTypeSize(dtype),
                                std::min(kStateChunkElements, count - first));
  };
  if (n > 1) {
    KernelPool().ParallelFor(leaves.size(), leaf);
  } else if (n == 1) {
    leaf(0);
  }
  return MerkleRoot(std::move(leaves));
}

Digest StateDigest(std::span<const Tensor* const> tensors) {
  std::vector<int64_t> sizes;
  for (const Tensor* t : tensors) sizes.push_back(t->numel());
  const ChunkLayout layout(sizes);
  std::vector<Digest> leaves(layout.size());
  KernelPool().ParallelFor(leaves.size(), [&](size_t c) {
    const StateChunk& ch = layout.chunks()[c];
    const Tensor& t = *tensors[ch.tensor];
    const auto* base = reinterpret_cast<const uint8_t*>(t.bytes());
    leaves[c] =
        ChunkLeafDigest(t.dtype(), ch.index, base + ch.offset * DTypeSize(t.dtype()), ch.count);
  });
  return StateRootFromLeaves(MetasOf(tensors), layout, leaves);
}

std::vector<TensorMeta> MetasOf(std::span<const Tensor* const> tensors) {
  std::vector<TensorMeta> out;
  for (const Tensor* t : tensors) out.push_back({t->name(), t->dtype(), t->shape()});
  return out;
}

Digest StateRootFromLeaves(std::span<const TensorMeta> tensors, const ChunkLayout& layout,
                           std::span<const Digest> leaves) {
  TRAIL_CHECK(static_cast<int64_t>(leaves.size()) == layout.size(), "state hash: ", leaves.size(),
              " leaves for ", layout.size(), " chunks");
  std::vector<std::pair<std::string, Digest>> nodes;
  size_t c = 0;
  for (size_t t = 0; t < tensors.size(); ++t) {
    const size_t first = c;
    while (c < leaves.size() && layout.chunks()[c].tensor == static_cast<int64_t>(t)) ++c;
    nodes.emplace_back(tensors[t].name,
                       TensorNodeDigest(tensors[t].name, tensors[t].dtype, tensors[t].shape,
                                        leaves.subspan(first, c - first)));
  }
  return StateRoot(std::move(nodes));
}

}  // namespace trail
