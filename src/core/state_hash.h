// The state hash (format "trail.state.v3") and the fixed logical chunks it is built from.
//
// Every tensor of a state (parameters, gradients, optimizer moments) is cut into chunks of
// kStateChunkElements elements, the last chunk of a tensor shorter. Chunks are the leaves of the
// state hash, the partial sums of the gradient norm, and the unit in which processes own
// optimizer state. They depend on the tensors' sizes only — never on the number of processes —
// so a process can hash or norm just the chunks it owns and every process count gets the same
// root and the same norm.
//
//   leaf(t, i)  = BLAKE3-256 in derive-key mode with context "trail.chunk.v3", over
//                 elements ‖ i (u64 LE) ‖ element count (u64 LE)
//   node(t)     = SHA-256("trail.tensor.v3" ‖ name length (u64 LE) ‖ name ‖ dtype code (u8) ‖
//                         rank (u64 LE) ‖ dimensions (i64 LE each) ‖ Merkle(leaf(t, 0..))),
//   root        = Merkle(node(t) for tensors sorted by name)
// Elements are little-endian with every NaN replaced by the canonical quiet NaN (as in
// TensorDigest). Merkle(list): parent = SHA-256(0x01 ‖ left ‖ right) level by level, an odd
// node at the end of a level carried up unchanged; Merkle of no nodes = SHA-256("").
// The leaves carry every byte of the state, so their hash decides the cost: BLAKE3 (its
// official C code with AVX-512/AVX2/NEON dispatch) hashes them about 4× faster than SHA-256
// with the SHA extensions (docs/performance.md); the few inner nodes stay SHA-256.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "core/tensor.h"

namespace trail {

inline constexpr int64_t kStateChunkElements = int64_t{1} << 16;
inline constexpr const char* kChunkContext = "trail.chunk.v3";
inline constexpr const char* kTensorTag = "trail.tensor.v3";

struct StateChunk {
  int64_t tensor = 0;  // index in the state's tensor list
  int64_t index = 0;   // chunk number inside the tensor
  int64_t offset = 0;  // first element inside the tensor
  int64_t count = 0;   // elements
  int64_t flat = 0;    // first element in the concatenation of all tensors
};

// The chunks of a list of tensors, in list order (tensor by tensor, ascending inside each).
class ChunkLayout {
 public:
  explicit ChunkLayout(std::span<const int64_t> tensor_sizes);
  const std::vector<StateChunk>& chunks() const { return chunks_; }
  int64_t size() const { return static_cast<int64_t>(chunks_.size()); }
  int64_t elements() const { return elements_; }
  // Flat element offset where chunk c starts (c == size() gives elements()).
  int64_t FlatBegin(int64_t c) const;
  // parts + 1 chunk boundaries cutting the chunks into `parts` contiguous ranges of about equal
  // element counts: boundary q is the first chunk whose flat start is ≥ q·elements/parts.
  std::vector<int64_t> Split(int64_t parts) const;

 private:
  std::vector<StateChunk> chunks_;
  int64_t elements_ = 0;
};

Digest ChunkLeafDigest(DType dtype, int64_t index, const void* data, int64_t count);
Digest MerkleRoot(std::vector<Digest> level);
// node(t) from its leaves, in chunk order.
Digest TensorNodeDigest(const std::string& name, DType dtype, std::span<const int64_t> shape,
                        std::span<const Digest> leaves);
// The root over (name, node) pairs, sorted by name here; names must be unique.
Digest StateRoot(std::vector<std::pair<std::string, Digest>> nodes);

// What a tensor's node records besides its leaves.
struct TensorMeta {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
};
std::vector<TensorMeta> MetasOf(std::span<const Tensor* const> tensors);

// The root from every chunk's leaf, in the chunk order of `layout` (built over these tensors).
Digest StateRootFromLeaves(std::span<const TensorMeta> tensors, const ChunkLayout& layout,
                           std::span<const Digest> leaves);

// Merkle(leaf(0..)) of one buffer of `count` elements: the root a tensor node commits to, used
// alone where the name and shape are recorded beside it (operation traces). Leaves are hashed
// on the kernel pool.
Digest ElementsRoot(DType dtype, const void* data, int64_t count);

// The whole state hash of tensors held in this process (leaves hashed on the kernel pool).
Digest StateDigest(std::span<const Tensor* const> tensors);

}  // namespace trail
