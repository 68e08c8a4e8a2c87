#include "numerics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

namespace augp {

const GaussHermite& gauss_hermite(int n) {
  static std::mutex mu;
  static std::map<int, GaussHermite> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  if (n < 1) throw std::invalid_argument("gauss_hermite: need n >= 1");
  GaussHermite r;
  if (n == 1) {
    r.x = Eigen::VectorXd::Zero(1);
    r.w = Eigen::VectorXd::Ones(1);
  } else {
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i + 1 < n; ++i) J(i, i + 1) = J(i + 1, i) = std::sqrt(static_cast<double>(i + 1));
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(J);
    r.x = es.eigenvalues();  // increasing
    r.w = es.eigenvectors().row(0).array().square().transpose();
  }
  return cache.emplace(n, r).first->second;
}

Argmax1D maximise_grid_golden(const std::function<double(double)>& f, double lo, double hi,
                              int grid, int max_iter, double tol) {
  auto at = [&](int g) { return lo + (hi - lo) * g / grid; };
  int best = 0;
  double bestv = -INFINITY;
  for (int g = 0; g <= grid; ++g) {
    const double val = f(at(g));
    if (val > bestv) {
      bestv = val;
      best = g;
    }
  }
  double a = at(std::max(best - 1, 0)), b = at(std::min(best + 1, grid));
  const double gr = 0.5 * (std::sqrt(5.0) - 1.0);
  double c = b - gr * (b - a), d = a + gr * (b - a), fc = f(c), fd = f(d);
  for (int it = 0; it < max_iter && b - a > tol; ++it) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - gr * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + gr * (b - a);
      fd = f(d);
    }
  }
  Argmax1D out;
  out.x = fc > fd ? c : d;
  out.value = std::max(fc, fd);
  out.grid_x = at(best);
  out.grid_value = bestv;
  return out;
}

double digamma(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x == HUGE_VAL ? HUGE_VAL : std::nan("");
  double acc = 0.0;
  while (x < 10.0) {
    acc -= 1.0 / x;
    x += 1.0;
  }
  const double z = 1.0 / (x * x);
  // B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760
  const double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * 691.0 / 32760)))));
  return acc + std::log(x) - 0.5 / x - series;
}

double digamma_diff(double y, double r) {
  if (y <= 64 && y == std::floor(y)) {
    double s = 0.0;
    for (int k = static_cast<int>(y) - 1; k >= 0; --k) s += 1.0 / (r + k);
    return s;
  }
  return digamma(y + r) - digamma(r);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: need 0 < p < 1");
  // The lower tail only (1 - p is exact for p >= 1/2): a start from a rational
  // approximation in t = sqrt(-2 log p), then Halley steps on Phi(x) - p with
  // Phi(x) = erfc(-x / sqrt 2) / 2, accurate in the lower tail (cubic convergence).
  if (p > 0.5) return -normal_quantile(1.0 - p);
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
  for (int it = 0; it < 8; ++it) {
    const double err = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
    const double dens = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double u = err / dens;
    const double step = u / (1.0 + 0.5 * x * u);
    x -= step;
    if (std::fabs(step) < 1e-15 * std::max(1.0, std::fabs(x))) break;
  }
  return x;
}

}  // namespace augp
