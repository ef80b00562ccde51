// The backends this build has, by device: "cpu" (repops/cpu_backend.h) and "guarded" (the test
// device of repops/guarded_backend.h) always; "cuda:N" in a build with the CUDA backend
// (repops/cuda/cuda_backend.h) on a machine with NVIDIA GPUs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "repops/backend.h"

namespace trail::repops {

// A new backend on `device`; an error saying what this build offers when it has none for it.
std::unique_ptr<Backend> MakeBackend(const Device& device);
// The devices MakeBackend accepts here, by name.
std::vector<std::string> AvailableDevices();

}  // namespace trail::repops
