// Laplace likelihood (robust GP regression, median regression):
//   p(y | f) = exp(-|y - f| / b) / (2 b),  b > 0 the scale (noise sd sqrt(2) b).
// Row i has frequency weight t_i (the `trials` field): t_i copies of y_i, each with its
// own auxiliary variable.
//
// Augmentation (a normal scale mixture with exponential mixing on the variance):
//   y | f, w ~ N(f, w),  w ~ Exponential(rate lambda),  lambda = 1 / (2 b^2).
// With d = y - f and int_0^inf w^(-1/2) exp(-a / w - c w) dw = sqrt(pi / c) exp(-2 sqrt(a c)):
//   int N(d | 0, w) lambda exp(-lambda w) dw = lambda (2 pi)^(-1/2) sqrt(pi / lambda)
//       exp(-|d| sqrt(2 lambda)) = exp(-|d| / b) / (2 b).
//
// Contract form: given w, log N(y | f, w) = const + (y / w) f - f^2 / (2 w); with
// u = 1 / w (a precision) and U = the sum of the copies' u,
//   kappa = U y,  omega = U.
//
// Gibbs: p(w | f, y) propto w^(-1/2) exp(-d^2 / (2 w) - lambda w), i.e. in u = 1 / w
//   p(u | f, y) propto u^(-3/2) exp(-d^2 u / 2 - lambda / u),
// the inverse Gaussian IG(mean mu, shape s) with s = 2 lambda = 1 / b^2 and
// s / mu^2 = d^2, so mu = 1 / (b |d|). Inverse Gaussian laws with a common ratio
// shape / mean^2 form a convolution semigroup: the sum of t copies is IG(t mu, t^2 s),
// for any real t > 0. At d = 0 (mu infinite) the law is the Levy law with the same
// shape, s / Z^2 for a standard normal Z.
// Draws by Michael, Schucany and Haas (transformation with multiple roots): with
// chi = Z^2 and phi = mu chi / (2 s), the two roots of s (x - mu)^2 / (mu^2 x) = chi are
//   x2 = mu (1 + phi + sqrt(phi (2 + phi))),  x1 = mu^2 / x2 (computed from x2, no
// cancellation); take x1 with probability mu / (mu + x1), x2 otherwise.
//
// CAVI: with q(f) = N(m, v) and r = (y - m)^2 + v, the optimal
//   q(w) propto exp(E_q[log N(y | f, w)]) p(w) propto w^(-1/2) exp(-r / (2 w) - lambda w),
// so q(u) = IG(1 / (b sqrt(r)), 1 / b^2) and E[u] = 1 / (b sqrt(r)):
//   kappa = t y / (b sqrt(r)),  omega = t / (b sqrt(r)).
// ELBO, per copy: E_q[log N(y | f, w)] + E_q[log p(w)] - E_q[log q(w)]. Writing
// q(w) = w^(-1/2) exp(-r / (2 w) - lambda w) / Z_q,
//   E[log N]  = -log(2 pi) / 2 - E[log w] / 2 - r E[u] / 2
//   E[log p]  = log lambda - lambda E[w]
//   -E[log q] = E[log w] / 2 + r E[u] / 2 + lambda E[w] + log Z_q,
// the expectations cancel and, with Z_q = sqrt(pi / lambda) exp(-sqrt(2 lambda r)) (the
// integral above with d^2 replaced by r),
//   local ELBO = log(lambda / 2) / 2 - sqrt(2 lambda r) = -log(2 b) - sqrt(r) / b,
// which at v = 0 is log p(y | f), and below E_q[log p(y | f)] since
// sqrt(E[(y - f)^2]) >= E|y - f| (Jensen).
// Learned parameter (when `learn_scale`): d/db of sum t (-log(2 b) - sqrt(r) / b) = 0
// gives the closed form b = sum t sqrt(r) / sum t.
// Exact expected log-likelihood under f ~ N(m, v): -log(2 b) - E|y - f| / b with, for
// d = y - m and s = sqrt(v), E|y - f| = d (2 Phi(d / s) - 1) + 2 s phi(d / s).
// Response mean E[y | f] = f; predictive intervals by Monte Carlo (the contract's
// default). simulate(): the total of size_i copies f + b (E1 - E2), E1, E2 ~ Exp(1).
// Spec fields: y, trials (weights), scale, learn_scale (default true).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"

