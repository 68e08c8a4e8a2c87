// Heteroscedastic Gaussian likelihood (GP regression with input-dependent noise): two
// latent columns, the mean f (column 0) and g (column 1) for the noise precision,
//   y | f, g ~ N(f, 1 / tau),   tau = lambda sigmoid(h),   h = g - log(lambda),   lambda > 0.
// lambda is the largest precision (the cap that tau approaches as g grows); well below
// it, tau = lambda sigmoid(g - log lambda) ~ exp(g), so g is the log precision whatever
// lambda. (Writing the shift into the likelihood keeps lambda from trading off against
// the level of g: with tau = lambda sigmoid(g), raising lambda and lowering g by its log
// changes almost nothing, a ridge that coordinate ascent climbs only slowly.)
// Row i has frequency weight t_i (the `trials` field): t_i copies of y_i, each with its
// own auxiliary variables.
//
// Augmentation (after Galy-Fajou, Wenzel and Opper 2020), in h. With d = y - f and
// a = lambda d^2 / 2, sigmoid(h) = 1 - sigmoid(-h) and the exponential series,
//   exp(-a sigmoid(h)) = exp(-a) exp(a sigmoid(-h)) = sum_n Po(n | a) sigmoid(-h)^n,
// and, for b = n + 1/2, sigmoid(h)^(1/2) sigmoid(-h)^n = 2^-b exp(k_n h) cosh(h / 2)^-b
// with k_n = (1/2 - n) / 2 and cosh(h / 2)^-b = int exp(-omega h^2 / 2) PG(omega | b, 0) domega.
// Hence
//   p(y | f, g) = sqrt(lambda / (2 pi)) sigmoid(h)^(1/2) exp(-a sigmoid(h))
//               = sqrt(lambda / (2 pi)) sum_n Po(n | a) 2^-(n + 1/2)
//                 int exp(k_n h - omega h^2 / 2) PG(omega | n + 1/2, 0) domega.
// In g: k h - omega h^2 / 2 = (k + omega l) g - omega g^2 / 2 + const (l = log lambda), so
// the sites of g are kappa = k + omega l, omega. Given (n, omega) the likelihood is
// Gaussian in g and free of f; given g (n, omega integrated out) it is Gaussian in f with
// precision tau. The columns are coupled, so they are updated in turn
// (sequential_columns()).
//
// Gibbs (a partially collapsed sweep): f | g, y, then (n, omega) | f, g, then g | n, omega:
//   f:      kappa = t tau y,  omega = t tau                      (n, omega integrated out)
//   n:      n ~ Poisson(a sigmoid(-h))    (t copies: N = their sum ~ Poisson(t a sigmoid(-h)))
//   omega:  omega | n, g ~ PG(n + 1/2, h) (their sum ~ PG(N + t/2, h))
//   g:      kappa = (t/2 - N) / 2 + omega l,  omega = the summed PG draw.
// The first two steps draw (f, n, omega) from their joint conditional given g, and g
// given (n, omega) does not depend on f, so the sweep leaves the posterior invariant.
//
// CAVI with q(f) = N(m, v), q(g) = N(mu + l, s2) (so q(h) = N(mu, s2); per point) and
// q(n, omega): E_q(f)[log p(y | f, g)] = log sqrt(lambda sigmoid(h) / (2 pi)) - c sigmoid(h)
// exactly, with c = lambda r / 2, r = (y - m)^2 + v. Augmenting that (a = c) and taking
// the optimal q(n, omega) given q(g), with hbar = sqrt(mu^2 + s2):
//   q(omega | n) = PG(n + 1/2, hbar),  q(n) = Poisson(gamma),
//   gamma = c exp(-mu / 2) / (2 cosh(hbar / 2)),
// and summing the series in closed form, the local ELBO per copy is
//   log sqrt(lambda / (2 pi)) + mu / 4 - log(2 cosh(hbar / 2)) / 2 - (lambda r / 2) rho,
//   rho = 1 - exp(-mu / 2) / (2 cosh(hbar / 2))  (in (0, 1); sigmoid(mu) when s2 = 0).
// At v = s2 = 0 it is log p(y | f, g); it is below E_q[log p(y | f, g)] (Jensen, per g).
// Coordinate updates (each raises this bound):
//   q(f): the bound is linear in r, so q(f) is the Gaussian posterior with sites
//         omega = t lambda rho, kappa = omega y (rho from the current q(g));
//   q(g): sites omega = t (gamma + 1/2) tanh(hbar / 2) / (2 hbar) (E[omega]) and
//         kappa = t (1/2 - gamma) / 2 + omega l (E over q(n)), gamma from the current q(f)
//         and q(g).
// The engine updates q(f) and then q(g) from sites refreshed at the new q(f).
// Learned parameter lambda (when `learn_lambda`): the local ELBO at fixed q(f), q(g) as a
// function of l = log lambda (mu = E[g] - l moves with it), maximised by a grid over
// l_cur -/+ 12 (within log(var(y)^-1) - 10 and + 25) refined by golden-section search,
// kept only when it raises the ELBO.
// Exact expected log-likelihood under independent f ~ N(m, v), g ~ N(mu + l, s2):
//   log sqrt(lambda / (2 pi)) + E[log sigmoid(h)] / 2 - (lambda r / 2) E[sigmoid(h)],
// the two expectations by 40-point Gauss-Hermite quadrature.
// Response mean E[y | f, g] = f. A new response given (f, g) is N(f, 1 / tau); under the
// Gaussian marginals its distribution function is
//   P(y <= u) = E_g[Phi((u - m) / sqrt(v + 1 / tau(g)))]
// (quadrature over g), and the predictive interval comes from its quantiles (bisection).
// simulate(): the total of size_i copies, N(size f, size / tau).
// Spec fields: y, trials (weights), lambda, learn_lambda (default true).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

