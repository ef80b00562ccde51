// The int8 GEMM checked against an int64 reference where shortcuts break: run by the unit tests
// on every SIMD target and thread count, and by `trail selftest` on every machine (the aarch64
// check runs it under qemu with and without the dot-product extension).
#pragma once

#include <string>
#include <vector>

#include "repops/kernels.h"

namespace trail::repops {

// Runs `k.gemm_i8` on operands of -128, ±127, ±1 and 0 (cycled; mixed into random bytes; all
// -128), with B as [K, N] and as Bᵀ [N, K], writing int32 sums and through the float epilogue
// (row and column scales), on shapes that leave every kind of edge for every kernel's tiles:
// depths odd, below and just past a vector, full and partial column panels, one row. Compares
// each value with the int64 sum (and the epilogue with the formula of kernels.h, bit for bit).
// Returns one line per case that differs; empty when every value is exact.
std::vector<std::string> GemmI8ExactnessFailures(const Kernels& k);

}  // namespace trail::repops