namespace augp {

namespace {

// One draw from the inverse Gaussian law IG(mu, s) (mean mu, shape s); mu = +inf gives
// the Levy law s / Z^2.
double draw_inverse_gaussian(double mu, double s, Rng& rng) {
  const double z = rng.norm();
  const double chi = z * z;
  const double phi = mu * chi / (2.0 * s);
  if (!std::isfinite(phi)) return s / chi;
  const double x2 = mu * (1.0 + phi + std::sqrt(phi * (2.0 + phi)));
  const double x1 = mu / (1.0 + phi + std::sqrt(phi * (2.0 + phi)));
  return rng.unif() * (mu + x1) <= mu ? x1 : x2;
}

class Laplace : public Likelihood {
 public:
  Laplace(const std::vector<double>& y, const std::vector<double>& t, double scale, bool learn_scale)
      : y_(y), t_(t), b_(scale), learn_scale_(learn_scale) {
    check_regression_data(y, t);
    if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("scale must be positive and finite");
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new Laplace(take_rows(y_, rows), take_rows(t_, rows), b_, learn_scale_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    const double s = 1.0 / (b_ * b_);
    for (int i = 0; i < n; ++i) {
      const double t = t_[i];
      const double ad = std::fabs(y_[i] - f(i, 0));
      const double mu = ad > 0 ? 1.0 / (b_ * ad) : INFINITY;
      omega(i, 0) = t > 0 ? draw_inverse_gaussian(t * mu, t * t * s, rng) : 0.0;
      kappa(i, 0) = omega(i, 0) * y_[i];
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      omega(i, 0) = t_[i] > 0 ? t_[i] / (b_ * root_r(i, m(i, 0), v(i, 0))) : 0.0;
      kappa(i, 0) = omega(i, 0) * y_[i];
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, b_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    const double c = -std::log(2.0 * b_);
    for (int i = 0; i < n_obs(); ++i) out[i] = t_[i] * (c - std::fabs(y_[i] - f(i, 0)) / b_);
    return out;
  }

  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    Eigen::VectorXd out(n);
    const double c = -std::log(2.0 * b_);
    for (int i = 0; i < n; ++i) {
      const double d = y_[i] - m(i, 0), s = std::sqrt(std::max(v(i, 0), 0.0));
      double ea = std::fabs(d);
      if (s > 0) {
        const double z = d / s;
        ea = d * std::erf(z / std::sqrt(2.0)) + 2.0 * s * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
      }
      out[i] = t_[i] * (c - ea / b_);
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override { return f.leftCols(1); }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i) {
      const int copies = static_cast<int>(std::round(size[i]));
      double s = 0.0;
      for (int k = 0; k < copies; ++k) s += f(i, 0) + b_ * (rng.exp1() - rng.exp1());
      y(i, 0) = s;
    }
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"scale", Eigen::MatrixXd::Constant(1, 1, b_)}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"scale"});
    b_ = positive_param(p, "scale", b_);
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    if (!learn_scale_) return 0.0;
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      num += t_[i] * root_r(i, m(i, 0), v(i, 0));
      den += t_[i];
    }
    if (!(den > 0) || !(num > 0) || !std::isfinite(num)) return 0.0;
    const double b = num / den, before = local(m, v, b_), after = local(m, v, b);
    if (!(after > before)) return 0.0;
    b_ = b;
    return after - before;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    normal_response_summary(m, v, 0.0, level, out);
  }

 private:
  // sqrt(r), r = (y - m)^2 + v, kept away from 0 so that E[u] stays finite when q(f)
  // collapses onto an observation.
  double root_r(int i, double m, double v) const {
    const double d = y_[i] - m;
    return std::max(std::sqrt(d * d + std::max(v, 0.0)), 1e-12 * b_);
  }

  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double b) const {
    const double c = -std::log(2.0 * b);
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - m(i, 0);
      s += t_[i] * (c - std::sqrt(d * d + std::max(v(i, 0), 0.0)) / b);
    }
    return s;
  }

  std::vector<double> y_, t_;
  double b_;
  bool learn_scale_;
};

}  // namespace

std::unique_ptr<Likelihood> make_laplace(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new Laplace(spec.vec("y"), spec.vec("trials"), spec.scalar("scale"),
                                                 !spec.has("learn_scale") || spec.flag("learn_scale")));
}

}  // namespace augp