const double LOG_2PI = 1.8378770664093454836;

// log(2 cosh(x / 2)) for x >= 0.
double log_2cosh_half(double x) { return 0.5 * x + std::log1p(std::exp(-x)); }

// exp(-mu / 2) / (2 cosh(hbar / 2)), hbar >= |mu|, without overflow.
double tilt(double mu, double hbar) {
  return std::exp(-0.5 * (mu + hbar)) / (1.0 + std::exp(-hbar));
}

// tanh(x / 2) / (2 x) for x >= 0 (1/4 at 0): the mean of PG(1, x).
double pg1_mean(double x) {
  if (x < 1e-4) return 0.25 - x * x / 48.0;
  return std::tanh(0.5 * x) / (2.0 * x);
}

double standard_normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

class Heteroscedastic : public Likelihood {
 public:
  Heteroscedastic(const std::vector<double>& y, const std::vector<double>& t, double lambda,
                  bool learn_lambda)
      : y_(y), t_(t), lambda_(lambda), l_(std::log(lambda)), learn_(learn_lambda) {
    check_regression_data(y, t);
    if (!(lambda > 0) || !std::isfinite(lambda))
      throw std::invalid_argument("lambda must be positive and finite");
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 2; }
  int n_response() const override { return 1; }
  bool sequential_columns() const override { return true; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(
        new Heteroscedastic(take_rows(y_, rows), take_rows(t_, rows), lambda_, learn_));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.setZero(n_obs(), 2);
    omega.setZero(n_obs(), 2);
    sample_aux_column(0, f, rng, kappa, omega);
    sample_aux_column(1, f, rng, kappa, omega);
  }

