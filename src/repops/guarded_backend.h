// The "guarded" test device: the CPU backend on memory that host code cannot touch
// (core/guarded_memory.h). Each op opens the memory for exactly its own duration, so a full
// training step, checkpoint or audit on this backend proves that nothing outside the backend
// reads or writes device state: a stray host access faults instead of passing. Its bits are
// the CPU backend's.
#pragma once

#include "core/guarded_memory.h"
#include "repops/cpu_backend.h"
#include "repops/kernels.h"

namespace trail::repops {

namespace detail {
// The memory, made before the CpuBackend base that allocates from it.
struct GuardedMemoryHolder {
  GuardedAllocator guarded_memory;
};
}  // namespace detail

class GuardedBackend final : private detail::GuardedMemoryHolder, public CpuBackend {
 public:
  // On `kernels` (default: the SIMD target active now, ActiveKernels()).
  explicit GuardedBackend(const Kernels& kernels = ActiveKernels())
      : CpuBackend(kernels, guarded_memory, &guarded_memory) {}
  // The memory, for tests that open it around their own checks.
  GuardedAllocator& memory() { return guarded_memory; }
};

}  // namespace trail::repops
