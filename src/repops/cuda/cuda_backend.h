// The CUDA backend: every op of repops/backend.h as CUDA kernels (launch.h) on one NVIDIA GPU,
// computing docs/repops.md's canonical order, so its bits are the CPU backend's. Training state
// lives in the GPU's memory (cudaMalloc); only what an op returns to the host (a sum, the
// state hash's digests) and explicit copies cross PCIe. Ops run in order on the device's
// default stream; an op that returns a value to the host waits for the ones before it.
//
// Built only when nvcc is found (cmake/cuda.cmake); made by MakeBackend for "cuda:N". Its
// registry entry (cuda_entry.cc) is in every build: without nvcc it says so.
#pragma once

#include <memory>

#include "core/device.h"
#include "repops/backend.h"
#include "repops/devices.h"
#include "repops/kernels.h"

namespace trail::repops {

// NVIDIA GPUs: "cuda:N", and "cuda" for the GPU of this process's local rank.
inline constexpr DeviceKind kCudaDevice{"cuda", true};
// The registry's entry for kCudaDevice (repops/devices.h).
const BackendEntry& CudaBackendEntry();

// A backend on CUDA device `index` (Device::kLocalGpu: the one of this process's local rank,
// modulo the GPUs here); a clear error when this machine has no such device (no GPU, no
// driver, or fewer devices). `host_kernels`: its host_kernels().
std::unique_ptr<Backend> MakeCudaBackend(int index, const Kernels& host_kernels);
// How many CUDA devices this process can use (0 without a GPU or driver).
int CudaDeviceCount();

}  // namespace trail::repops
