#include "repops/devices.h"

#include <charconv>

#include "core/error.h"
#include "repops/cpu_backend.h"
#include "repops/cuda/cuda_backend.h"
#include "repops/guarded_backend.h"

namespace trail::repops {
namespace {

std::unique_ptr<Backend> MakeCpu(const Device&, const Kernels& host_kernels) {
  return std::make_unique<CpuBackend>(host_kernels, HostAllocator());
}

std::unique_ptr<Backend> MakeGuarded(const Device&, const Kernels& host_kernels) {
  return std::make_unique<GuardedBackend>(host_kernels);
}

const BackendEntry& EntryOf(const DeviceKind& kind) {
  for (const BackendEntry& e : RegisteredBackends()) {
    if (e.kind == kind) return e;
  }
  TRAIL_FAIL("no backend is registered for devices of kind '", kind.name, "'");
}

// "N" of "name:N": a non-negative decimal that fits an int; -1 otherwise.
int OrdinalOf(std::string_view n) {
  int index = -1;
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
  return ec == std::errc() && end == n.data() + n.size() && !n.empty() ? index : -1;
}

}  // namespace

std::span<const BackendEntry> RegisteredBackends() {
  // A new backend adds its entry here (and nowhere else outside its folder).
  static const std::vector<BackendEntry> registry = {
      {.kind = kCpuDevice,
       .what = "the host's memory and CPU kernels",
       .for_users = true,
       .count = nullptr,
       .make = MakeCpu,
       .missing = ""},
      {.kind = kGuardedDevice,
       .what = "a test device: the CPU backend on memory only its ops may touch",
       .for_users = false,
       .count = nullptr,
       .make = MakeGuarded,
       .missing = ""},
      CudaBackendEntry(),
  };
  return registry;
}

std::string DeviceSpellings() {
  std::vector<std::string> names;
  for (const BackendEntry& e : RegisteredBackends()) {
    if (!e.for_users) continue;
    names.emplace_back(e.kind.name);
    if (e.kind.numbered) names.push_back(std::string(e.kind.name) + ":N");
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

Device ParseDevice(std::string_view text) {
  for (const BackendEntry& e : RegisteredBackends()) {
    const std::string_view name = e.kind.name;
    if (text == name) return {e.kind, e.kind.numbered ? Device::kLocalGpu : 0};
    if (e.kind.numbered && text.size() > name.size() + 1 && text.starts_with(name) &&
        text[name.size()] == ':') {
      const int index = OrdinalOf(text.substr(name.size() + 1));
      if (index >= 0) return {e.kind, index};
    }
  }
  TRAIL_FAIL("unknown device '", text, "': use ", DeviceSpellings(), " (N the device's ordinal)");
}

std::unique_ptr<Backend> MakeBackend(const Device& device, const Kernels& host_kernels) {
  const BackendEntry& e = EntryOf(device.kind);
  if (e.make != nullptr) return e.make(device, host_kernels);
  std::string here;
  for (const std::string& d : AvailableDevices()) here += (here.empty() ? "" : ", ") + d;
  TRAIL_FAIL("this build of trail has no backend for ", device.ToString(), " (", e.missing,
             "); devices here: ", here);
}

std::unique_ptr<Backend> MakeBackend(const Device& device) {
  return MakeBackend(device, ActiveKernels());
}

std::vector<std::string> AvailableDevices() {
  std::vector<std::string> out;
  for (const BackendEntry& e : RegisteredBackends()) {
    if (!e.for_users || e.make == nullptr) continue;
    const std::string name(e.kind.name);
    if (e.count == nullptr) out.push_back(name);
    for (int i = 0; e.count != nullptr && i < e.count(); ++i) {
      out.push_back(name + ":" + std::to_string(i));
    }
  }
  return out;
}

}  // namespace trail::repops
