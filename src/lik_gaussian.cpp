// Gaussian likelihood (GP regression): y_i | f_i ~ N(f_i, sigma^2 / t_i), t_i the
// frequency weight of row i (the `trials` field; 1 for one observation: t_i copies of
// y_i at the same input contribute t_i log N(y_i | f_i, sigma^2)).
//
// Contract form: t log N(y | f, s2) = const + t y f / s2 - t f^2 / (2 s2), so
//   kappa = t y / s2,  omega = t / s2,
// with no auxiliary variables: sample_aux and expect_aux return the same.
// Local ELBO, q(f) = N(m, v):
//   E_q[t log N(y | f, s2)] = t (-log(2 pi s2) / 2 - ((y - m)^2 + v) / (2 s2)),
// exact (the ELBO of a Gaussian model is the log marginal likelihood at the exact
// posterior). Learned parameter s2 = sigma^2: d/ds2 = 0 gives the closed form
//   s2 = sum t ((y - m)^2 + v) / sum t.
// Response mean E[y | f] = f; under f ~ N(m, v) its mean is m, sd sqrt(v) and interval
// m -/+ z sqrt(v). The predictive distribution of a new y is N(m, v + s2): its interval
// is m -/+ z sqrt(v + s2). simulate() returns the total of size_i independent
// responses, N(size f, size s2).
// Spec fields: y, trials (weights), sigma.
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"

namespace augp {

namespace {

const double LOG_2PI = 1.8378770664093454836;

class Gaussian : public Likelihood {
 public:
  Gaussian(const std::vector<double>& y, const std::vector<double>& t, double sigma)
      : y_(y), t_(t), s2_(sigma * sigma) {
    check_regression_data(y, t);
    if (!(sigma > 0) || !std::isfinite(sigma)) throw std::invalid_argument("sigma must be positive and finite");
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(
        new Gaussian(take_rows(y_, rows), take_rows(t_, rows), std::sqrt(s2_)));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng&, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    expect_aux(f, f, kappa, omega);
  }

  void expect_aux(const Eigen::MatrixXd&, const Eigen::MatrixXd&, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      kappa(i, 0) = t_[i] * y_[i] / s2_;
      omega(i, 0) = t_[i] / s2_;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    return local(m, v, s2_);
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - f(i, 0);
      out[i] = t_[i] * (-0.5 * (LOG_2PI + std::log(s2_)) - 0.5 * d * d / s2_);
    }
    return out;
  }

  // Exact: t (-log(2 pi s2) / 2 - ((y - m)^2 + v) / (2 s2)), the terms of elbo_local.
  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i) {
      const double d = y_[i] - m(i, 0);
      out[i] = t_[i] * (-0.5 * (LOG_2PI + std::log(s2_)) - 0.5 * (d * d + std::max(v(i, 0), 0.0)) / s2_);
    }
    return out;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override { return f.leftCols(1); }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i)
      y(i, 0) = size[i] * f(i, 0) + std::sqrt(size[i] * s2_) * rng.norm();
    return y;
  }

  std::map<std::string, Eigen::MatrixXd> params() const override {
    return {{"sigma", Eigen::MatrixXd::Constant(1, 1, std::sqrt(s2_))}};
  }

  void set_params(const std::map<std::string, Eigen::MatrixXd>& p) override {
    check_param_names(p, {"sigma"});
    const double sigma = positive_param(p, "sigma", std::sqrt(s2_));
    s2_ = sigma * sigma;
  }

  double learn_params(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) override {
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - m(i, 0);
      num += t_[i] * (d * d + v(i, 0));
      den += t_[i];
    }
    if (!(den > 0) || !(num > 0)) return 0.0;
    const double s2 = num / den, before = local(m, v, s2_), after = local(m, v, s2);
    if (!(after > before)) return 0.0;
    s2_ = s2;
    return after - before;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    normal_response_summary(m, v, 0.0, level, out);
  }

  void predictive_interval(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double level, Rng&,
                           Eigen::MatrixXd& lwr, Eigen::MatrixXd& upr) const override {
    ResponseSummary s;
    normal_response_summary(m, v, s2_, level, s);
    lwr = s.lwr;
    upr = s.upr;
  }

 private:
  double local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, double s2) const {
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double d = y_[i] - m(i, 0);
      s += t_[i] * (-0.5 * (LOG_2PI + std::log(s2)) - 0.5 * (d * d + v(i, 0)) / s2);
    }
    return s;
  }

  std::vector<double> y_, t_;
  double s2_;
};

}  // namespace

std::unique_ptr<Likelihood> make_gaussian(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new Gaussian(spec.vec("y"), spec.vec("trials"), spec.scalar("sigma")));
}

}  // namespace augp
