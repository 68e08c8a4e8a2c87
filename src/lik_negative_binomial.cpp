// Negative-binomial likelihood for overdispersed counts, Polya-Gamma augmented.
//   p(y | f) = Gamma(y + r) / (Gamma(r) y!) sigmoid(psi)^y sigmoid(-psi)^r,  psi = f - log r,
// so E[y | f] = r exp(psi) = exp(f) and Var[y | f] = mu + mu^2 / r: the latent value is
// the log mean (a log link; an offset, the log exposure, adds to f) and the dispersion
// r > 0 enters as the fixed offset -log r of the success log-odds psi. With the log mean
// as the latent value, a change of r at fixed f changes the dispersion only, not the
// mean, so learning r with q(f) held fixed is a well-conditioned step. As r -> infinity
// the law tends to Poisson(exp(f)).
// Row i has frequency weight t_i (the `trials` field): t_i copies of y_i.
//
// Augmentation (PG(b, 0) identity, b = y + r):
//   sigmoid(psi)^y sigmoid(-psi)^r = 2^(-b) exp((y - r) psi / 2) E_{PG(b, 0)}[exp(-omega psi^2 / 2)].
// Given omega, the log-likelihood is, in f, (y - r) (f - c) / 2 - omega (f - c)^2 / 2 with
// c = log r, i.e. up to a constant kappa f - omega f^2 / 2 with
//   kappa = (y - r) / 2 + omega c.
// t copies: the copies' omegas add (PG is additive in b), Omega ~ PG(t (y + r), psi):
//   kappa = t (y - r) / 2 + Omega c,  omega = Omega.
// Gibbs: Omega | f ~ PG(t (y + r), f - c) (the package's exact sampler, whose cost does
// not grow with b), then kappa as above.
// CAVI: q(Omega) = PG(t (y + r), s) with s^2 = E_q[(f - c)^2] = (m - c)^2 + v, so
//   E[Omega] = t (y + r) tanh(s / 2) / (2 s),  kappa = t (y - r) / 2 + E[Omega] c.
// Local ELBO (the E[Omega] terms cancel as for the Bernoulli likelihood), per row:
//   t [log C + (y - r) (m - c) / 2 - (y + r) (log 2 + log cosh(s / 2))],
// C = Gamma(y + r) / (Gamma(r) y!); at v = 0, log 2 + log cosh(psi / 2) = psi / 2 -
// log sigmoid(psi) gives t log p(y | f). log cosh(sqrt(x) / 2) is concave in x, so it is
// below E_q[log p(y | f)] (Jensen).
// Exact expected log-likelihood: t [log C + y (m - c) - (y + r) E log(1 + e^psi)], the
// last expectation by 40-point Gauss-Hermite quadrature.
// Learned parameter: r (when `learn_r`) maximises the local ELBO over log r in
// [log 1e-3, log 1e5] with q(f) fixed: a grid, then golden section around the best
// grid point, kept only when it raises the ELBO.
// Response mean exp(f); under f ~ N(m, v): mean exp(m + v / 2), sd
// exp(m + v / 2) sqrt(exp(v) - 1), quantiles exp(m -/+ z sqrt(v)) (exp is increasing).
// Simulation: the total of `size` copies is NB(size r, psi): lambda ~ Gamma(size r) e^f / r,
// y ~ Poisson(lambda). Predictive intervals: Monte Carlo (the contract's default).
// Spec fields: y (counts), trials (weights), r, learn_r (default false).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

