// Covariance kernels for the C++ core (no R API here), used by the dense and the
// sparse code alike.
//
// A kernel arrives as a postfix program: each node has a code, and leaves carry
// their parameters on the log scale (log variance, log lengthscale(s) and, for the
// periodic kernel, log period). Sums and products combine the two previous values
// on the stack. A leaf may act on a subset of the input columns (its active inputs,
// `ndims` > 0 of them listed in `dims`); it then sees only those columns, its ARD
// lengthscales are one per active input, and its derivatives in the other inputs are
// zero. Sums of leaves on different inputs are additive GPs. Every stationary kernel is v kappa(r) with one profile kappa of the
// scaled distance r = sqrt(sum_d ((x_d - y_d) / l_d)^2); kernel.cpp holds the
// profiles and a registry of the leaf kernels keyed by KernelCode.
//
// The module answers, for any program:
//   kernel_eval            K(x, y) and dK / d theta_j (one matrix per log parameter);
//   kernel_grad_contract   sum_ik M_ik dK(x_i, x_k) / d theta_j without those matrices;
//   kernel_diag            k(x_i, x_i) and, optionally, its log-parameter derivatives;
//   kernel_input_grad      K(x, z) and dK(x_i, z_j) / dz_jc (inducing-point gradients).
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
  K_CONSTANT = 7,
  K_SUM = 10,
  K_PROD = 11
};

struct KernelSpec {
  std::vector<int> code;   // postfix order
  std::vector<int> nls;    // number of lengthscales for leaves (0 for operators)
  std::vector<double> theta;  // log parameters of the leaves, in postfix order
  // Active inputs: per node the number of columns the leaf uses (0: all of them; always
  // 0 for operators), and their 0-based indices, leaves in postfix order. Both empty:
  // every leaf uses every column.
  std::vector<int> ndims;
  std::vector<int> dims;
  int n_params() const { return static_cast<int>(theta.size()); }
  // Does every leaf use every input column?
  bool all_inputs() const {
    for (int k : ndims)
      if (k != 0) return false;
    return true;
  }
  // The same program with other log parameters.
  KernelSpec with_theta(std::vector<double> th) const {
    KernelSpec s = *this;
    s.theta = std::move(th);
    return s;
  }
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

// Diagonal k(x_i, x_i); if grads != nullptr, also its derivative in every log
// parameter (postfix order, one n-vector each).
Eigen::VectorXd kernel_diag(const KernelSpec& spec, const Eigen::MatrixXd& x,
                            std::vector<Eigen::VectorXd>* grads = nullptr);

// K(x, z); if dz != nullptr, also the derivatives in the second input set:
// (*dz)[c](i, j) = dK(x_i, z_j) / dz_jc for every input column c (n x m each).
// x: n x d, z: m x d.
Eigen::MatrixXd kernel_input_grad(const KernelSpec& spec, const Eigen::MatrixXd& x,
                                  const Eigen::MatrixXd& z, std::vector<Eigen::MatrixXd>* dz);

}  // namespace augp

#endif
