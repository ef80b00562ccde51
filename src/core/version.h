// The version of trail, as `trail --version` prints it and as attestations record it.
#pragma once

namespace trail {
inline constexpr const char* kTrailVersion = "0.1.0";
}  // namespace trail
