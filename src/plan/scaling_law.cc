#include "plan/scaling_law.h"

#include <cmath>

#include "core/error.h"
#include "plan/robust_fit.h"

namespace trail::plan {

double ScalingLaw::Loss(double params, double tokens) const {
  return E + A / std::pow(params, alpha) + B / std::pow(tokens, beta);
}

std::vector<double> LogSpace(double first, double last, int count) {
  TRAIL_CHECK(first > 0 && last > 0 && count >= 1, "LogSpace: needs positive ends and a count");
  std::vector<double> out(static_cast<size_t>(count));
  const double a = std::log(first), b = std::log(last);
  for (int i = 0; i < count; ++i) {
    out[static_cast<size_t>(i)] = count == 1 ? first : std::exp(a + (b - a) * i / (count - 1));
  }
  return out;
}

std::vector<LossPoint> LossSurface(const ScalingLaw& law, const std::vector<double>& params,
                                   const std::vector<double>& tokens) {
  std::vector<LossPoint> out;
  for (double n : params) {
    for (double d : tokens) out.push_back({n, d, law.Loss(n, d)});
  }
  return out;
}

Allocation AnalyticOptimum(const ScalingLaw& law, double flops, double k) {
  const double s = law.alpha + law.beta;
  const double g = std::pow(law.alpha * law.A / (law.beta * law.B), 1.0 / s);
  const double ck = flops / k;
  return {g * std::pow(ck, law.beta / s), std::pow(ck, law.alpha / s) / g};
}

Allocation GridOptimum(const ScalingLaw& law, double flops, double k, double min_params,
                       double max_params, int per_decade) {
  const int count =
      static_cast<int>(std::ceil(std::log10(max_params / min_params) * per_decade)) + 1;
  Allocation best;
  double best_loss = INFINITY;
  for (double n : LogSpace(min_params, max_params, count)) {
    const double d = flops / (k * n);
    const double loss = law.Loss(n, d);
    if (loss < best_loss) best_loss = loss, best = {n, d};
  }
  return best;
}

ScalingLaw FitLinear(const std::vector<LossPoint>& points, double alpha, double beta) {
  // Normal equations of L ≈ E·1 + A·N^-α + B·D^-β (3×3, symmetric positive definite when the
  // columns are independent).
  std::vector<double> H(9, 0.0), g(3, 0.0), x;
  for (const LossPoint& p : points) {
    const double row[3] = {1.0, std::pow(p.params, -alpha), std::pow(p.tokens, -beta)};
    for (int i = 0; i < 3; ++i) {
      g[i] += row[i] * p.loss;
      for (int j = 0; j < 3; ++j) H[i * 3 + j] += row[i] * row[j];
    }
  }
  TRAIL_CHECK(points.size() >= 3 && SolveSpd(H, g, x),
              "the loss points do not determine E, A and B: give at least three, with more than "
              "one model size and more than one token count");
  return {x[0], x[1], x[2], alpha, beta};
}

}  // namespace trail::plan
