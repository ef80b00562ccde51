// The scaling-law fit checked as the pretraining tutorial's [D06] states it: losses generated
// from a known law on a log-spaced grid (N in [1e7, 1e12], D in [1e8, 1e13], 6 points each) must
// give the law back, its floor below every observed loss, a closed-form compute optimum that a
// brute-force search agrees with, and the exponents of compute-optimal growth (100x compute:
// N* about 8.0x, D* about 12.5x for alpha = 0.34, beta = 0.28). Then with noise: the bootstrap
// intervals cover the truth. Synthetic ground truth (E, A, B) = (1.5, 400, 400), not a claim
// about real models.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/test_util.h"
#include "plan/robust_fit.h"
#include "plan/scaling_fit.h"
#include "plan/scaling_law.h"

namespace trail::plan {
namespace {

const ScalingLaw kTruth{1.5, 400.0, 400.0, 0.34, 0.28};

std::vector<LossPoint> Grid() {
  return LossSurface(kTruth, LogSpace(1e7, 1e12, 6), LogSpace(1e8, 1e13, 6));
}

double MinLoss(const std::vector<LossPoint>& points) {
  double m = INFINITY;
  for (const LossPoint& p : points) m = std::min(m, p.loss);
  return m;
}

TEST(ScalingLaw, LinearFitWithKnownExponentsRecoversTheLaw) {  // [D06] as the tutorial writes it
  const std::vector<LossPoint> points = Grid();
  ASSERT_EQ(points.size(), 36u);
  const ScalingLaw fit = FitLinear(points, kTruth.alpha, kTruth.beta);
  EXPECT_NEAR(fit.E, 1.5, 1e-6);
  EXPECT_NEAR(fit.A, 400.0, 1e-3);
  EXPECT_NEAR(fit.B, 400.0, 1e-3);
  EXPECT_LT(fit.E, MinLoss(points));
  EXPECT_NE(ErrorOf([&] { FitLinear({points[0], points[0], points[0]}, 0.34, 0.28); }), "");
}

TEST(ScalingLaw, HuberFitOfAllFiveParametersRecoversTheNoiselessLaw) {
  ScalingFitOptions o;
  o.bootstrap = 0;
  const ScalingFit fit = FitScalingLaw(Grid(), o);
  EXPECT_NEAR(fit.law.E, 1.5, 1e-3);
  EXPECT_NEAR(fit.law.A, 400.0, 1e-3);
  EXPECT_NEAR(fit.law.B, 400.0, 1e-3);
  EXPECT_NEAR(fit.law.alpha, 0.34, 1e-6);
  EXPECT_NEAR(fit.law.beta, 0.28, 1e-6);
  EXPECT_LT(fit.law.E, MinLoss(Grid()));
  EXPECT_LT(fit.rms_log_error, 1e-9);
}

TEST(ScalingLaw, AnalyticOptimumAgreesWithGridSearchAndScalesWithCompute) {
  const double budget = 6e21;
  const Allocation a = AnalyticOptimum(kTruth, budget);
  EXPECT_NEAR(a.params * a.tokens * 6, budget, budget * 1e-12);
  const int per_decade = 100;  // grid step: 1/100 of a decade
  const Allocation g = GridOptimum(kTruth, budget, 6, 1e6, 1e15, per_decade);
  EXPECT_LE(std::fabs(std::log10(a.params / g.params)), 1.0 / per_decade);
  EXPECT_LE(std::fabs(std::log10(a.tokens / g.tokens)), 1.0 / per_decade);
  // The tutorial's numbers: N* = 4.167e9 at this budget.
  EXPECT_NEAR(a.params / 1e9, 4.167, 0.001);
  const Allocation b = AnalyticOptimum(kTruth, 100 * budget);
  EXPECT_NEAR(b.params / a.params, std::pow(100.0, 0.28 / 0.62), 1e-6);
  EXPECT_NEAR(b.tokens / a.tokens, std::pow(100.0, 0.34 / 0.62), 1e-6);
  EXPECT_NEAR(b.params / a.params, 8.0, 0.01);
  EXPECT_NEAR(b.tokens / a.tokens, 12.5, 0.01);
}

TEST(ScalingLaw, BootstrapIntervalsCoverTheTruthUnderNoise) {
  // 1% multiplicative noise on every loss, the same draw every run.
  std::vector<LossPoint> points = Grid();
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (LossPoint& p : points) p.loss *= std::exp(noise(rng));
  ScalingFitOptions o;
  o.bootstrap = 200;
  o.budgets = {6e21};
  const ScalingFit fit = FitScalingLaw(points, o);
  EXPECT_EQ(fit.bootstrap_fits, 200);
  auto covers = [](const Interval& i, double truth) { return i.low <= truth && truth <= i.high; };
  EXPECT_TRUE(covers(fit.E, kTruth.E)) << fit.E.low << " " << fit.E.high;
  EXPECT_TRUE(covers(fit.A, kTruth.A)) << fit.A.low << " " << fit.A.high;
  EXPECT_TRUE(covers(fit.B, kTruth.B)) << fit.B.low << " " << fit.B.high;
  EXPECT_TRUE(covers(fit.alpha, kTruth.alpha)) << fit.alpha.low << " " << fit.alpha.high;
  EXPECT_TRUE(covers(fit.beta, kTruth.beta)) << fit.beta.low << " " << fit.beta.high;
  const Allocation truth = AnalyticOptimum(kTruth, 6e21);
  EXPECT_TRUE(covers(fit.budgets[0].params, truth.params));
  EXPECT_TRUE(covers(fit.budgets[0].tokens, truth.tokens));
  // The intervals are informative, not everything: alpha to within ±0.1.
  EXPECT_LT(fit.alpha.high - fit.alpha.low, 0.2);
}

TEST(ScalingLaw, RefusesTooFewOrBadPoints) {
  std::vector<LossPoint> points = Grid();
  points.resize(4);
  EXPECT_NE(ErrorOf([&] { FitScalingLaw(points, {}); }).find("at least 5"), std::string::npos);
  points = Grid();
  points[3].loss = 0;
  EXPECT_NE(ErrorOf([&] { FitScalingLaw(points, {}); }).find("positive finite"), std::string::npos);
}

TEST(RobustFit, HuberDownweightsAnOutlier) {
  // A line through 20 points, one of them far off: least squares is pulled, Huber is not.
  std::vector<double> xs, ys;
  for (int i = 0; i < 20; ++i) xs.push_back(i), ys.push_back(2.0 * i + 1.0);
  ys[7] += 50;
  auto residuals = [&](const std::vector<double>& p, std::vector<double>& r,
                       std::vector<double>* J) {
    for (size_t i = 0; i < xs.size(); ++i) {
      r[i] = p[0] * xs[i] + p[1] - ys[i];
      if (J) (*J)[i * 2] = xs[i], (*J)[i * 2 + 1] = 1.0;
    }
  };
  const RobustFitResult huber = MinimizeHuber(residuals, {0, 0}, xs.size(), {0.1, 200, 1e-15});
  EXPECT_NEAR(huber.x[0], 2.0, 0.01);
  EXPECT_NEAR(huber.x[1], 1.0, 0.05);
  const RobustFitResult squares = MinimizeHuber(residuals, {0, 0}, xs.size(), {1e9, 200, 1e-15});
  EXPECT_GT(std::fabs(squares.x[1] - 1.0), 1.0);
}

}  // namespace
}  // namespace trail::plan
