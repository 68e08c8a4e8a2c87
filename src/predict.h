// The predictive distribution of the latent GPs of an exact (dense) fit at new
// inputs (no R API here).
//
// Prior: f_j ~ GP(mu0_j, k_j) for the q latent columns, one kernel shared by all
// columns (specs of size 1) or one per column (size q). At the n training inputs X
// and the m new inputs X*: K_*j = k_j(X, X*) (n x m) and k_**j = diag k_j(X*, X*).
//
// Variational fit: q(f_j) = N(m_j, S_j) at the sites omega_j, with K_j = k_j(X, X) +
// jitter I, W = diag(omega_j), B = I + W^1/2 K_j W^1/2 = L L' and
// alpha_j = K_j^-1 (m_j - mu0_j). Per column:
//   mean  mu0*_j + K_*j' alpha_j,
//   var   k_**j - |L^-1 W^1/2 K_*j|^2 (column by column), floored at 0.
//
// Gibbs fit: S posterior draws f^(s) of the n x q latent values. With L_K the lower
// Cholesky factor of k_j(X, X) + jitter' I (jitter' from the jitter search starting at
// `jitter`) and A = L_K^-1 K_*j, the conditional f*_j | f_j ~ N(M_s, C) has
//   M_s = mu0*_j + A' L_K^-1 (f_j^(s) - mu0_j),   C = k_j(X*, X*) - A'A.
// Per column:
//   mean   the average of the M_s over the draws,
//   var    diag(C) floored at 0 plus the spread of the M_s (their variance with
//          divisor S; 0 for one draw),
//   draws  (given standard normals Z, S x m per column) M_s + z_s R_c with
//          R_c' R_c = (C + C') / 2 + jitter_c I, jitter_c from the jitter search starting
//          at max(jitter, 1e-10 max(1, mean diag C)).
#ifndef AUGP_PREDICT_H
#define AUGP_PREDICT_H

#include <Eigen/Dense>
#include <vector>

#include "kernel.h"

namespace augp {

// The fit a prediction conditions on. Pointers are views of the caller's data and
// must outlive the call.
struct DensePosterior {
  bool gibbs = false;
  // Variational fit: alpha and omega, n x q.
  const Eigen::MatrixXd* alpha = nullptr;
  const Eigen::MatrixXd* omega = nullptr;
  // Gibbs fit: n_draws x (n q) draws, column-major (latent column j of point i in
  // column i + n j), and the prior mean at X (n x q).
  const double* draws = nullptr;
  int n_draws = 0;
  const Eigen::MatrixXd* mu0 = nullptr;
};

struct DensePrediction {
  Eigen::MatrixXd mean, var;  // m x q
  Eigen::MatrixXd draws;      // Gibbs with Z: n_draws x (m q), column j's block at m j
};

// The predictive distribution above. mu0new: the prior mean at X* (m x q). z (Gibbs
// only; nullptr for no draws): n_draws x (m q) standard normals, column-major, the
// block of column j at m j. The columns run in parallel (threads), each on its own,
// so the results do not depend on the thread count. Throws std::invalid_argument on
// inconsistent sizes and std::runtime_error when a factorisation fails.
void predict_dense(const std::vector<KernelSpec>& specs, const Eigen::MatrixXd& X,
                   const Eigen::MatrixXd& Xnew, double jitter, const Eigen::MatrixXd& mu0new,
                   const DensePosterior& post, const double* z, int threads, DensePrediction& out);

}  // namespace augp

#endif
