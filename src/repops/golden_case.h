// What the golden suite's cases share (golden_suite.cc, golden_ops.cc): Philox inputs, the
// per-case digest, and device arrays for the cases that run through a backend.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/hash.h"
#include "repops/backend.h"
#include "repops/golden_suite.h"

namespace trail::repops::golden {

using Vec = std::vector<float>;

// Inputs: uniform in [-scale, scale) from stream `stream` of seed 2024.
Vec Rand(int64_t n, uint64_t stream, float scale = 1.0f);

// A case's digest: SHA-256 over the digests of its outputs, in order (docs/goldens.md).
class CaseHasher {
 public:
  void Add(const std::string& name, const float* data, int64_t n);
  void Add(const std::string& name, const Vec& v) {
    Add(name, v.data(), static_cast<int64_t>(v.size()));
  }
  void AddScalar(const std::string& name, float f) { Add(name, &f, 1); }
  void AddI32(const std::string& name, const int32_t* data, int64_t n);
  std::string Finish() { return ToHex(h_.Finish()); }
  // The buffers added so far, in order (moved out).
  std::vector<GoldenBuffer> TakeBuffers() { return std::move(buffers_); }

 private:
  void Record(const std::string& name, bool i32, const void* data, int64_t n, const Digest& d);
  Sha256Hasher h_;
  std::vector<GoldenBuffer> buffers_;
};

// A case on the CPU kernels of the active SIMD target.
using KernelCase = std::function<void(CaseHasher&)>;
// A case whose every op runs through a backend; its inputs are uploaded and its outputs
// downloaded to be hashed, so it gives the same digest on every backend.
using OpCase = std::function<void(CaseHasher&, Backend&)>;

void AddKernelCases(std::vector<std::pair<std::string, KernelCase>>& cases);
void AddOpCases(std::vector<std::pair<std::string, OpCase>>& cases);

// The arrays of one op case on a backend's device, freed with it.
class DeviceArrays {
 public:
  explicit DeviceArrays(Backend& be) : be_(be) {}
  float* Up(const Vec& host);  // a device copy of host
  float* Zeros(int64_t n);
  int32_t* UpI32(const std::vector<int32_t>& host);
  uint8_t* UpU8(const std::vector<uint8_t>& host);
  Vec Down(const float* device, int64_t n) const;  // a host copy

 private:
  Backend& be_;
  std::vector<Buffer> buffers_;
};

}  // namespace trail::repops::golden
