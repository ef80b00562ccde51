#include "repops/devices.h"

#include "core/error.h"
#include "repops/cpu_backend.h"
#include "repops/guarded_backend.h"
#ifdef TRAIL_HAVE_CUDA
#include "repops/cuda/cuda_backend.h"
#endif

namespace trail::repops {

std::unique_ptr<Backend> MakeBackend(const Device& device, const Kernels& host_kernels) {
  switch (device.kind) {
    case DeviceKind::kCpu:
      return std::make_unique<CpuBackend>(host_kernels, HostAllocator());
    case DeviceKind::kGuarded:
      return std::make_unique<GuardedBackend>(host_kernels);
    case DeviceKind::kCuda:
#ifdef TRAIL_HAVE_CUDA
      return MakeCudaBackend(device.index, host_kernels);
#else
      break;
#endif
  }
  TRAIL_FAIL("this build of trail has no backend for ", device.ToString(),
             " (it was built without CUDA: nvcc was not found when it was configured); devices "
             "here: cpu");
}

std::unique_ptr<Backend> MakeBackend(const Device& device) {
  return MakeBackend(device, ActiveKernels());
}

std::vector<std::string> AvailableDevices() {
  std::vector<std::string> out = {"cpu"};
#ifdef TRAIL_HAVE_CUDA
  for (int i = 0; i < CudaDeviceCount(); ++i) out.push_back("cuda:" + std::to_string(i));
#endif
  return out;
}

}  // namespace trail::repops