  void sample_aux_column(int j, const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                         Eigen::MatrixXd& omega) const override {
    for (int i = 0; i < n_obs(); ++i) {
      const double t = t_[i], h = f(i, 1) - l_;
      if (j == 0) {
        omega(i, 0) = t * lambda_ * sigmoid(h);
        kappa(i, 0) = omega(i, 0) * y_[i];
      } else {
        const double d = y_[i] - f(i, 0);
        const double N = t > 0 ? rng.poisson(t * 0.5 * lambda_ * d * d * sigmoid(-h)) : 0.0;
        const double b = N + 0.5 * t;
        omega(i, 1) = b > 0 ? pg::draw_exact(b, h, rng) : 0.0;
        kappa(i, 1) = 0.5 * (0.5 * t - N) + omega(i, 1) * l_;
      }
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.setZero(n_obs(), 2);
    omega.setZero(n_obs(), 2);
    expect_aux_column(0, m, v, kappa, omega);
    expect_aux_column(1, m, v, kappa, omega);
  }

  void expect_aux_column(int j, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                         Eigen::MatrixXd& kappa, Eigen::MatrixXd& omega) const override {
    for (int i = 0; i < n_obs(); ++i) {
      const double t = t_[i], mu = m(i, 1) - l_;
      const double hbar = std::sqrt(mu * mu + std::max(v(i, 1), 0.0));
      const double x = tilt(mu, hbar);
      if (j == 0) {
        omega(i, 0) = t * lambda_ * (1.0 - x);
        kappa(i, 0) = omega(i, 0) * y_[i];
      } else {
        const double gam = 0.5 * lambda_ * r(i, m, v) * x;
        omega(i, 1) = t * (gam + 0.5) * pg1_mean(hbar);
        kappa(i, 1) = 0.5 * t * (0.5 - gam) + omega(i, 1) * l_;
      }
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, l_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - f(i, 0), h = f(i, 1) - l_;
      out[i] = t_[i] * (0.5 * (l_ + log_sigmoid(h) - LOG_2PI) - 0.5 * lambda_ * sigmoid(h) * d * d);
    }
    return out;
  }

  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 2);
    const GaussHermite& gh = gauss_hermite(40);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i) {
      const double s = std::sqrt(std::max(v(i, 1), 0.0));
      double els = 0.0, es = 0.0;
      for (int k = 0; k < gh.x.size(); ++k) {
        const double h = m(i, 1) - l_ + s * gh.x[k];
        els += gh.w[k] * log_sigmoid(h);
        es += gh.w[k] * sigmoid(h);
      }
      out[i] = t_[i] * (0.5 * (l_ - LOG_2PI + els) - 0.5 * lambda_ * r(i, m, v) * es);
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override { return f.leftCols(1); }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i)
      y(i, 0) = size[i] * f(i, 0) + std::sqrt(size[i] / (lambda_ * sigmoid(f(i, 1) - l_))) * rng.norm();
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"lambda", Eigen::MatrixXd::Constant(1, 1, lambda_)}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"lambda"});
    set_lambda(positive_param(p, "lambda", lambda_));
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    if (!learn_ || n_obs() == 0) return 0.0;
    // the search range of l = log lambda: l_cur -/+ 12, within log(1 / var(y)) - 10 and + 25
    double sw = 0.0, sy = 0.0, syy = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      sw += t_[i];
      sy += t_[i] * y_[i];
      syy += t_[i] * y_[i] * y_[i];
    }
    double vy = sw > 0 ? syy / sw - (sy / sw) * (sy / sw) : 1.0;
    if (!(vy > 0) || !std::isfinite(vy)) vy = 1.0;
    const double lo = std::max(l_ - 12.0, -std::log(vy) - 10.0);
    const double hi = std::min(l_ + 12.0, -std::log(vy) + 25.0);
    const double start = local(m, v, l_);
    if (!(hi > lo)) return 0.0;
    auto obj = [&](double l) { return local(m, v, l); };
    // a 48-cell grid, then 60 golden-section steps in the cells next to the best grid point
    const Argmax1D best = maximise_grid_golden(obj, lo, hi, 48, 60, -1.0);
    const double l = best.x, val = best.value;
    if (!(val > start) || !std::isfinite(val)) return 0.0;
    set_lambda(std::exp(l));
    return val - start;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    normal_response_summary(m, v, 0.0, level, out);
  }

  void predictive_interval(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double level, Rng&,
                           Eigen::MatrixXd& lwr, Eigen::MatrixXd& upr) const override {
    const int r = static_cast<int>(m.rows());
    const GaussHermite& gh = gauss_hermite(40);
    const int K = static_cast<int>(gh.x.size());
    lwr.resize(r, 1);
    upr.resize(r, 1);
    std::vector<double> sd(K);
    for (int i = 0; i < r; ++i) {
      const double s = std::sqrt(std::max(v(i, 1), 0.0)), vf = std::max(v(i, 0), 0.0);
      double hi_sd = 0.0;
      for (int k = 0; k < K; ++k) {
        sd[k] = std::sqrt(vf + 1.0 / (lambda_ * sigmoid(m(i, 1) - l_ + s * gh.x[k])));
        hi_sd = std::max(hi_sd, sd[k]);
      }
      auto cdf = [&](double u) {
        double p = 0.0;
        for (int k = 0; k < K; ++k) p += gh.w[k] * standard_normal_cdf((u - m(i, 0)) / sd[k]);
        return p;
      };
      auto quantile = [&](double p) {
        double lo = m(i, 0) - 40.0 * hi_sd, hi = m(i, 0) + 40.0 * hi_sd;
        for (int it = 0; it < 100 && hi - lo > 1e-10 * (1.0 + std::fabs(lo) + std::fabs(hi)); ++it) {
          const double mid = 0.5 * (lo + hi);
          (cdf(mid) < p ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
      };
      lwr(i, 0) = quantile(0.5 * (1.0 - level));
      upr(i, 0) = quantile(1.0 - 0.5 * (1.0 - level));
    }
  }

 private:
  // r = E_q[(y - f)^2] = (y - m)^2 + v.
  double r(int i, const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const {
    const double d = y_[i] - m(i, 0);
    return d * d + std::max(v(i, 0), 0.0);
  }

  // The local ELBO at l = log lambda.
  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double l) const {
    const double c = 0.5 * (l - LOG_2PI), lambda = std::exp(l);
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double mu = m(i, 1) - l, hbar = std::sqrt(mu * mu + std::max(v(i, 1), 0.0));
      const double rho = 1.0 - tilt(mu, hbar);
      s += t_[i] * (c + 0.25 * mu - 0.5 * log_2cosh_half(hbar) - 0.5 * lambda * r(i, m, v) * rho);
    }
    return s;
  }

  void set_lambda(double lambda) {
    lambda_ = lambda;
    l_ = std::log(lambda);
  }

  std::vector<double> y_, t_;
  double lambda_, l_;  // lambda and its log
  bool learn_;
};

}  // namespace

std::unique_ptr<Likelihood> make_heteroscedastic(const LikSpec& spec) {
  const bool learn = !spec.has("learn_lambda") || spec.flag("learn_lambda");
  return std::unique_ptr<Likelihood>(
      new Heteroscedastic(spec.vec("y"), spec.vec("trials"), spec.scalar("lambda"), learn));
}

}  // namespace augp
