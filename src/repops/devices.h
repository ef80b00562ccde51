// The backends this build has, by device: "cpu" (repops/cpu_backend.h) and "guarded" (the test
// device of repops/guarded_backend.h) always; "cuda:N" in a build with the CUDA backend
// (repops/cuda/cuda_backend.h) on a machine with NVIDIA GPUs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "repops/backend.h"
#include "repops/kernels.h"

namespace trail::repops {

// A new backend on `device` whose host work runs on `host_kernels` (a CPU backend's ops, and
// what every backend's host_kernels() hands to code scoring its copied-back results); an error
// saying what this build offers when it has none for the device. The one-argument form takes
// the SIMD target active now (ActiveKernels()): callers that must not depend on process-wide
// state (bisect's replay on the reference kernels) pass their table.
std::unique_ptr<Backend> MakeBackend(const Device& device, const Kernels& host_kernels);
std::unique_ptr<Backend> MakeBackend(const Device& device);
// The devices MakeBackend accepts here, by name.
std::vector<std::string> AvailableDevices();

}  // namespace trail::repops
