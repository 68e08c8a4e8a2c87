// Poisson likelihood with a scaled-logistic rate:
//   y | f ~ Poisson(lambda sigma(f)),  lambda > 0 the maximal rate.
// Row i has frequency weight t_i (the `trials` field): t_i copies of y_i.
//
// Augmentation (thinning of a Poisson process of rate lambda; Galy-Fajou et al. 2020).
// Since sigma(f) = 1 - sigma(-f),
//   exp(-lambda sigma(f)) = exp(-lambda) exp(lambda sigma(-f))
//                         = exp(-lambda) sum_n lambda^n sigma(-f)^n / n!,
// so with a latent count n >= 0 (the rejected points)
//   p(y, n | f) = exp(-lambda) lambda^(y + n) / (y! n!) sigma(f)^y sigma(-f)^n,
// and the Polya-Gamma identity sigma(f)^y sigma(-f)^n = 2^-(y + n) e^((y - n) f / 2)
// E_{PG(y + n, 0)}[exp(-omega f^2 / 2)] gives
//   p(y, n, omega | f) = exp(-lambda) lambda^(y + n) / (y! n! 2^(y + n))
//                        exp(kappa f - omega f^2 / 2) PG(omega | y + n, 0),
//   kappa = (y - n) / 2.
//
// Gibbs: summing omega out leaves p(n | y, f) propto (lambda sigma(-f))^n / n!, so
//   n | f ~ Poisson(lambda sigma(-f)),  omega | n, f ~ PG(y + n, f).
// For t copies the latent counts add up to N ~ Poisson(t lambda sigma(-f)) and the
// omegas to PG(t y + N, f) (additivity of PG in its first argument); kappa =
// (t y - N) / 2. PG(0, .) is the point mass at 0.
//
// CAVI, structured family q(n, omega) = q(n) PG(omega | y + n, c), q(f) = N(m, v),
// c = sqrt(m^2 + v). Per copy, E_f[log p(y, n, omega | f)] contains
// (y - n) m / 2 - omega c^2 / 2 + log PG(omega | y + n, 0), and
// PG(omega | b, c) = cosh(c / 2)^b exp(-c^2 omega / 2) PG(omega | b, 0), so the optimal
// q(omega | n) is PG(y + n, c) and, with it, the n-th term of the bound is
//   g(n) = -lambda + (y + n) log lambda - log y! - log n! + (y - n) m / 2
//          - (y + n) log(2 cosh(c / 2)).
// The optimal q(n) is propto exp(g(n)): Poisson(mu) with
//   mu = lambda a,  a = e^(-m / 2) / (2 cosh(c / 2)),
// and the bound is log sum_n exp(g(n)), the local ELBO per copy:
//   L = y log lambda - log y! - lambda (1 - a) + y (m / 2 - log(2 cosh(c / 2))).
// At v = 0 (c = |m|) a = sigma(-m), 1 - a = sigma(m) and m / 2 - log(2 cosh(m / 2)) =
// log sigma(m): L = log Poisson(y | lambda sigma(m)) exactly (q(n, omega) is then
// p(n, omega | y, f)). The moments the Gaussian step needs (E[PG(b, c)] is linear in b):
//   kappa = t (y - mu) / 2,  E[omega] = t (y + mu) E[PG(1, c)].
// 1 - a in a form without cancellation: for m >= 0 directly; for m < 0, with
// d = c - |m| = v / (c + |m|) >= 0, 1 - a = (e^(-d / 2) expm1(d / 2) + e^(-c)) / (1 + e^(-c)).
//
// Learned parameter (when `learn_lambda`): the local ELBO summed over the rows is
//   sum t (y log lambda - lambda (1 - a)) + const(lambda), concave in lambda, maximised
// in closed form by lambda = sum t y / sum t (1 - a) (a does not depend on lambda). It
// is kept only when it raises the local ELBO.
//
// Exact expected log-likelihood under f ~ N(m, v) and the response summaries by
// 40-point Gauss-Hermite quadrature: E[y | f] = lambda sigma(f), increasing in f, so its
// quantiles are lambda sigma of those of f. Predictive intervals by Monte Carlo (the
// contract's default). simulate(): Poisson(size lambda sigma(f)).
// Rate-preserving flow (Likelihood::param_flow): the likelihood depends on (lambda, f) only
// through the rates lambda sigma(f_i), and lambda e^d sigma(f') = lambda sigma(f) for
//   sigma(f') = sigma(f) e^-d,  i.e. G(f') = G(f) - d with G = log sigma,
// so with g' = log sigma(f) - d < 0: f' = g' - log(1 - e^g') and log sigma(-f') =
// log(1 - e^g'). The map is defined while every log sigma(f_i) - d < 0, i.e. for
// d > max_i log sigma(f_i) (no upper end), and its log derivative is
// log phi_d'(f) = log sigma(-f) - log sigma(-f') (dG/df = sigma(-f)).
// Spec fields: y (counts), trials (weights), lambda, learn_lambda (default true).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

