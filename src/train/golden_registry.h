// Recomputing the golden registry (core/golden.h): every set — RepOps cases, the data stream
// digest, the training runs — computed on the portable scalar reference backend with one
// thread (the reference defines the bits), compared with the committed tables, and written back
// only on explicit request. This is the one way golden values change.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/golden.h"

namespace trail::train {

struct GoldenChange {
  std::string set, name;
  std::string committed, computed;  // "" when the case is new / gone
};

struct GoldenRegeneration {
  std::map<std::string, GoldenTable> computed;  // by set
  std::vector<GoldenChange> changes;            // against the committed tables
  bool written = false;
};

// Computes every set and compares it with the committed values. With write, writes
// <dir>/<set>.txt for every set (atomically) when anything changed.
GoldenRegeneration RegenerateGoldens(const std::string& dir, bool write);

}  // namespace trail::train
