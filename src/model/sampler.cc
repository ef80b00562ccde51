#include "model/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/philox.h"
#include "repops/cross_entropy.h"

namespace trail::model {

void SamplingParams::Validate() const {
  TRAIL_CHECK(std::isfinite(temperature) && temperature >= 0.0f, "temperature must be >= 0, got ",
              temperature);
  TRAIL_CHECK(top_k >= 0, "top-k must be >= 0 (0: no limit), got ", top_k);
  TRAIL_CHECK(top_p > 0.0f && top_p <= 1.0f, "top-p must be in (0, 1], got ", top_p);
}

Sampler::Sampler(const repops::Kernels& kernels, const SamplingParams& p) : kern_(kernels), p_(p) {
  p_.Validate();
}

SampledToken Sampler::Sample(const float* logits, int64_t vocab, int64_t position) {
  TRAIL_CHECK(vocab > 0, "sampling from an empty vocabulary");
  for (int64_t i = 0; i < vocab; ++i) {
    TRAIL_CHECK(!std::isnan(logits[i]), "the model's logit of token ", i, " at position ", position,
                " is NaN: these parameters cannot be sampled from");
  }
  const int32_t no_target = -1;  // the row's lse only
  float lse = 0;
  repops::CrossEntropyForward(kern_, logits, &no_target, 1, vocab, no_target, &lse);
  SampledToken out;
  out.id = Draw(logits, vocab, position);
  out.logprob = logits[out.id] - lse;
  return out;
}

int32_t Sampler::Draw(const float* logits, int64_t vocab, int64_t position) {
  if (p_.temperature == 0.0f) {  // the first of the largest logits
    return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
  }
  e_.resize(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i) e_[i] = logits[i] / p_.temperature;
  const size_t n = static_cast<size_t>(vocab);
  kern_.exp_sub(e_.data(), kern_.max(e_.data(), n), e_.data(), n);
  // A candidate with e = 0 adds nothing to C and is never drawn: leaving it out of the order
  // changes no result.
  order_.clear();
  for (int64_t i = 0; i < vocab; ++i) {
    TRAIL_CHECK(!std::isnan(e_[i]), "temperature ", p_.temperature,
                " overflows these logits at position ", position, ": use a larger one or 0");
    if (e_[i] > 0.0f) order_.push_back(static_cast<int32_t>(i));
  }
  auto before = [&](int32_t a, int32_t b) { return e_[a] > e_[b] || (e_[a] == e_[b] && a < b); };
  size_t kept = order_.size();
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < kept) {
    kept = static_cast<size_t>(p_.top_k);
    std::partial_sort(order_.begin(), order_.begin() + kept, order_.end(), before);
  } else {
    std::sort(order_.begin(), order_.end(), before);
  }
  std::vector<float> C(kept);
  for (size_t j = 0; j < kept; ++j) C[j] = j == 0 ? e_[order_[0]] : C[j - 1] + e_[order_[j]];
  size_t cut = kept;
  if (p_.top_p < 1.0f) {
    const float need = p_.top_p * C[kept - 1];
    cut = static_cast<size_t>(std::find_if(C.begin(), C.end(), [&](float c) { return c >= need; }) -
                              C.begin()) +
          1;
    cut = std::min(cut, kept);
  }
  const float u = UniformFromBits(
      PhiloxWord(p_.seed, StreamIdForName("trail.sample"), static_cast<uint64_t>(position)));
  const float r = u * C[cut - 1];
  for (size_t j = 0; j < cut; ++j) {
    if (C[j] > r) return order_[j];
  }
  return order_[cut - 1];
}

}  // namespace trail::model
