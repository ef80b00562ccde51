// GPU memory for the CUDA backend: the Allocator of a CUDA device (cudaMalloc, zero-filled)
// and a growable scratch buffer of device memory. CUDA errors become trail::Error with the
// operation's name and CUDA's own message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "core/device.h"
#include "repops/cuda/cuda_backend.h"

namespace trail::repops::cuda {

// Throws (a clear message naming `what`) when `status` is not cudaSuccess.
void CheckCuda(cudaError_t status, const char* what);

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  Device device() const override { return {kCudaDevice, index_}; }
  void* Allocate(size_t bytes) override;
  void Free(void* p, size_t bytes) override;
  bool host_addressable() const override { return false; }

 private:
  int index_;
};

// Device memory that only grows: scratch an op reuses across calls.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();
  // At least `bytes` bytes (contents undefined).
  void* Get(size_t bytes);
  template <class T>
  T* As(int64_t n) {
    return static_cast<T*>(Get(static_cast<size_t>(n) * sizeof(T)));
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace trail::repops::cuda
