// Bernoulli / binomial likelihood with the logistic link, Polya-Gamma augmented.
// y_i successes out of N_i trials: p(y | f) = C(N, y) e^(y f) / (1 + e^f)^N
//   = C(N, y) 2^(-N) e^(kappa f) E_{PG(N, 0)}[exp(-omega f^2 / 2)],  kappa = y - N / 2.
// The response mean is the success probability sigma(f); under f ~ N(m, v) its
// mean and sd come from Gauss-Hermite quadrature and, sigma being increasing, its
// quantiles are sigma of the quantiles of f.
// Spec fields: y (successes), trials.
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

class Bernoulli : public Likelihood {
 public:
  // Per row it keeps y, and N only where some row has N != 1, plus log C(N, y) only
  // where some row has one other than 0 (binary data need neither): a large data set is
  // held once, in its blocks, at 8 bytes a row.
  Bernoulli(std::vector<double> y, std::vector<double> trials) : y_(std::move(y)), N_(std::move(trials)) {
    if (y_.size() != N_.size()) throw std::invalid_argument("y and trials differ in length");
    bool any_logc = false, all_one = true;
    for (std::size_t i = 0; i < y_.size(); ++i) {
      if (!(N_[i] >= 0) || !(y_[i] >= 0) || y_[i] > N_[i])
        throw std::invalid_argument("need 0 <= y <= trials");
      if (y_[i] > 0 && y_[i] < N_[i]) any_logc = true;
      if (N_[i] != 1.0) all_one = false;
    }
    if (any_logc) {
      logc_.resize(y_.size());
      for (std::size_t i = 0; i < y_.size(); ++i)
        logc_[i] = std::lgamma(N_[i] + 1) - std::lgamma(y_[i] + 1) - std::lgamma(N_[i] - y_[i] + 1);
    }
    if (all_one) std::vector<double>().swap(N_);
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }
  int n_response() const override { return 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    return std::unique_ptr<Likelihood>(new Bernoulli(
        take_rows(y_, rows), N_.empty() ? std::vector<double>(rows.size(), 1.0) : take_rows(N_, rows)));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      kappa(i, 0) = kap(i);
      omega(i, 0) = N(i) > 0 ? pg::draw_exact(N(i), f(i, 0), rng) : 0.0;
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      kappa(i, 0) = kap(i);
      const double c = std::sqrt(m(i, 0) * m(i, 0) + v(i, 0));
      omega(i, 0) = N(i) > 0 ? pg::mean(N(i), c) : 0.0;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    // With q(omega_i) = PG(N_i, c_i), c_i^2 = m_i^2 + v_i, the terms
    // -(m^2 + v) E[omega] / 2 and + c^2 E[omega] / 2 cancel.
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double c = std::sqrt(m(i, 0) * m(i, 0) + v(i, 0));
      s += logc(i) - N(i) * pg::LOG2 + kap(i) * m(i, 0) - N(i) * pg::log_cosh(0.5 * c);
    }
    return s;
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out(n_obs());
    for (int i = 0; i < n_obs(); ++i) out[i] = logc(i) + y_[i] * f(i, 0) - N(i) * log1pexp(f(i, 0));
    return out;
  }

  // E log p(y_i | f_i) under N(m_i, v_i) by 40-point Gauss-Hermite quadrature (the
  // integrand y f - N log(1 + e^f) is smooth and grows linearly: the rule is accurate
  // to many digits for any realistic m, v).
  Eigen::VectorXd expected_loglik(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd&) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    const GaussHermite& gh = gauss_hermite(40);
    Eigen::VectorXd out(n);
    for (int i = 0; i < n; ++i) {
      const double e = normal_expectation(gh, m(i, 0), v(i, 0), [](double f) { return log1pexp(f); });
      out[i] = logc(i) + y_[i] * m(i, 0) - N(i) * e;
    }
    return out;
  }

  // d log p / df = y - N sigma(f) and -d2 log p / df2 = N sigma(f) (1 - sigma(f)) (log-concave),
  // their expectations under N(m_i, v_i) by the Gauss-Hermite rule of expected_loglik (Z
  // unused), so that grad is exactly the derivative of expected_loglik in m.
  bool expected_loglik_derivs(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v,
                              const Eigen::MatrixXd& Z, Eigen::MatrixXd& grad,
                              Eigen::MatrixXd& neg_hess, Eigen::VectorXd& ell) const override {
    const int n = n_obs();
    check_moment_shapes(m, v, n, 1);
    const GaussHermite& gh = gauss_hermite(40);
    grad.resize(n, 1);
    neg_hess.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      const double s1 = normal_expectation(gh, m(i, 0), v(i, 0), [](double f) { return sigmoid(f); });
      const double s2 = normal_expectation(gh, m(i, 0), v(i, 0), [](double f) {
        const double s = sigmoid(f);
        return s * (1.0 - s);
      });
      grad(i, 0) = y_[i] - N(i) * s1;
      neg_hess(i, 0) = N(i) * s2;
    }
    ell = expected_loglik(m, v, Z);
    return true;
  }

  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    Eigen::MatrixXd p(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i) p(i, 0) = sigmoid(f(i, 0));
    return p;
  }

  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), 1);
    for (int i = 0; i < f.rows(); ++i) y(i, 0) = draw_binomial(size[i], sigmoid(f(i, 0)), rng);
    return y;
  }

  void response_summary(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, const Eigen::MatrixXd&,
                        double level, ResponseSummary& out) const override {
    sigmoid_response_summary(m, v, 1.0, level, out);
  }

 private:
  double N(int i) const { return N_.empty() ? 1.0 : N_[i]; }  // trials N_i
  double kap(int i) const { return y_[i] - 0.5 * N(i); }  // kappa_i = y_i - N_i / 2
  double logc(int i) const { return logc_.empty() ? 0.0 : logc_[i]; }  // log C(N_i, y_i)
  // N_: empty when every N_i is 1; logc_: empty when every log C(N_i, y_i) is 0
  std::vector<double> y_, N_, logc_;
};

}  // namespace

std::unique_ptr<Likelihood> make_bernoulli(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new Bernoulli(spec.vec("y"), spec.vec("trials")));
}

}  // namespace augp
