// Bernoulli / binomial likelihood with the logistic link, Polya-Gamma augmented.
// y_i successes out of N_i trials: p(y | f) = C(N, y) e^(y f) / (1 + e^f)^N
//   = C(N, y) 2^(-N) e^(kappa f) E_{PG(N, 0)}[exp(-omega f^2 / 2)],  kappa = y - N / 2.
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "polyagamma.h"

namespace augp {

namespace {

class Bernoulli : public Likelihood {
 public:
  Bernoulli(const std::vector<double>& y, const std::vector<double>& trials)
      : y_(y), N_(trials), logc_(y.size()), kappa_(y.size()) {
    if (y.size() != trials.size()) throw std::invalid_argument("y and trials differ in length");
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (!(N_[i] >= 0) || !(y_[i] >= 0) || y_[i] > N_[i])
        throw std::invalid_argument("need 0 <= y <= trials");
      logc_[i] = std::lgamma(N_[i] + 1) - std::lgamma(y_[i] + 1) - std::lgamma(N_[i] - y_[i] + 1);
      kappa_[i] = y_[i] - 0.5 * N_[i];
    }
  }
  int n_obs() const override { return static_cast<int>(y_.size()); }
  int n_latent() const override { return 1; }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      kappa(i, 0) = kappa_[i];
      omega(i, 0) = N_[i] > 0 ? pg::draw_exact(N_[i], f(i, 0), rng) : 0.0;
    }
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    const int n = n_obs();
    kappa.resize(n, 1);
    omega.resize(n, 1);
    for (int i = 0; i < n; ++i) {
      kappa(i, 0) = kappa_[i];
      const double c = std::sqrt(m(i, 0) * m(i, 0) + v(i, 0));
      omega(i, 0) = N_[i] > 0 ? pg::mean(N_[i], c) : 0.0;
    }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    // With q(omega_i) = PG(N_i, c_i), c_i^2 = m_i^2 + v_i, the terms
    // -(m^2 + v) E[omega] / 2 and + c^2 E[omega] / 2 cancel.
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double c = std::sqrt(m(i, 0) * m(i, 0) + v(i, 0));
      s += logc_[i] - N_[i] * pg::LOG2 + kappa_[i] * m(i, 0) - N_[i] * pg::log_cosh(0.5 * c);
    }
    return s;
  }

  double loglik(const Eigen::MatrixXd& f) const override {
    double s = 0.0;
    for (int i = 0; i < n_obs(); ++i) {
      const double x = f(i, 0);
      const double log1pexp = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      s += logc_[i] + y_[i] * x - N_[i] * log1pexp;
    }
    return s;
  }

 private:
  std::vector<double> y_, N_, logc_, kappa_;
};

}  // namespace

std::unique_ptr<Likelihood> make_bernoulli(const std::vector<double>& y,
                                           const std::vector<double>& trials) {
  return std::unique_ptr<Likelihood>(new Bernoulli(y, trials));
}

}  // namespace augp
