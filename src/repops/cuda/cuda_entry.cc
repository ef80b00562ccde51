// The CUDA backend's registry entry, compiled in every build: with the backend where nvcc was
// found, and otherwise an entry that says the build lacks it.
#include "repops/cuda/cuda_backend.h"

namespace trail::repops {
namespace {

#ifdef TRAIL_HAVE_CUDA
std::unique_ptr<Backend> Make(const Device& device, const Kernels& host_kernels) {
  return MakeCudaBackend(device.index, host_kernels);
}
constexpr decltype(BackendEntry::count) kCount = CudaDeviceCount;
constexpr decltype(BackendEntry::make) kMake = Make;
constexpr std::string_view kMissing = "";
#else
constexpr decltype(BackendEntry::count) kCount = nullptr;
constexpr decltype(BackendEntry::make) kMake = nullptr;
constexpr std::string_view kMissing =
    "it was built without CUDA: nvcc was not found when it was configured";
#endif

}  // namespace

const BackendEntry& CudaBackendEntry() {
  static const BackendEntry entry{.kind = kCudaDevice,
                                  .what = "an NVIDIA GPU (the CUDA backend)",
                                  .for_users = true,
                                  .count = kCount,
                                  .make = kMake,
                                  .missing = kMissing};
  return entry;
}

}  // namespace trail::repops