class PoissonLogistic : public Likelihood {
 public:
  PoissonLogistic(const std::vector<double>& y, const std::vector<double>& t, double lambda,
                  bool learn_lambda)
      : y_(y), t_(t), lfy_(y.size()), lambda_(lambda), learn_lambda_(learn_lambda) {
    check_regression_data(y, t);
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (y[i] < 0 || y[i] != std::floor(y[i]))
        throw std::invalid_argument("need counts y that are whole numbers >= 0");
      lfy_[i] = std::lgamma(y[i] + 1.0);
    }
    if (!(lambda > 0) || !std::isfinite(lambda))
      throw std::invalid_argument("lambda must be positive and finite");
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(
        new PoissonLogistic(take_rows(y_, rows), take_rows(t_, rows), lambda_, learn_lambda_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      const double N = t_[i] > 0 ? rng.poisson(t_[i] * lambda_ * sigmoid(-f(i, 0))) : 0.0;
      const double b = t_[i] * y_[i] + N;
      omega(i, 0) = b > 0 ? pg::draw_exact(b, f(i, 0), rng) : 0.0;
      kappa(i, 0) = 0.5 * (t_[i] * y_[i] - N);
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      const double mi = m(i, 0), vi = std::max(v(i, 0), 0.0);
      const double c = std::sqrt(mi * mi + vi);
      const double mu = lambda_ * a_of(mi, c);
      kappa(i, 0) = 0.5 * t_[i] * (y_[i] - mu);
      omega(i, 0) = t_[i] > 0 ? t_[i] * (y_[i] + mu) * pg::mean(1.0, c) : 0.0;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, lambda_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    const double ll = std::log(lambda_);
    for (int i = 0; i < n_obs(); ++i) {
      const double x = f(i, 0);
      out[i] = t_[i] * (y_[i] * (ll + log_sigmoid(x)) - lfy_[i] - lambda_ * sigmoid(x));
    }
    return out;
  }

  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    const GaussHermite& gh = gauss_hermite(40);
    const double ll = std::log(lambda_);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i) {
      const double s = std::sqrt(std::max(v(i, 0), 0.0));
      double els = 0.0, es = 0.0;
      for (int k = 0; k < gh.x.size(); ++k) {
        const double x = m(i, 0) + s * gh.x[k];
        els += gh.w[k] * log_sigmoid(x);
        es += gh.w[k] * sigmoid(x);
      }
      out[i] = t_[i] * (y_[i] * (ll + els) - lfy_[i] - lambda_ * es);
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    Eigen::MatrixXd out(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i) out(i, 0) = lambda_ * sigmoid(f(i, 0));
    return out;
  }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i)
      y(i, 0) = size[i] > 0 ? rng.poisson(size[i] * lambda_ * sigmoid(f(i, 0))) : 0.0;
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"lambda", Eigen::MatrixXd::Constant(1, 1, lambda_)}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"lambda"});
    lambda_ = positive_param(p, "lambda", lambda_);
  }

  bool param_flow(std::string* name, int* index) const override {
    *name = "lambda";
    *index = 0;
    return true;
  }

  void param_flow_range(const Eigen::MatrixXd& f, double* lo, double* hi) const override {
    double g = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < f.rows(); ++i) g = std::max(g, log_sigmoid(f(i, 0)));
    *lo = g;
    *hi = std::numeric_limits<double>::infinity();
  }

  double param_flow_map(const Eigen::MatrixXd& f, double d, Eigen::MatrixXd& out) const override {
    out.resize(f.rows(), f.cols());
    double lj = 0.0;
    for (int i = 0; i < f.rows(); ++i) {
      const double x = f(i, 0), g = log_sigmoid(x) - d;
      // log(1 - e^g), g < 0, accurate at both ends
      const double l1m = g > -0.69314718055994530942 ? std::log(-std::expm1(g)) : std::log1p(-std::exp(g));
      out(i, 0) = g - l1m;
      lj += log_sigmoid(-x) - l1m;
    }
    return lj;
  }

  // d/df_i = t_i (y_i sigma(-f_i) - lambda sigma(f_i) sigma(-f_i)),
  // d/dlog lambda = sum_i t_i (y_i - lambda sigma(f_i)).
  bool loglik_gradient(const Eigen::MatrixXd& f, const std::vector<std::string>& names,
                       const std::vector<int>& index, double* ll, Eigen::MatrixXd& grad_f,
                       Eigen::VectorXd& grad_t) const override {
    if (!only_scalar_param(names, index, "lambda")) return false;
    const int n = n_obs();
    grad_f.resize(n, 1);
    const double llam = std::log(lambda_);
    double s = 0.0, dt = 0.0;
    for (int i = 0; i < n; ++i) {
      const double x = f(i, 0), sp = sigmoid(x), sm = sigmoid(-x);
      s += t_[i] * (y_[i] * (llam + log_sigmoid(x)) - lfy_[i] - lambda_ * sp);
      grad_f(i, 0) = t_[i] * (y_[i] - lambda_ * sp) * sm;
      dt += t_[i] * (y_[i] - lambda_ * sp);
    }
    *ll = s;
    grad_t = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(names.size()), dt);
    return true;
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    if (!learn_lambda_) return 0.0;
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double mi = m(i, 0), vi = std::max(v(i, 0), 0.0);
      num += t_[i] * y_[i];
      den += t_[i] * one_minus_a(mi, std::sqrt(mi * mi + vi), vi);
    }
    if (!(num > 0) || !(den > 0) || !std::isfinite(num / den)) return 0.0;
    const double lambda = num / den, before = local(m, v, lambda_), after = local(m, v, lambda);
    if (!(after > before)) return 0.0;
    lambda_ = lambda;
    return after - before;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    sigmoid_response_summary(m, v, lambda_, level, out);
  }

 private:
  // a = e^(-m / 2) / (2 cosh(c / 2)), the mean of q(n) per unit lambda.
  static double a_of(double m, double c) {
    return std::exp(-0.5 * (m + c)) / (1.0 + std::exp(-c));
  }

  // 1 - a without cancellation (see the header).
  static double one_minus_a(double m, double c, double v) {
    if (m >= 0) return 1.0 - a_of(m, c);
    const double am = -m;
    const double d = c + am > 0 ? v / (c + am) : 0.0;
    return (std::exp(-0.5 * d) * std::expm1(0.5 * d) + std::exp(-c)) / (1.0 + std::exp(-c));
  }

  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double lambda) const {
    const double ll = std::log(lambda);
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      if (!(t_[i] > 0)) continue;
      const double mi = m(i, 0), vi = std::max(v(i, 0), 0.0);
      const double c = std::sqrt(mi * mi + vi);
      // m / 2 - log(2 cosh(c / 2)) = (m - c) / 2 - log(1 + e^-c)
      const double logs = 0.5 * (mi - c) - std::log1p(std::exp(-c));
      s += t_[i] * (y_[i] * (ll + logs) - lfy_[i] - lambda * one_minus_a(mi, c, vi));
    }
    return s;
  }

  std::vector<double> y_, t_, lfy_;
  double lambda_;
  bool learn_lambda_;
};

}  // namespace

std::unique_ptr<Likelihood> make_poisson_logistic(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(
      new PoissonLogistic(spec.vec("y"), spec.vec("trials"), spec.scalar("lambda"),
                          !spec.has("learn_lambda") || spec.flag("learn_lambda")));
}

}  // namespace augp
