// The Gaussian step shared by every likelihood (no R API here).
//
// Prior f ~ N(mu0, K); likelihood (given the auxiliary variables)
// exp(kappa' f - f' W f / 2), W = diag(omega). Then f | . ~ N(m, S) with
//   S = (K^-1 + W)^-1 = K - K W^1/2 B^-1 W^1/2 K,   B = I + W^1/2 K W^1/2 = L L',
//   m = mu0 + S (kappa - W mu0).
// K is never inverted. A draw costs one Cholesky of B plus O(n^2) work, using
// a cached factor of K for the prior draw (Matheron's rule):
//   f = mu0 + K b + f0 - K W^1/2 B^-1 (W^1/2 (K b + f0) + z),  f0 ~ N(0, K), z ~ N(0, I).
#ifndef AUGP_GAUSSIAN_STEP_H
#define AUGP_GAUSSIAN_STEP_H

#include <Eigen/Dense>

#include "rng.h"

namespace augp {

class GaussianStep {
 public:
  // Factor B for this omega. Returns false if B is not numerically positive definite.
  bool factor(const Eigen::MatrixXd& K, const Eigen::VectorXd& omega);

  // Posterior mean m; also alpha = K^-1 (m - mu0) if alpha != nullptr.
  Eigen::VectorXd mean(const Eigen::MatrixXd& K, const Eigen::VectorXd& kappa,
                       const Eigen::VectorXd& mu0, Eigen::VectorXd* alpha) const;

  // Marginal variances diag(S).
  Eigen::VectorXd diag_cov(const Eigen::MatrixXd& K) const;

  // Full S (tests and small problems).
  Eigen::MatrixXd cov(const Eigen::MatrixXd& K) const;

  // One draw from N(m, S); LK is the lower Cholesky factor of K.
  Eigen::VectorXd draw(const Eigen::MatrixXd& K, const Eigen::MatrixXd& LK,
                       const Eigen::VectorXd& kappa, const Eigen::VectorXd& mu0, Rng& rng) const;

  double logdet_B() const;  // log |B|
  double trace_Binv() const;  // tr(B^-1) = tr(K^-1 S)
  Eigen::MatrixXd Binv() const;
  // B^-1 in full from the inverse of the lower factor: L^-T L^-1 (two triangular passes
  // of n^3 / 3 flops each).
  Eigen::MatrixXd Binv_from_factor() const;
  Eigen::VectorXd solve_B(const Eigen::VectorXd& r) const;
  // L^-1 M for the lower factor L of B (B^-1 = L^-T L^-1).
  Eigen::MatrixXd solve_factor(const Eigen::MatrixXd& M) const;
  const Eigen::VectorXd& sqrt_omega() const { return sw_; }

  // KL(N(m, S) || N(mu0, K)) for the (m, alpha) returned by mean() with this factor.
  double kl(const Eigen::VectorXd& m, const Eigen::VectorXd& mu0,
            const Eigen::VectorXd& alpha) const;

 private:
  Eigen::VectorXd sw_;
  Eigen::MatrixXd L_;  // lower factor of B
  // L^-1, computed on first use after factor() (diag_cov, trace_Binv share it).
  mutable Eigen::MatrixXd Li_;
  mutable bool have_li_ = false;
  const Eigen::MatrixXd& inv_factor() const;
};

// Overwrites the lower triangle of the symmetric matrix A (its strictly upper triangle is
// neither read nor written) by its lower Cholesky factor; false when A is not numerically
// positive definite. This is the blocked factorisation that Eigen::LLT runs, without the
// L1 norm LLT computes beforehand for its condition estimate (a row-wise, strided pass
// over the matrix that no caller here needs), so the factor is the same to the last bit.
inline bool chol_lower_inplace(Eigen::Ref<Eigen::MatrixXd> A) {
  return Eigen::internal::llt_inplace<double, Eigen::Lower>::blocked(A) == -1;
}

// Lower Cholesky factor of K + jitter I; the jitter grows tenfold (at most 10
// times) until the factorisation succeeds. *jitter is updated to the value used.
bool chol_jitter(const Eigen::MatrixXd& K, double* jitter, Eigen::MatrixXd& L);

}  // namespace augp

#endif
