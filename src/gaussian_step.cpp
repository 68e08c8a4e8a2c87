// The shared Gaussian step: see gaussian_step.h for the formulas.
#include "gaussian_step.h"

#include <cmath>

#include "tri_inverse.h"

namespace augp {

bool GaussianStep::factor(const Eigen::MatrixXd& K, const Eigen::VectorXd& omega) {
  const int n = K.rows();
  sw_ = omega.cwiseMax(0.0).cwiseSqrt();
  L_.resize(n, n);
  for (int j = 0; j < n; ++j)
    L_.col(j).tail(n - j) = sw_.tail(n - j).cwiseProduct(K.col(j).tail(n - j)) * sw_[j];
  L_.diagonal().array() += 1.0;
  // Only L_'s lower triangle is meaningful (every use below goes through a triangular
  // view of it, or zeroes the rest first, as inv_factor does).
  if (!chol_lower_inplace(L_)) return false;
  have_li_ = false;
  return true;
}

const Eigen::MatrixXd& GaussianStep::inv_factor() const {
  if (!have_li_) {
    Li_ = L_;
    Li_.triangularView<Eigen::StrictlyUpper>().setZero();
    lower_tri_invert(Li_);  // n^3 / 3 flops; the strictly upper part stays zero
    have_li_ = true;
  }
  return Li_;
}

Eigen::VectorXd GaussianStep::solve_B(const Eigen::VectorXd& r) const {
  Eigen::VectorXd s = L_.triangularView<Eigen::Lower>().solve(r);
  L_.triangularView<Eigen::Lower>().transpose().solveInPlace(s);
  return s;
}

Eigen::MatrixXd GaussianStep::solve_factor(const Eigen::MatrixXd& M) const {
  Eigen::MatrixXd out = M;
  L_.triangularView<Eigen::Lower>().solveInPlace(out);
  return out;
}

Eigen::VectorXd GaussianStep::mean(const Eigen::MatrixXd& K, const Eigen::VectorXd& kappa,
                                   const Eigen::VectorXd& mu0, Eigen::VectorXd* alpha) const {
  const Eigen::VectorXd b = kappa - sw_.cwiseProduct(sw_).cwiseProduct(mu0);
  const Eigen::VectorXd Kb = K.selfadjointView<Eigen::Lower>() * b;
  const Eigen::VectorXd t = sw_.cwiseProduct(solve_B(sw_.cwiseProduct(Kb)));
  if (alpha) *alpha = b - t;
  return mu0 + Kb - K.selfadjointView<Eigen::Lower>() * t;
}

// diag(S) from diag(B^-1): S = W^-1/2 (I - B^-1) W^-1/2, so S_ii = (1 - (B^-1)_ii) / omega_i,
// with (B^-1)_ii the squared norm of column i of L^-1. Where omega_i is zero or the
// difference loses too many digits, S_ii = K_ii - |L^-1 W^1/2 K e_i|^2 instead (O(n^2) each).
Eigen::VectorXd GaussianStep::diag_cov(const Eigen::MatrixXd& K) const {
  const int n = K.rows();
  const Eigen::MatrixXd& Li = inv_factor();
  Eigen::VectorXd out(n);
  for (int i = 0; i < n; ++i) {
    const double om = sw_[i] * sw_[i];
    const double one_minus = 1.0 - Li.col(i).tail(n - i).squaredNorm();
    if (om > 0 && one_minus > 1e-6) {
      out[i] = one_minus / om;
    } else {
      const Eigen::VectorXd u = sw_.cwiseProduct(K.col(i));
      out[i] = K(i, i) - (Li.triangularView<Eigen::Lower>() * u).squaredNorm();
    }
  }
  return out;
}

Eigen::MatrixXd GaussianStep::cov(const Eigen::MatrixXd& K) const {
  Eigen::MatrixXd V = sw_.asDiagonal() * K;
  L_.triangularView<Eigen::Lower>().solveInPlace(V);
  return K - V.transpose() * V;
}

Eigen::VectorXd GaussianStep::draw(const Eigen::MatrixXd& K, const Eigen::MatrixXd& LK,
                                   const Eigen::VectorXd& kappa, const Eigen::VectorXd& mu0,
                                   Rng& rng) const {
  const int n = K.rows();
  Eigen::VectorXd z1(n), z2(n);
  for (int i = 0; i < n; ++i) z1[i] = rng.norm();
  for (int i = 0; i < n; ++i) z2[i] = rng.norm();
  const Eigen::VectorXd b = kappa - sw_.cwiseProduct(sw_).cwiseProduct(mu0);
  Eigen::VectorXd g = K.selfadjointView<Eigen::Lower>() * b;  // K b
  g.noalias() += LK.triangularView<Eigen::Lower>() * z1;       // + f0
  const Eigen::VectorXd t = sw_.cwiseProduct(solve_B(sw_.cwiseProduct(g) + z2));
  return mu0 + g - K.selfadjointView<Eigen::Lower>() * t;
}

double GaussianStep::logdet_B() const {
  return 2.0 * L_.diagonal().array().log().sum();
}

Eigen::MatrixXd GaussianStep::Binv() const {
  const int n = L_.rows();
  Eigen::MatrixXd Li = Eigen::MatrixXd::Identity(n, n);
  L_.triangularView<Eigen::Lower>().solveInPlace(Li);
  return Li.transpose() * Li;
}

Eigen::MatrixXd GaussianStep::Binv_from_factor() const {
  Eigen::MatrixXd T = inv_factor();
  lower_tri_crossprod(T);
  return T;
}

double GaussianStep::trace_Binv() const {
  return inv_factor().squaredNorm();
}

double GaussianStep::kl(const Eigen::VectorXd& m, const Eigen::VectorXd& mu0,
                        const Eigen::VectorXd& alpha) const {
  const double n = static_cast<double>(m.size());
  return 0.5 * (trace_Binv() + (m - mu0).dot(alpha) - n + logdet_B());
}

bool chol_jitter(const Eigen::MatrixXd& K, double* jitter, Eigen::MatrixXd& L) {
  const int n = K.rows();
  double jit = *jitter;
  for (int attempt = 0; attempt <= 10; ++attempt) {
    L = K;
    L.diagonal().array() += jit;
    if (chol_lower_inplace(L)) {
      L.triangularView<Eigen::StrictlyUpper>().setZero();
      *jitter = jit;
      return true;
    }
    jit = (jit > 0 ? jit : 1e-10) * 10.0;
  }
  (void)n;
  return false;
}

}  // namespace augp
