#include "audit/step_selection.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "data/permutation.h"

namespace trail::audit {
namespace {

int64_t ParseStep(const std::string& s, const std::string& spec) {
  int64_t v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  TRAIL_CHECK(ec == std::errc() && end == s.data() + s.size() && v >= 0, "'", spec,
              "' is not a step (N) or a range of steps (A:B, B exclusive)");
  return v;
}

}  // namespace

std::vector<int64_t> ParseSteps(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return {ParseStep(spec, spec)};
  const int64_t a = ParseStep(spec.substr(0, colon), spec);
  const int64_t b = ParseStep(spec.substr(colon + 1), spec);
  TRAIL_CHECK(a < b, "the range ", spec, " holds no step (B is exclusive: A:B needs A < B)");
  TRAIL_CHECK(b - a <= (int64_t{1} << 32), "the range ", spec, " is too large");
  std::vector<int64_t> out(static_cast<size_t>(b - a));
  for (int64_t i = 0; i < b - a; ++i) out[static_cast<size_t>(i)] = a + i;
  return out;
}

std::vector<int64_t> SampleSteps(int64_t total, int64_t k, uint64_t seed) {
  TRAIL_CHECK(total >= 0 && k >= 0, "a sample of ", k, " steps out of ", total);
  k = std::min(k, total);
  const data::Permutation perm(static_cast<uint64_t>(total), seed, kSampleStream);
  std::vector<int64_t> out(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) out[static_cast<size_t>(i)] = static_cast<int64_t>(perm(i));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trail::audit
