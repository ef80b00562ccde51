// The golden-hash suite: every RepOps op, forward and backward, on Philox inputs of awkward sizes.
// Each case's digest must equal the committed one (golden_hashes.txt) on every backend, thread
// count and machine. `trail selftest` runs it; so does the aarch64 build under qemu in make test.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trail::repops {

struct GoldenResult {
  std::string name;
  std::string digest;  // SHA-256 hex over the case's output tensor digests, in order
};

// Runs every case on the active backend and kernel pool.
std::vector<GoldenResult> RunGoldenSuite();

// The committed golden digests (compiled in from golden_hashes.txt): name -> digest.
const std::map<std::string, std::string>& CommittedGolden();

// Parses "name digest" lines ('#' starts a comment); throws trail::Error on malformed lines.
std::map<std::string, std::string> ParseGolden(const std::string& text);

}  // namespace trail::repops
