// A GGUF v3 file writer (the format of llama.cpp; docs/inference.md §6):
//   "GGUF", u32 version 3, u64 tensor count, u64 metadata count,
//   metadata: (string key, u32 type, value)…, tensor infos: (string name, u32 n_dims,
//   u64 ne[n_dims] with ne[0] the contiguous dimension, u32 type, u64 offset)…,
//   padding to the alignment, then each tensor's bytes at its offset (aligned). The first
//   metadata entry is general.alignment (u32), the alignment the file uses.
// Strings are u64 length + bytes; arrays u32 element type + u64 count + elements. Little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::infer {

enum class GgufType : uint32_t { kF32 = 0, kF16 = 1 };

// IEEE binary16 of x, rounded to nearest even (overflow to infinity, subnormals kept, NaN kept
// a NaN).
uint16_t FloatToHalf(float x);

class GgufWriter {
 public:
  // Tensor data aligned to `alignment` bytes (GGUF's default 32), recorded as general.alignment.
  explicit GgufWriter(uint32_t alignment = 32);
  void AddU32(const std::string& key, uint32_t v);
  void AddI32(const std::string& key, int32_t v);
  void AddF32(const std::string& key, float v);
  void AddBool(const std::string& key, bool v);
  void AddString(const std::string& key, const std::string& v);
  void AddStringArray(const std::string& key, const std::vector<std::string>& v);
  void AddI32Array(const std::string& key, const std::vector<int32_t>& v);
  // ne in GGML order (ne[0] contiguous); data: float32 values in that order, stored as `type`.
  void AddTensor(const std::string& name, const std::vector<int64_t>& ne, GgufType type,
                 const std::vector<float>& data);
  // Writes the file atomically, streaming: the header, then each tensor's bytes in turn (no
  // copy of the whole file in memory).
  void Write(const std::string& path) const;

 private:
  struct TensorInfo {
    std::string name;
    std::vector<int64_t> ne;
    GgufType type;
    std::string bytes;
  };
  uint64_t alignment_;
  std::string kv_;
  uint64_t kv_count_ = 0;
  std::vector<TensorInfo> tensors_;
};

}  // namespace trail::infer
