// Helpers of the layer-op tests (ops_test.cc, attention_test.cc): forward outputs against
// float64 elementwise; backward ops by a directional derivative: for random w and r,
// <backward(w), r> must equal (w·f64(x + h r) - w·f64(x - h r)) / 2h. With h = 1e-4 in float64
// the central difference is accurate to ~1e-8 relative; the float32 backward carries ~n·2^-24
// relative error for rows of n <= 1000, so 1e-3 relative to |backward(w)|·|r| is a tolerance ten
// times wider than both.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "repops/test_util.h"

namespace trail::repops::testing {

using F64 = std::function<std::vector<double>(const std::vector<double>&)>;

inline void ExpectClose(const std::vector<float>& got, const std::vector<double>& ref, double rel,
                        double abs, const char* what) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], ref[i], abs + rel * std::fabs(ref[i])) << what << " at " << i;
}

// <g, r> against the central difference of w·f along r.
inline void ExpectDirectional(const F64& f, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& g,
                              uint64_t stream, const char* what) {
  const auto r = ToDouble(Rand(x.size(), stream));
  const double h = 1e-4;
  std::vector<double> xp = ToDouble(x), xm = ToDouble(x);
  for (size_t i = 0; i < x.size(); ++i) xp[i] += h * r[i], xm[i] -= h * r[i];
  const auto fp = f(xp), fm = f(xm);
  double fd = 0, an = 0;
  for (size_t i = 0; i < fp.size(); ++i) fd += double(w[i]) * (fp[i] - fm[i]) / (2 * h);
  for (size_t i = 0; i < g.size(); ++i) an += double(g[i]) * r[i];
  const double scale = Norm(ToDouble(g)) * Norm(r);
  EXPECT_NEAR(an, fd, 1e-3 * scale + 1e-9) << what;
}

}  // namespace trail::repops::testing
