// Cross-entropy over a vocabulary with an ignore index and optional z-loss.
#pragma once

#include <cstdint>

#include "repops/kernels.h"

namespace trail::repops {

struct CrossEntropySums {
  float nll_sum = 0;     // Sum over rows of (lse - logit[target]); ignored rows give +0
  float lse_sq_sum = 0;  // Sum over rows of lse^2 (for z-loss); ignored rows give +0
  int64_t valid = 0;     // rows whose target is not ignore_index
};

// logits: [rows, vocab]; targets: [rows]; lse: [rows] written (saved for backward).
// Per row: m = Max(row); s = Sum(Exp(row - m)); lse = m + Log(s). Row sums use the canonical
// reduction over rows. The caller forms the loss, e.g. nll_sum * (1/valid_total).
CrossEntropySums CrossEntropyForward(const Kernels& kernels, const float* logits,
                                     const int32_t* targets, int64_t rows, int64_t vocab,
                                     int32_t ignore_index, float* lse);
// On the active SIMD target's kernels.
inline CrossEntropySums CrossEntropyForward(const float* logits, const int32_t* targets,
                                            int64_t rows, int64_t vocab, int32_t ignore_index,
                                            float* lse) {
  return CrossEntropyForward(ActiveKernels(), logits, targets, rows, vocab, ignore_index, lse);
}

// dlogits = (Exp(logit - lse) * (1 + (2*z_coef) * lse) - onehot) * grad_scale, zero on ignored
// rows. grad_scale is d(loss)/d(nll_sum), e.g. 1/valid_total; z-loss adds z_coef * lse^2 per
// row with the same scale.
void CrossEntropyBackward(const Kernels& kernels, const float* logits, const int32_t* targets,
                          const float* lse, int64_t rows, int64_t vocab, int32_t ignore_index,
                          float grad_scale, float z_coef, float* dlogits);
// On the active SIMD target's kernels.
inline void CrossEntropyBackward(const float* logits, const int32_t* targets, const float* lse,
                                 int64_t rows, int64_t vocab, int32_t ignore_index,
                                 float grad_scale, float z_coef, float* dlogits) {
  CrossEntropyBackward(ActiveKernels(), logits, targets, lse, rows, vocab, ignore_index, grad_scale,
                       z_coef, dlogits);
}

}  // namespace trail::repops
