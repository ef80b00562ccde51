// The golden registry: every committed reference value of trail in one folder, goldens/ at the
// repository root, one text file per set, compiled into the binary so `trail selftest` can check
// any machine:
//   repops.txt    one line per RepOps golden case: SHA-256 of its output buffers
//   stream.txt    "stream": the canonical data stream's digest
//   training.txt  one line per golden training run: its final chained trajectory hash
//   generation.txt one line per golden generation: SHA-256 of its logits, tokens and log-probs
// Format: '#' comment lines and blank lines are ignored; every other line is
// "<case name> <64 lowercase hex digits>", each case once. How each case is built is specified
// in docs/goldens.md. The values change only with a documented spec change, through
// `trail goldens regenerate --confirm-spec-change`.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trail {

using GoldenTable = std::map<std::string, std::string>;  // case name -> hex digest

// The sets, in the order the registry lists them.
inline constexpr std::string_view kGoldenSets[] = {"repops", "stream", "training", "generation"};

// Parses a golden file; errors name `file` and the line.
GoldenTable ParseGoldenTable(const std::string& text, const std::string& file = "golden file");

// The committed table of a set (throws trail::Error for an unknown set).
const GoldenTable& CommittedGoldens(std::string_view set);

// A golden file's text: a one-line header comment, then "<name> <digest>" lines in name order.
std::string GoldenFileText(std::string_view set, const GoldenTable& table);

}  // namespace trail
