// Choosing the next token from a row of logits, in a written canonical order, so a sample is a
// pure function of (logits, parameters, seed, position) on every machine:
//
//   temperature 0 (greedy): the largest logit; ties go to the lowest id.
//   otherwise:
//     1. z_i = logit_i / temperature                (one rounded division; /1 is exact)
//     2. e_i = Exp(z_i − Max(z))                    (repops Exp and canonical Max)
//     3. the candidates in order of e descending, ties by ascending id
//     4. top-k: the first k candidates (k = 0 keeps all)
//     5. C_j = C_{j−1} + e_j over that order (float32, C_0 = e_0); top-p: the shortest prefix
//        whose C_j >= p · C_last (one rounded product; p = 1 keeps all)
//     6. u = UniformFromBits(PhiloxWord(seed, StreamIdForName("trail.sample"), position)),
//        r = u · C_cut; the first candidate of the prefix with C_j > r (the prefix's last one
//        if rounding leaves none)
//
// Whatever was sampled, the reported log-probability is the model's own: logit_id − lse with
// lse the cross-entropy's (repops/cross_entropy.h: m = Max, s = Sum(Exp(row − m)),
// m + Log(s)), at temperature 1 and before any truncation.
#pragma once

#include <cstdint>
#include <vector>

#include "repops/kernels.h"

namespace trail::model {

struct SamplingParams {
  float temperature = 1.0f;  // 0: greedy
  int64_t top_k = 0;         // 0: no limit
  float top_p = 1.0f;        // (0, 1]
  uint64_t seed = 0;
  // Throws trail::Error naming the bad value (negative or non-finite temperature, top_k < 0,
  // top_p outside (0, 1]).
  void Validate() const;
};

struct SampledToken {
  int32_t id = 0;
  float logprob = 0;  // log p(id) under the model (temperature 1, untruncated)
};

class Sampler {
 public:
  // On `kernels` (whose bits every SIMD target shares).
  Sampler(const repops::Kernels& kernels, const SamplingParams& p);
  // The token at sequence position `position` from logits [vocab] (host memory).
  SampledToken Sample(const float* logits, int64_t vocab, int64_t position);

 private:
  int32_t Draw(const float* logits, int64_t vocab, int64_t position);
  const repops::Kernels& kern_;
  SamplingParams p_;
  std::vector<float> e_;
  std::vector<int32_t> order_;
};

}  // namespace trail::model
