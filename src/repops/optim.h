// AdamW with decoupled weight decay, global gradient norm and clipping.
#pragma once

#include <cstdint>
#include <span>

namespace trail::repops {

struct AdamWHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.0f;
};

// One update at step t (1-based). With bc1 = 1 / (1 - PowInt(beta1, t)),
// bc2 = 1 / (1 - PowInt(beta2, t)), decay = 1 - lr * weight_decay, for each element:
//   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*(g*g);
//   p = p*decay - lr * ((m*bc1) / (sqrt(v*bc2) + eps)).
void AdamWStep(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
               int64_t t);

struct GradSpan {
  const float* data;
  int64_t n;
};
// sqrt(Σ_t SumSq(grad_t)), the per-tensor sums added in the order given.
float GlobalGradNorm(std::span<const GradSpan> grads);

// coef = max_norm / (norm + 1e-6) when that is below 1, else 1 (also when it is NaN): the
// factor clipping multiplies every gradient element by.
float ClipCoefficient(float norm, float max_norm);
// Multiplies every gradient element by ClipCoefficient(norm, max_norm) when that is below 1.
// Returns the coefficient applied (1 when none).
float ClipGradNorm(std::span<float* const> grads, std::span<const int64_t> sizes, float norm,
                   float max_norm);

}  // namespace trail::repops
