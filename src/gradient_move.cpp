// Hamiltonian Monte Carlo on p(f | y) in the coordinates of a fixed Gaussian
// approximation (see gradient_move.h).
#include "gradient_move.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace augp {

GradientMove::GradientMove(double eps0, double target) : log_eps_(std::log(eps0)) {
  da_.target = target;
  da_.restart(eps0);
}

double GradientMove::step_size() const { return std::exp(frozen_ ? da_.log_eps_bar : log_eps_); }

bool GradientMove::energy(const Likelihood& lik, const Eigen::MatrixXd& z, const Eigen::MatrixXd& m0,
                          const Eigen::MatrixXd& LK, const RotatedGaussian& g, double* U,
                          Eigen::MatrixXd& grad, Eigen::MatrixXd* f_out) const {
  const int n = static_cast<int>(z.rows()), q = static_cast<int>(z.cols());
  const std::vector<Eigen::MatrixXd>& L = *g.L;
  Eigen::MatrixXd G = *g.mean;
  for (int c = 0; c < q; ++c) G.col(c).noalias() += L[c].triangularView<Eigen::Lower>() * z.col(c);
  Eigen::MatrixXd f = G * g.Q->transpose();
  const Eigen::MatrixXd R = G - m0;
  Eigen::MatrixXd A = LK.triangularView<Eigen::Lower>().solve(R);
  LK.transpose().triangularView<Eigen::Upper>().solveInPlace(A);
  const double prior = 0.5 * (R.array() * A.array()).sum();
  Eigen::MatrixXd gf, nh;
  Eigen::VectorXd ell;
  if (!lik.expected_loglik_derivs(f, Eigen::MatrixXd::Zero(n, q), Eigen::MatrixXd::Zero(1, q), gf, nh,
                                  ell))
    throw std::invalid_argument("the gradient move needs a likelihood with expected_loglik_derivs()");
  *U = prior - ell.sum();
  if (!std::isfinite(*U)) return false;
  A.noalias() -= gf * (*g.Q);
  grad.resize(n, q);
  for (int c = 0; c < q; ++c)
    grad.col(c).noalias() = L[c].triangularView<Eigen::Lower>().transpose() * A.col(c);
  if (!grad.allFinite()) return false;
  if (f_out) f_out->swap(f);
  return true;
}

double GradientMove::step(const Likelihood& lik, Eigen::MatrixXd& f, const Eigen::MatrixXd& mu0,
                          const Eigen::MatrixXd& LK, const RotatedGaussian& g, int leapfrog, Rng& rng,
                          int warmup_it) {
  const int n = static_cast<int>(f.rows()), q = static_cast<int>(f.cols());
  if (leapfrog <= 0) return 0.0;
  if (g.Q == nullptr || g.mean == nullptr || g.L == nullptr || g.Q->rows() != q ||
      g.mean->rows() != n || g.mean->cols() != q || static_cast<int>(g.L->size()) != q)
    throw std::invalid_argument("the gradient move's approximation does not match the latent values");
  if (warmup_it == 0 && !frozen_) {
    frozen_ = true;
    log_eps_ = da_.log_eps_bar;
  }
  const Eigen::MatrixXd m0 = mu0 * (*g.Q);
  // the current point in the approximation's coordinates
  Eigen::MatrixXd z = f * (*g.Q) - *g.mean;
  for (int c = 0; c < q; ++c) (*g.L)[c].triangularView<Eigen::Lower>().solveInPlace(z.col(c));
  Eigen::MatrixXd p(n, q);
  for (int c = 0; c < q; ++c)
    for (int i = 0; i < n; ++i) p(i, c) = rng.norm();
  const double eps = std::exp(log_eps_) * (0.9 + 0.2 * rng.unif());
  double U0, U;
  Eigen::MatrixXd grad;
  double alpha = 0.0;
  Eigen::MatrixXd fnew;
  if (energy(lik, z, m0, LK, g, &U0, grad, nullptr)) {
    const double H0 = U0 + 0.5 * p.squaredNorm();
    bool ok = true;
    p.noalias() -= 0.5 * eps * grad;
    for (int s = 0; s < leapfrog && ok; ++s) {
      z.noalias() += eps * p;
      ok = energy(lik, z, m0, LK, g, &U, grad, s + 1 == leapfrog ? &fnew : nullptr);
      if (ok) p.noalias() -= (s + 1 == leapfrog ? 0.5 : 1.0) * eps * grad;
    }
    if (ok) {
      const double dH = U + 0.5 * p.squaredNorm() - H0;
      alpha = std::isfinite(dH) ? (dH <= 0.0 ? 1.0 : std::exp(-dH)) : 0.0;
      if (alpha > 0.0 && rng.unif() < alpha) f.swap(fnew);
    }
  }
  acc_sum_ += alpha;
  ++n_;
  if (warmup_it > 0 && !frozen_) log_eps_ = da_.update(alpha);
  return alpha;
}

}  // namespace augp
