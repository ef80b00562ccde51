#include "repops/devices.h"

#include "core/error.h"
#include "repops/cpu_backend.h"
#include "repops/guarded_backend.h"

namespace trail::repops {

std::unique_ptr<Backend> MakeBackend(const Device& device) {
  switch (device.kind) {
    case DeviceKind::kCpu:
      return std::make_unique<CpuBackend>();
    case DeviceKind::kGuarded:
      return std::make_unique<GuardedBackend>();
    case DeviceKind::kCuda:
      break;
  }
  TRAIL_FAIL("this build of trail has no backend for ", device.ToString(),
             " (it was built without CUDA); devices here: cpu");
}

std::vector<std::string> AvailableDevices() { return {"cpu"}; }

}  // namespace trail::repops
