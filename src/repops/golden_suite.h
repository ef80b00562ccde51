// The golden-hash suite: every RepOps op, forward and backward, on Philox inputs of awkward sizes.
// Each case's digest must equal the committed one (goldens/repops.txt, core/golden.h) on every
// backend, SIMD target, thread count and machine; docs/goldens.md specifies how each case is
// built. Kernel cases check the CPU's primitives; op cases run through a repops::Backend, so any
// device is checked op by op. `trail selftest` runs it; so does the aarch64 build under qemu.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/golden.h"
#include "repops/backend.h"

namespace trail::repops {

// One output buffer a case hashed, in order (the conformance vectors list them, so a port can
// tell which buffer of a case differs).
struct GoldenBuffer {
  std::string name;
  bool i32 = false;  // int32 elements; else float32
  int64_t count = 0;
  std::string digest;                // its tensor digest, hex (repops.md §7)
  std::vector<uint32_t> first_bits;  // the bits of its first (up to) four elements
};

struct GoldenResult {
  std::string name;
  std::string digest;  // SHA-256 hex over the case's output tensor digests, in order
  std::vector<GoldenBuffer> buffers;
};

// Runs every case: the kernel cases on the active SIMD target's kernels and kernel pool, the op
// cases through `ops` (a CPU backend when not given).
std::vector<GoldenResult> RunGoldenSuite(Backend& ops);
std::vector<GoldenResult> RunGoldenSuite();

// The committed golden digests (goldens/repops.txt): name -> digest.
const GoldenTable& CommittedGolden();

}  // namespace trail::repops
