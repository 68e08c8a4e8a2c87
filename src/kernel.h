// Covariance kernels for the C++ core (no R API here).
//
// A kernel arrives as a postfix program: each node has a code, and leaves carry
// their parameters on the log scale (log variance, log lengthscale(s) and, for the
// periodic kernel, log period). Sums and products combine the two previous values
// on the stack. Every stationary kernel is one function kappa(r) of the scaled
// distance r = sqrt(sum_d ((x_d - y_d) / l_d)^2), evaluated by one distance routine.
#ifndef AUGP_KERNEL_H
#define AUGP_KERNEL_H

#include <Eigen/Dense>
#include <stdexcept>
#include <vector>

namespace augp {

enum KernelCode {
  K_SE = 1,
  K_MATERN12 = 2,
  K_MATERN32 = 3,
  K_MATERN52 = 4,
  K_LINEAR = 5,
  K_PERIODIC = 6,
  K_SUM = 10,
  K_PROD = 11
};

struct KernelSpec {
  std::vector<int> code;   // postfix order
  std::vector<int> nls;    // number of lengthscales for leaves (0 for operators)
  std::vector<double> theta;  // log parameters of the leaves, in postfix order
  int n_params() const { return static_cast<int>(theta.size()); }
};

// K(x, y); if grads != nullptr, also dK/dtheta_j for every log parameter j.
// x: n x d, y: m x d. Throws std::invalid_argument on malformed specs.
Eigen::MatrixXd kernel_eval(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& y,
                            std::vector<Eigen::MatrixXd>* grads);

// Gradient contraction: g_j = sum_ik M(i, k) dK(x_i, x_k) / d theta_j for every log
// parameter j (postfix order, as kernel_eval's grads), for a square n x n weight M,
// without forming the n x n derivative matrices. For a stationary leaf
// k = v kappa(r), with H = M o (v g(r)) (g = -kappa'(r) / r):
//   log variance:      sum(M o K),
//   log lengthscale d: l_d^-2 sum_ik H_ik (x_id - x_kd)^2
//                      = l_d^-2 (sum_i x_id^2 (H 1 + H' 1)_i - 2 x_d' H x_d),
// (isotropic: sum_ik H_ik r_ik^2). Sums pass M to both children; products pass
// M o K_other to each child. Linear and periodic leaves use their explicit derivatives.
std::vector<double> kernel_grad_contract(const KernelSpec& spec, const Eigen::MatrixXd& x,
                                         const Eigen::MatrixXd& M);

// Diagonal k(x_i, x_i) only.
Eigen::VectorXd kernel_diag(const KernelSpec& spec, const Eigen::MatrixXd& x);

}  // namespace augp

#endif
