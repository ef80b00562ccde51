#include "plan/robust_fit.h"

#include <cmath>

#include "core/error.h"

namespace trail::plan {

double HuberLoss(double r, double delta) {
  const double a = std::fabs(r);
  return a <= delta ? 0.5 * r * r : delta * (a - 0.5 * delta);
}

bool SolveSpd(std::vector<double> A, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t j = 0; j < n; ++j) {  // A = L Lᵀ, L stored in the lower triangle
    double d = A[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0)) return false;
    A[j * n + j] = std::sqrt(d);
    for (size_t i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / A[j * n + j];
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    for (size_t k = 0; k < i; ++k) b[i] -= A[i * n + k] * b[k];
    b[i] /= A[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {  // Lᵀ x = y
    for (size_t k = i + 1; k < n; ++k) b[i] -= A[k * n + i] * b[k];
    b[i] /= A[i * n + i];
  }
  x = std::move(b);
  return true;
}

namespace {

double Objective(const std::vector<double>& r, double delta) {
  double sum = 0;
  for (double v : r) sum += HuberLoss(v, delta);
  return std::isfinite(sum) ? sum : INFINITY;
}

// The normal equations of the reweighted problem: H = JᵀWJ, g = JᵀW r.
void NormalEquations(const std::vector<double>& r, const std::vector<double>& J, size_t n,
                     double delta, std::vector<double>& H, std::vector<double>& g) {
  H.assign(n * n, 0.0);
  g.assign(n, 0.0);
  for (size_t i = 0; i < r.size(); ++i) {
    const double a = std::fabs(r[i]);
    const double w = a <= delta ? 1.0 : delta / a;
    const double* row = &J[i * n];
    for (size_t p = 0; p < n; ++p) {
      g[p] += w * row[p] * r[i];
      for (size_t q = 0; q <= p; ++q) H[p * n + q] += w * row[p] * row[q];
    }
  }
  for (size_t p = 0; p < n; ++p) {
    for (size_t q = 0; q < p; ++q) H[q * n + p] = H[p * n + q];
  }
}

}  // namespace

RobustFitResult MinimizeHuber(const ResidualFunction& f, std::vector<double> x0, size_t residuals,
                              const RobustFitOptions& options) {
  const size_t n = x0.size();
  TRAIL_CHECK(n > 0 && n <= 16, "MinimizeHuber: ", n, " parameters (1..16 supported)");
  RobustFitResult out;
  out.x = std::move(x0);
  std::vector<double> r(residuals), J(residuals * n), trial_r(residuals), H, g, step;
  f(out.x, r, &J);
  out.objective = Objective(r, options.huber_delta);
  double lambda = 1e-3;
  for (; out.iterations < options.max_iterations && lambda < 1e16; ++out.iterations) {
    NormalEquations(r, J, n, options.huber_delta, H, g);
    std::vector<double> damped = H;
    for (size_t p = 0; p < n; ++p) damped[p * n + p] += lambda * H[p * n + p] + 1e-300;
    for (double& v : g) v = -v;
    if (!SolveSpd(damped, g, step)) {
      lambda *= 4;
      continue;
    }
    std::vector<double> trial = out.x;
    for (size_t p = 0; p < n; ++p) trial[p] += step[p];
    f(trial, trial_r, nullptr);
    const double objective = Objective(trial_r, options.huber_delta);
    if (!(objective < out.objective)) {
      lambda *= 4;
      continue;
    }
    const double decrease = out.objective - objective;
    out.x = std::move(trial);
    out.objective = objective;
    f(out.x, r, &J);
    lambda = std::max(lambda / 3, 1e-12);
    if (decrease <= options.tolerance * out.objective) break;
  }
  return out;
}

}  // namespace trail::plan
