#include "repops/cross_entropy.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "repops/kernels.h"
#include "repops/math.h"
#include "repops/parallel.h"

namespace trail::repops {
namespace {
void CheckTargets(const int32_t* targets, int64_t rows, int64_t vocab, int32_t ignore_index) {
  for (int64_t r = 0; r < rows; ++r)
    TRAIL_CHECK(targets[r] == ignore_index || (targets[r] >= 0 && targets[r] < vocab), "target ",
                targets[r], " in row ", r, " is outside [0, ", vocab,
                ") and is not the ignore index ", ignore_index);
}
}  // namespace

CrossEntropySums CrossEntropyForward(const Kernels& kernels, const float* logits,
                                     const int32_t* targets, int64_t rows, int64_t vocab,
                                     int32_t ignore_index, float* lse) {
  CheckTargets(targets, rows, vocab, ignore_index);
  const Kernels& k = kernels;
  std::vector<float> nll(rows), lse_sq(rows);
  ForEachRow(rows, [&](int64_t r) {
    thread_local std::vector<float> e;
    e.resize(vocab);
    const float* x = logits + r * vocab;
    const float m = k.max(x, vocab);
    k.exp_sub(x, m, e.data(), vocab);
    const float l = m + Log(k.sum(e.data(), vocab));
    lse[r] = l;
    const bool ignored = targets[r] == ignore_index;
    nll[r] = ignored ? 0.0f : l - x[targets[r]];
    lse_sq[r] = ignored ? 0.0f : l * l;
  });
  CrossEntropySums out;
  out.nll_sum = k.sum(nll.data(), rows);
  out.lse_sq_sum = k.sum(lse_sq.data(), rows);
  out.valid = std::count_if(targets, targets + rows, [&](int32_t t) { return t != ignore_index; });
  return out;
}

void CrossEntropyBackward(const Kernels& kernels, const float* logits, const int32_t* targets,
                          const float* lse, int64_t rows, int64_t vocab, int32_t ignore_index,
                          float grad_scale, float z_coef, float* dlogits) {
  CheckTargets(targets, rows, vocab, ignore_index);
  const Kernels& k = kernels;
  const float z2 = 2.0f * z_coef;
  ForEachRow(rows, [&](int64_t r) {
    float* d = dlogits + r * vocab;
    if (targets[r] == ignore_index) {
      std::fill(d, d + vocab, 0.0f);
      return;
    }
    const float coef = 1.0f + z2 * lse[r];
    const int64_t target = targets[r];
    // In L1-sized stretches, so each is scaled while its exponentials are still in cache. Off
    // the target, (e·coef − 0)·g is (e·coef)·g exactly (subtracting +0 changes nothing).
    constexpr int64_t kStretch = 2048;
    for (int64_t j0 = 0; j0 < vocab; j0 += kStretch) {
      const int64_t n = std::min(kStretch, vocab - j0);
      float* dj = d + j0;
      k.exp_sub(logits + r * vocab + j0, lse[r], dj, n);
      const float e_target = target >= j0 && target < j0 + n ? dj[target - j0] : 0.0f;
      for (int64_t j = 0; j < n; ++j) dj[j] = (dj[j] * coef) * grad_scale;
      if (target >= j0 && target < j0 + n) dj[target - j0] = (e_target * coef - 1.0f) * grad_scale;
    }
  });
}

}  // namespace trail::repops
