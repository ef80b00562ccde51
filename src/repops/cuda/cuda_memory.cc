#include "repops/cuda/cuda_memory.h"

#include "core/error.h"

namespace trail::repops::cuda {

void CheckCuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  TRAIL_FAIL("CUDA error in ", what, ": ", cudaGetErrorName(status), " (",
             cudaGetErrorString(status), ")");
}

void* CudaAllocator::Allocate(size_t bytes) {
  void* p = nullptr;
  // cudaMalloc aligns to at least 256 bytes; a 0-byte request still gets its own allocation.
  const size_t n = bytes > 0 ? bytes : 1;
  const cudaError_t status = cudaMalloc(&p, n);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear it, so later calls do not report it again
    TRAIL_FAIL("cannot allocate ", bytes, " bytes on cuda:", index_, ": ",
               cudaGetErrorString(status));
  }
  CheckCuda(cudaMemset(p, 0, n), "zero-filling a new allocation");
  return p;
}

void CudaAllocator::Free(void* p, size_t) {
  if (p != nullptr) cudaFree(p);  // in a destructor: an error here cannot be reported usefully
}

Scratch::~Scratch() {
  if (data_ != nullptr) cudaFree(data_);
}

void* Scratch::Get(size_t bytes) {
  if (bytes <= bytes_ && data_ != nullptr) return data_;
  if (data_ != nullptr) {
    // Kernels queued earlier may still read the old buffer.
    CheckCuda(cudaDeviceSynchronize(), "growing scratch memory");
    CheckCuda(cudaFree(data_), "freeing scratch memory");
    data_ = nullptr, bytes_ = 0;
  }
  const size_t n = bytes > 256 ? bytes : 256;
  CheckCuda(cudaMalloc(&data_, n), "allocating scratch memory");
  bytes_ = n;
  return data_;
}

}  // namespace trail::repops::cuda
