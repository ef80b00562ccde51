#include "repops/optim.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "repops/kernels.h"
#include "repops/math.h"
#include "repops/parallel.h"

namespace trail::repops {

void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
               int64_t t) {
  TRAIL_CHECK(t >= 1, "AdamW step count is 1-based, got ", t);
  const float bc1 = 1.0f / (1.0f - PowInt(h.beta1, t));
  const float bc2 = 1.0f / (1.0f - PowInt(h.beta2, t));
  const float decay = 1.0f - h.lr * h.weight_decay;
  const float omb1 = 1.0f - h.beta1, omb2 = 1.0f - h.beta2;
  constexpr int64_t kChunk = 8192;
  ForEachRow((n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t i1 = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < i1; ++i) {
      const float gi = g[i];
      const float mi = h.beta1 * m[i] + omb1 * gi;
      const float vi = h.beta2 * v[i] + omb2 * (gi * gi);
      m[i] = mi;
      v[i] = vi;
      p[i] = p[i] * decay - h.lr * ((mi * bc1) / (std::sqrt(vi * bc2) + h.eps));
    }
  });
}

float GlobalGradNorm(std::span<const GradSpan> grads) {
  float total = 0.0f;
  for (const GradSpan& s : grads) total = total + ActiveKernels().sum_sq(s.data, s.n);
  return std::sqrt(total);
}

float ClipCoefficient(float norm, float max_norm) {
  const float coef = max_norm / (norm + 1e-6f);
  return coef < 1.0f ? coef : 1.0f;
}

float ClipGradNorm(std::span<float* const> grads, std::span<const int64_t> sizes, float norm,
                   float max_norm) {
  TRAIL_CHECK(grads.size() == sizes.size(), "ClipGradNorm: ", grads.size(), " tensors, ",
              sizes.size(), " sizes");
  const float coef = ClipCoefficient(norm, max_norm);
  if (coef == 1.0f) return 1.0f;
  for (size_t t = 0; t < grads.size(); ++t) {
    float* g = grads[t];
    for (int64_t i = 0; i < sizes[t]; ++i) g[i] = g[i] * coef;
  }
  return coef;
}

}  // namespace trail::repops
