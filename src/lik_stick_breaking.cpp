// Multinomial likelihood with the stick-breaking logistic link (Linderman, Johnson
// and Adams 2015), Polya-Gamma augmented.
//
// Row i holds counts y_i1..y_iK with total N_i. With stick logits psi_ik (k < K),
//   pi_k = sigma(psi_k) prod_{j<k} sigma(-psi_j),  pi_K = prod_{j<K} sigma(-psi_j),
// the multinomial pmf factorises into K - 1 binomials:
//   Mult(y_i | N_i, pi) = prod_{k<K} Bin(y_ik | N_ik, sigma(psi_ik)),  N_ik = N_i - sum_{j<k} y_ij.
// Each stick is then a binomial-logistic term: kappa_ik = y_ik - N_ik / 2,
// omega_ik | psi_ik ~ PG(N_ik, psi_ik). A stick with N_ik = 0 carries no data
// (kappa = omega = 0, contributes nothing). The log binomial coefficients of the
// sticks add up to the multinomial coefficient, so loglik() is the exact log pmf.
// The response is the vector of category probabilities pi(psi).
// Spec fields: Y (n x K counts).
#include <cmath>
#include <stdexcept>

#include "likelihood.h"
#include "numerics.h"
#include "polyagamma.h"

namespace augp {

namespace {

class StickBreaking : public Likelihood {
 public:
  explicit StickBreaking(const Eigen::MatrixXd& Y) : Y_(Y) {
    const int n = static_cast<int>(Y.rows());
    const int K = static_cast<int>(Y.cols());
    if (K < 2) throw std::invalid_argument("stick-breaking needs at least 2 categories");
    n_ = n;
    q_ = K - 1;
    y_.resize(n, q_);
    N_.resize(n, q_);
    kappa_.resize(n, q_);
    logc_.resize(n, q_);
    for (int i = 0; i < n; ++i) {
      double rest = 0.0;
      for (int k = 0; k < K; ++k) {
        const double x = Y(i, k);
        if (!std::isfinite(x) || x < 0) throw std::invalid_argument("counts must be finite and >= 0");
        rest += x;
      }
      for (int k = 0; k < q_; ++k) {
        const double x = Y(i, k);
        // guard rounding: the remaining total never falls below the current count
        if (rest < x) rest = x;
        y_(i, k) = x;
        N_(i, k) = rest;
        kappa_(i, k) = x - 0.5 * rest;
        logc_(i, k) = std::lgamma(rest + 1) - std::lgamma(x + 1) - std::lgamma(rest - x + 1);
        rest -= x;
      }
    }
  }

  int n_obs() const override { return n_; }
  int n_latent() const override { return q_; }
  int n_response() const override { return q_ + 1; }

  std::unique_ptr<Likelihood> subset(const std::vector<int>& rows) const override {
    Eigen::MatrixXd Y(rows.size(), Y_.cols());
    for (std::size_t r = 0; r < rows.size(); ++r) Y.row(r) = Y_.row(rows[r]);
    return std::unique_ptr<Likelihood>(new StickBreaking(Y));
  }

  void sample_aux(const Eigen::MatrixXd& f, Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa = kappa_;
    omega.resize(n_, q_);
    // column-major order: the random stream is consumed stick by stick
    for (int k = 0; k < q_; ++k)
      for (int i = 0; i < n_; ++i)
        omega(i, k) = N_(i, k) > 0 ? pg::draw_exact(N_(i, k), f(i, k), rng) : 0.0;
  }

  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa = kappa_;
    omega.resize(n_, q_);
    for (int k = 0; k < q_; ++k)
      for (int i = 0; i < n_; ++i) {
        if (N_(i, k) > 0) {
          const double c = std::sqrt(m(i, k) * m(i, k) + v(i, k));
          omega(i, k) = pg::mean(N_(i, k), c);
        } else {
          omega(i, k) = 0.0;
        }
      }
  }

  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    // Per stick as in the binomial case: with q(omega) = PG(N, c), c^2 = m^2 + v,
    // the quadratic terms cancel and what remains is
    // log C(N, y) - N log 2 + kappa m - N log cosh(c / 2).
    double s = 0.0;
    for (int k = 0; k < q_; ++k)
      for (int i = 0; i < n_; ++i) {
        const double N = N_(i, k);
        if (N <= 0) continue;
        const double c = std::sqrt(m(i, k) * m(i, k) + v(i, k));
        s += logc_(i, k) - N * pg::LOG2 + kappa_(i, k) * m(i, k) - N * pg::log_cosh(0.5 * c);
      }
    return s;
  }

  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd out = Eigen::VectorXd::Zero(n_);
    for (int k = 0; k < q_; ++k)
      for (int i = 0; i < n_; ++i) {
        const double N = N_(i, k);
        if (N <= 0) continue;
        out[i] += logc_(i, k) + y_(i, k) * f(i, k) - N * log1pexp(f(i, k));
      }
    return out;
  }

  // pi_k = sigma(psi_k) prod_{j<k} sigma(-psi_j), the last category taking the rest.
  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    Eigen::MatrixXd P(f.rows(), q_ + 1);
    for (int i = 0; i < f.rows(); ++i) {
      double rest = 1.0;
      for (int k = 0; k < q_; ++k) {
        P(i, k) = rest * sigmoid(f(i, k));
        rest *= sigmoid(-f(i, k));
      }
      P(i, q_) = rest;
    }
    return P;
  }

  // Stick by stick: Binomial(remaining, sigma(psi_k)), the last category the rest.
  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), q_ + 1);
    for (int i = 0; i < f.rows(); ++i) {
      double left = size[i];
      for (int k = 0; k < q_; ++k) {
        y(i, k) = draw_binomial(left, sigmoid(f(i, k)), rng);
        left -= y(i, k);
      }
      y(i, q_) = left;
    }
    return y;
  }

 private:
  Eigen::MatrixXd Y_;
  int n_ = 0, q_ = 0;
  Eigen::MatrixXd y_, N_, kappa_, logc_;
};

}  // namespace

std::unique_ptr<Likelihood> make_stick_breaking(const LikSpec& spec) {
  return std::unique_ptr<Likelihood>(new StickBreaking(spec.mat("Y")));
}

}  // namespace augp
