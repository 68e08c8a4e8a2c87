// Coordinate-ascent variational inference for augmented GP models, and the
// collapsed bound used to learn kernel hyperparameters.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine.h"
#include "parallel.h"

namespace augp {

void cavi_init(const Eigen::MatrixXd& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
               CaviState& st) {
  const int n = lik.n_obs(), q = lik.n_latent();
  if (mu0.rows() != n || mu0.cols() != q)
    throw std::invalid_argument("the prior mean has the wrong size");
  st.m = mu0;
  st.v = K.diagonal().replicate(1, q);
  st.alpha = Eigen::MatrixXd::Zero(n, q);
  lik.expect_aux(st.m, st.v, st.kappa, st.omega);
  st.omega_q = Eigen::MatrixXd::Zero(n, q);
  st.elbo.clear();
  st.converged = false;
}

int cavi_sweeps(const Eigen::MatrixXd& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                int maxit, double tol, CaviState& st, int threads) {
  const int q = lik.n_latent();
  std::vector<double> kls(q);
  st.converged = false;
  int it = 0;
  for (; it < maxit; ++it) {
    // The q(f_j) updates are independent given q(aux): one Gaussian step each.
    parallel_items(q, threads, [&](int j) {
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

double collapsed_bound_col(const Eigen::MatrixXd& K, const std::vector<Eigen::MatrixXd>* dK,
                           const Eigen::VectorXd& kappa, const Eigen::VectorXd& omega,
                           const Eigen::VectorXd& mu0, std::vector<double>* grad) {
  const int n = K.rows();
  GaussianStep step;
  if (!step.factor(K, omega)) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd& sw = step.sqrt_omega();
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
  const Eigen::VectorXd Bir = step.solve_B(r);
  const double val = s - 0.5 * step.logdet_B() - 0.5 * r.dot(Bir);
  if (grad && dK) {
    const Eigen::VectorXd a = sw.cwiseProduct(Bir);
    const Eigen::MatrixXd R = sw.asDiagonal() * step.Binv() * sw.asDiagonal();
    grad->assign(dK->size(), 0.0);
    for (std::size_t j = 0; j < dK->size(); ++j) {
      const Eigen::MatrixXd& D = (*dK)[j];
      (*grad)[j] = 0.5 * (a.dot(D * a) - R.cwiseProduct(D).sum());
    }
  }
  return val;
}

}  // namespace

double collapsed_bound(const Eigen::MatrixXd& K, const std::vector<Eigen::MatrixXd>* dK,
                       const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega,
                       const Eigen::MatrixXd& mu0, std::vector<double>* grad) {
  const int q = kappa.cols();
  if (omega.cols() != q || mu0.cols() != q || kappa.rows() != K.rows() ||
      omega.rows() != K.rows() || mu0.rows() != K.rows())
    throw std::invalid_argument("collapsed_bound: kappa, omega and mu0 must be n x q");
  double val = 0.0;
  std::vector<double> g;
  if (grad) grad->assign(dK ? dK->size() : 0, 0.0);
  for (int j = 0; j < q; ++j) {
    val += collapsed_bound_col(K, dK, kappa.col(j), omega.col(j), mu0.col(j), grad ? &g : nullptr);
    if (!std::isfinite(val)) return val;
    if (grad && dK)
      for (std::size_t l = 0; l < g.size(); ++l) (*grad)[l] += g[l];
  }
  return val;
}

}  // namespace augp
