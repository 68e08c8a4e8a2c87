// Coordinate-ascent variational inference for augmented GP models, and the
// collapsed bound used to learn kernel hyperparameters.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine.h"
#include "kernel.h"
#include "parallel.h"
#include "tri_inverse.h"

namespace augp {

void KernelSet::check(int n, int q) const {
  if (ks_.size() != 1 && static_cast<int>(ks_.size()) != q)
    throw std::invalid_argument("need one kernel matrix or one per latent column");
  for (const Eigen::MatrixXd* K : ks_)
    if (K->rows() != n || K->cols() != n) throw std::invalid_argument("K has the wrong size");
}

void cavi_init(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
               CaviState& st) {
  const int n = lik.n_obs(), q = lik.n_latent();
  if (mu0.rows() != n || mu0.cols() != q)
    throw std::invalid_argument("the prior mean has the wrong size");
  K.check(n, q);
  st.m = mu0;
  if (K.shared()) {
    st.v = K[0].diagonal().replicate(1, q);
  } else {
    st.v.resize(n, q);
    for (int j = 0; j < q; ++j) st.v.col(j) = K[j].diagonal();
  }
  st.alpha = Eigen::MatrixXd::Zero(n, q);
  // Starting sites: the auxiliary expectations at f = the prior mean with zero
  // variance (the curvature of the likelihood there), not under the prior's full
  // variance. With a large kernel variance the latter makes every E[omega] tiny and
  // CAVI can settle at a poor fixed point: on Vehicle at the learned kernel
  // (variance 2981) it ended at ELBO -867.8, below the flat fit, against -455.3
  // from this start.
  lik.expect_aux(st.m, Eigen::MatrixXd::Zero(n, q), st.kappa, st.omega);
  st.omega_q = Eigen::MatrixXd::Zero(n, q);
  st.elbo.clear();
  st.converged = false;
}

int cavi_sweeps(const KernelSet& Ks, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                int maxit, double tol, CaviState& st, int threads) {
  const int q = lik.n_latent();
  Ks.check(lik.n_obs(), q);
  std::vector<double> kls(q);
  st.converged = false;
  int it = 0;
  for (; it < maxit; ++it) {
    // The q(f_j) updates are independent given q(aux): one Gaussian step each.
    parallel_items(q, threads_for_cubic(q, Ks.rows(), threads), [&](int j) {
      const Eigen::MatrixXd& K = Ks[j];
      GaussianStep step;
      if (!step.factor(K, st.omega.col(j)))
        throw std::runtime_error("Cholesky factorisation of I + W^1/2 K W^1/2 failed");
      Eigen::VectorXd alpha;
      const Eigen::VectorXd m0 = mu0.col(j);
      const Eigen::VectorXd mj = step.mean(K, st.kappa.col(j), m0, &alpha);
      st.m.col(j) = mj;
      st.alpha.col(j) = alpha;
      st.v.col(j) = step.diag_cov(K).cwiseMax(0.0);
      kls[j] = step.kl(mj, m0, alpha);
    });
    double kl = 0.0;
    for (int j = 0; j < q; ++j) kl += kls[j];
    st.omega_q = st.omega;
    lik.expect_aux(st.m, st.v, st.kappa, st.omega);
    const double e = lik.elbo_local(st.m, st.v) - kl;
    if (!std::isfinite(e)) throw std::runtime_error("the ELBO is not finite");
    const bool have_prev = !st.elbo.empty();
    const double prev = have_prev ? st.elbo.back() : 0.0;
    st.elbo.push_back(e);
    if (have_prev && std::fabs(e - prev) <= tol * std::fabs(prev)) {
      st.converged = true;
      ++it;
      break;
    }
  }
  return it;
}

namespace {

// One column of the collapsed bound; with M != nullptr also adds a a' - R to *M
// (see engine.h), so the gradient of every column follows from one contraction.
double collapsed_core(const Eigen::MatrixXd& K, const Eigen::VectorXd& kappa,
                      const Eigen::VectorXd& omega, const Eigen::VectorXd& mu0,
                      Eigen::MatrixXd* M) {
  const int n = K.rows();
  const Eigen::VectorXd sw = omega.cwiseMax(0.0).cwiseSqrt();
  Eigen::MatrixXd L(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) L(i, j) = sw[i] * K(i, j) * sw[j];
  L.diagonal().array() += 1.0;
  {
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(L);
    if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  }
  Eigen::VectorXd r(n);
  double s = 0.0;
  for (int i = 0; i < n; ++i) {
    if (omega[i] > 0) {
      r[i] = (kappa[i] - omega[i] * mu0[i]) / sw[i];
      s += 0.5 * kappa[i] * kappa[i] / omega[i];
    } else {
      r[i] = 0.0;
    }
  }
  const double logdet = 2.0 * L.diagonal().array().log().sum();
  Eigen::VectorXd z = L.triangularView<Eigen::Lower>().solve(r);  // L^-1 r
  const double val = s - 0.5 * logdet - 0.5 * z.squaredNorm();
  if (!M) return val;
  lower_tri_invert(L);  // L <- L^-1 (lower triangle)
  const Eigen::VectorXd Bir = L.triangularView<Eigen::Lower>().transpose() * z;  // B^-1 r
  const Eigen::VectorXd a = sw.cwiseProduct(Bir);
  lower_tri_crossprod(L);  // L <- B^-1 (full, symmetric)
  if (M->rows() != n || M->cols() != n) M->setZero(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) (*M)(i, j) += a[i] * a[j] - sw[i] * L(i, j) * sw[j];
  return val;
}

void check_cols(const Eigen::MatrixXd& K, const Eigen::MatrixXd& kappa,
                const Eigen::MatrixXd& omega, const Eigen::MatrixXd& mu0) {
  const int q = kappa.cols();
  if (omega.cols() != q || mu0.cols() != q || kappa.rows() != K.rows() ||
      omega.rows() != K.rows() || mu0.rows() != K.rows())
    throw std::invalid_argument("collapsed_bound: kappa, omega and mu0 must be n x q");
}

}  // namespace

double collapsed_bound(const Eigen::MatrixXd& K, const std::vector<Eigen::MatrixXd>* dK,
                       const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                       const Eigen::MatrixXd& mu0, std::vector<double>* grad) {
  check_cols(K, kappa, omega, mu0);
  const bool want = grad && dK;
  Eigen::MatrixXd M;
  double val = 0.0;
  for (int j = 0; j < kappa.cols() && std::isfinite(val); ++j)
    val += collapsed_core(K, kappa.col(j), omega.col(j), mu0.col(j), want ? &M : nullptr);
  if (grad) grad->assign(dK ? dK->size() : 0, 0.0);
  if (want && std::isfinite(val))
    for (std::size_t l = 0; l < dK->size(); ++l) (*grad)[l] = 0.5 * M.cwiseProduct((*dK)[l]).sum();
  return val;
}

double collapsed_bound_kernel(const KernelSpec& spec, const Eigen::MatrixXd& x, double jitter,
                              const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                              const Eigen::MatrixXd& mu0, std::vector<double>* grad) {
  Eigen::MatrixXd M;
  double val = 0.0;
  {
    Eigen::MatrixXd K = kernel_eval(spec, x, x, nullptr);
    K.diagonal().array() += jitter;
    check_cols(K, kappa, omega, mu0);
    for (int j = 0; j < kappa.cols() && std::isfinite(val); ++j)
      val += collapsed_core(K, kappa.col(j), omega.col(j), mu0.col(j), grad ? &M : nullptr);
  }
  if (!grad) return val;
  if (!std::isfinite(val)) {
    grad->assign(spec.theta.size(), 0.0);
    return val;
  }
  *grad = kernel_grad_contract(spec, x, M);
  for (double& g : *grad) g *= 0.5;
  return val;
}

}  // namespace augp
