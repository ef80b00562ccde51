// The golden-hash suite: every RepOps op, forward and backward, on Philox inputs of awkward sizes.
// Each case's digest must equal the committed one (goldens/repops.txt, core/golden.h) on every
// backend, thread count and machine; docs/goldens.md specifies how each case is built. `trail selftest` runs it; so does the aarch64 build under qemu in make test.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/golden.h"

namespace trail::repops {

struct GoldenResult {
  std::string name;
  std::string digest;  // SHA-256 hex over the case's output tensor digests, in order
};

// Runs every case on the active backend and kernel pool.
std::vector<GoldenResult> RunGoldenSuite();

// The committed golden digests (goldens/repops.txt): name -> digest.
const GoldenTable& CommittedGolden();

}  // namespace trail::repops
