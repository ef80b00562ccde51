// The sampler: greedy ties, the model's log-probabilities against float64, draws that follow
// softmax(z / T) (checked by frequency), top-k and top-p supports, and draws that depend only
// on (seed, position).
#include "model/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "core/error.h"
#include "repops/kernels.h"

namespace trail::model {
namespace {

SamplingParams Params(float temperature, int64_t top_k = 0, float top_p = 1.0f, uint64_t seed = 7) {
  SamplingParams p;
  p.temperature = temperature, p.top_k = top_k, p.top_p = top_p, p.seed = seed;
  return p;
}

std::vector<double> Softmax64(const std::vector<float>& logits, double temperature) {
  double m = -INFINITY, s = 0;
  for (float x : logits) m = std::max(m, x / temperature);
  std::vector<double> p;
  for (float x : logits) p.push_back(std::exp(x / temperature - m)), s += p.back();
  for (double& x : p) x /= s;
  return p;
}

TEST(Sampler, GreedyTakesTheLargestLogitAndTheLowestIdOnTies) {
  Sampler greedy(repops::ActiveKernels(), Params(0));
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  for (int64_t pos = 0; pos < 20; ++pos) EXPECT_EQ(greedy.Sample(logits.data(), 5, pos).id, 1);
}

TEST(Sampler, LogProbabilityIsTheModelsAgainstFloat64) {
  std::vector<float> logits(300);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(0.37f * i) * 6.0f;
  const std::vector<double> p = Softmax64(logits, 1.0);
  for (float t : {0.0f, 0.7f, 1.5f}) {
    Sampler s(repops::ActiveKernels(), Params(t, 10, 0.9f));
    for (int64_t pos = 0; pos < 30; ++pos) {
      const SampledToken tok = s.Sample(logits.data(), 300, pos);
      // lse of 300 terms near 6 in float32: a few ulps of ~7, so 1e-5 absolute is ample and
      // far below any real change of the distribution.
      EXPECT_NEAR(tok.logprob, std::log(p[tok.id]), 1e-5) << "T " << t;
    }
  }
}

TEST(Sampler, DrawsFollowTheTemperedSoftmax) {
  const std::vector<float> logits = {1.0f, 0.0f, 2.0f, -1.0f, 0.5f};
  for (float t : {1.0f, 0.5f, 2.0f}) {
    Sampler s(repops::ActiveKernels(), Params(t));
    const int draws = 40000;
    std::vector<int> count(5);
    for (int64_t pos = 0; pos < draws; ++pos) ++count[s.Sample(logits.data(), 5, pos).id];
    const std::vector<double> p = Softmax64(logits, t);
    for (int i = 0; i < 5; ++i) {
      // Binomial standard deviation sqrt(p(1-p)/n) <= 0.0025 at n = 40000: 5 sigma.
      EXPECT_NEAR(count[i] / double(draws), p[i], 0.0125) << "T " << t << " id " << i;
    }
  }
}

TEST(Sampler, TopKAndTopPKeepTheirSupport) {
  // Probabilities near 0.5, 0.3, 0.15, 0.05.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                                     std::log(0.05f)};
  auto support = [&](const SamplingParams& sp) {
    Sampler s(repops::ActiveKernels(), sp);
    std::map<int32_t, int> seen;
    for (int64_t pos = 0; pos < 4000; ++pos) ++seen[s.Sample(logits.data(), 4, pos).id];
    return seen;
  };
  EXPECT_EQ(support(Params(1, 2)).size(), 2u);
  EXPECT_EQ(support(Params(1, 2)).count(2), 0u);
  EXPECT_EQ(support(Params(1, 0, 0.75f)).size(), 2u);  // 0.5 < 0.75 <= 0.8
  EXPECT_EQ(support(Params(1, 0, 0.4f)).size(), 1u);
  EXPECT_EQ(support(Params(1)).size(), 4u);
  EXPECT_EQ(support(Params(1, 1)).begin()->first, 0);
}

TEST(Sampler, ADrawIsAFunctionOfSeedAndPosition) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::cos(0.9f * i);
  Sampler a(repops::ActiveKernels(), Params(1, 0, 1, 3)),
      b(repops::ReferenceKernels(), Params(1, 0, 1, 3));
  Sampler other(repops::ActiveKernels(), Params(1, 0, 1, 4));
  int differ = 0;
  for (int64_t pos = 200; pos >= 0; --pos) {  // any order of positions
    const SampledToken x = a.Sample(logits.data(), 50, pos), y = b.Sample(logits.data(), 50, pos);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(std::bit_cast<uint32_t>(x.logprob), std::bit_cast<uint32_t>(y.logprob));
    differ += other.Sample(logits.data(), 50, pos).id != x.id;
  }
  EXPECT_GT(differ, 100);
}

TEST(Sampler, RefusesBadParametersAndNaNLogits) {
  EXPECT_THROW(Sampler(repops::ActiveKernels(), Params(-1)), Error);
  EXPECT_THROW(Sampler(repops::ActiveKernels(), Params(NAN)), Error);
  EXPECT_THROW(Sampler(repops::ActiveKernels(), Params(1, -2)), Error);
  EXPECT_THROW(Sampler(repops::ActiveKernels(), Params(1, 0, 0.0f)), Error);
  EXPECT_THROW(Sampler(repops::ActiveKernels(), Params(1, 0, 1.5f)), Error);
  Sampler s(repops::ActiveKernels(), Params(1));
  const std::vector<float> bad = {0.0f, NAN};
  EXPECT_THROW(s.Sample(bad.data(), 2, 0), Error);
}

}  // namespace
}  // namespace trail::model