class NegativeBinomial : public Likelihood {
 public:
  NegativeBinomial(const std::vector<double>& y, const std::vector<double>& t, double r, bool learn_r)
      : y_(y), t_(t), r_(r), learn_r_(learn_r) {
    check_regression_data(y, t);
    for (double v : y_)
      if (v < 0 || v != std::floor(v)) throw std::invalid_argument("y must be non-negative whole numbers");
    if (!(r > 0) || !std::isfinite(r)) throw std::invalid_argument("r must be positive and finite");
    set_r(r);
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new NegativeBinomial(take_rows(y_, rows), take_rows(t_, rows), r_, learn_r_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    const double c = std::log(r_);
    pg::ExactSampler sampler;
    for (int i = 0; i < n; ++i) {
      const double W = t_[i] > 0 ? sampler(t_[i] * (y_[i] + r_), f(i, 0) - c, rng) : 0.0;
      omega(i, 0) = W;
      kappa(i, 0) = 0.5 * t_[i] * (y_[i] - r_) + W * c;
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    const double c = std::log(r_);
    for (int i = 0; i < n; ++i) {
      const double d = m(i, 0) - c, s = std::sqrt(d * d + std::max(v(i, 0), 0.0));
      const double W = t_[i] > 0 ? pg::mean(t_[i] * (y_[i] + r_), s) : 0.0;
      omega(i, 0) = W;
      kappa(i, 0) = 0.5 * t_[i] * (y_[i] - r_) + W * c;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, r_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    const double c = std::log(r_);
    for (int i = 0; i < n_obs(); ++i) {
      const double psi = f(i, 0) - c;
      out[i] = t_[i] * (logc(i, r_) + y_[i] * log_sigmoid(psi) + r_ * log_sigmoid(-psi));
    }
    return out;
  }

  // Full-Bayes Gibbs: per row, with psi = f - log r,
  //   d/df     = t (y sigma(-psi) - r sigma(psi)),
  //   d/dlog r = t (r (psi(y + r) - psi(r)) - y sigma(-psi) + r log sigma(-psi) + r sigma(psi))
  // (at fixed f a change of r moves psi by -dlog r; psi() the digamma function).
  bool loglik_gradient(const Eigen::MatrixXd& f, const std::vector<std::string>& names,
                       const std::vector<int>& index, double* ll, Eigen::MatrixXd& grad_f,
                       Eigen::VectorXd& grad_t) const override {
    if (!only_scalar_param(names, index, "r")) return false;
    const int n = n_obs();
    grad_f.resize(n, 1);
    const double c = std::log(r_);
    double s = 0.0, dt = 0.0;
    for (int i = 0; i < n; ++i) {
      if (!(t_[i] > 0)) {
        grad_f(i, 0) = 0.0;
        continue;
      }
      const double psi = f(i, 0) - c, sp = sigmoid(psi), sm = sigmoid(-psi), lsm = log_sigmoid(-psi);
      s += t_[i] * (logc(i, r_) + y_[i] * log_sigmoid(psi) + r_ * lsm);
      grad_f(i, 0) = t_[i] * (y_[i] * sm - r_ * sp);
      dt += t_[i] * (r_ * digamma_diff(y_[i], r_) - y_[i] * sm + r_ * lsm + r_ * sp);
    }
    *ll = s;
    grad_t = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(names.size()), dt);
    return true;
  }

  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    const GaussHermite& gh = gauss_hermite(40);
    const double c = std::log(r_);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i) {
      const double d = m(i, 0) - c;
      const double e = normal_expectation(gh, d, v(i, 0), [](double f) { return log1pexp(f); });
      out[i] = t_[i] * (logc(i, r_) + y_[i] * d - (y_[i] + r_) * e);
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    return f.leftCols(1).array().exp().matrix();
  }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i) {
      const double k = std::round(size[i]);
      y(i, 0) = k > 0 ? rng.poisson(rng.gamma(k * r_) * std::exp(f(i, 0)) / r_) : 0.0;
    }
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"r", Eigen::MatrixXd::Constant(1, 1, r_)}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"r"});
    set_r(positive_param(p, "r", r_));
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    if (!learn_r_) return 0.0;
    const double start = local(m, v, r_);
    const double lo = std::log(1e-3), hi = std::log(1e5);
    auto obj = [&](double lr) {
      const double val = local(m, v, std::exp(lr));
      return std::isfinite(val) ? val : -INFINITY;
    };
    // r on the log scale: a 48-cell grid over [1e-3, 1e5], then golden section down to a
    // 1e-10 bracket (at most 80 steps); the best grid point stands if the refinement ends lower.
    const Argmax1D best = maximise_grid_golden(obj, lo, hi, 48, 80, 1e-10);
    double lr = best.x, val = best.value;
    if (best.grid_value > val) {
      lr = best.grid_x;
      val = best.grid_value;
    }
    if (!(val > start)) return 0.0;
    set_r(std::exp(lr));
    return val - start;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    const int r = static_cast<int>(m.rows());
    const double z = level > 0 ? normal_quantile(1.0 - 0.5 * (1.0 - level)) : 0.0;
    out.mean.resize(r, 1);
    out.sd.resize(r, 1);
    out.lwr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
    out.upr.resize(level > 0 ? r : 0, level > 0 ? 1 : 0);
    for (int i = 0; i < r; ++i) {
      const double vv = std::max(v(i, 0), 0.0), s = std::sqrt(vv);
      const double mu = std::exp(m(i, 0) + 0.5 * vv);
      out.mean(i, 0) = mu;
      out.sd(i, 0) = mu * std::sqrt(std::expm1(vv));
      if (level > 0) {
        out.lwr(i, 0) = std::exp(m(i, 0) - z * s);
        out.upr(i, 0) = std::exp(m(i, 0) + z * s);
      }
    }
  }

 private:
  void set_r(double r) {
    r_ = r;
    lgr_ = std::lgamma(r);
  }

  // log Gamma(y + r) - log Gamma(r) - log y!
  double logc(int i, double r) const {
    const double lg = r == r_ ? lgr_ : std::lgamma(r);
    return std::lgamma(y_[i] + r) - lg - std::lgamma(y_[i] + 1.0);
  }

  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double r) const {
    const double c = std::log(r), lgr = std::lgamma(r);
    double out = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      if (!(t_[i] > 0)) continue;
      const double d = m(i, 0) - c, s = std::sqrt(d * d + std::max(v(i, 0), 0.0));
      const double lc = std::lgamma(y_[i] + r) - lgr - std::lgamma(y_[i] + 1.0);
      out += t_[i] * (lc + 0.5 * (y_[i] - r) * d - (y_[i] + r) * (pg::LOG2 + pg::log_cosh(0.5 * s)));
    }
    return out;
  }

  std::vector<double> y_, t_;
  double r_, lgr_ = 0.0;
  bool learn_r_;
};

}  // namespace

std::unique_ptr<Likelihood> make_negative_binomial(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new NegativeBinomial(spec.vec("y"), spec.vec("trials"), spec.scalar("r"),
                                                          spec.has("learn_r") && spec.flag("learn_r")));
}

}  // namespace augp
