// The median of a sample: the middle value, or the mean of the two middle values for an even
// count (0.5·(a + b), exact in IEEE arithmetic up to the one rounding of the sum).
#pragma once

#include <algorithm>
#include <vector>

namespace trail {

// v must not be empty.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace trail
