// Which steps an audit replays: one step, a range, or a seeded sample. A sample is a pure
// function of (number of recorded steps, k, seed), so anyone can name the same sample:
//   the first k positions of data::Permutation(total, seed, kSampleStream), in ascending order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trail::audit {

inline constexpr uint64_t kSampleStream = 0x61756469745f7331;  // "audit_s1"

// "N" (one step) or "A:B" (steps A..B-1); throws trail::Error naming the problem.
std::vector<int64_t> ParseSteps(const std::string& spec);

// k distinct steps of [0, total), ascending (all of them when k ≥ total).
std::vector<int64_t> SampleSteps(int64_t total, int64_t k, uint64_t seed);

}  // namespace trail::audit
