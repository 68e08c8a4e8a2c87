// Coordinate-ascent variational inference for augmented GP models, and the
// collapsed bound used to learn kernel hyperparameters.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine.h"

namespace augp {

void cavi_init(const Eigen::MatrixXd& K, const Likelihood& lik, const Eigen::VectorXd& mu0,
               CaviState& st) {
  const int n = lik.n_obs(), q = lik.n_latent();
  st.m = mu0.replicate(1, q);
  st.v = K.diagonal().replicate(1, q);
  st.alpha = Eigen::MatrixXd::Zero(n, q);
  lik.expect_aux(st.m, st.v, st.kappa, st.omega);
  st.omega_q = Eigen::MatrixXd::Zero(n, q);
  st.elbo.clear();
  st.converged = false;
}

int cavi_sweeps(const Eigen::MatrixXd& K, const Likelihood& lik, const Eigen::VectorXd& mu0,
                int maxit, double tol, CaviState& st) {
  const int q = lik.n_latent();
  GaussianStep step;
  st.converged = false;
  int it = 0;
  for (; it < maxit; ++it) {
    double kl = 0.0;
    for (int j = 0; j < q; ++j) {
      if (!step.factor(K, st.omega.col(j)))
        throw std::runtime_error("Cholesky factorisation of I + W^1/2 K W^1/2 failed");
      Eigen::VectorXd alpha;
      st.m.col(j) = step.mean(K, st.kappa.col(j), mu0, &alpha);
      st.alpha.col(j) = alpha;
      st.v.col(j) = step.diag_cov(K).cwiseMax(0.0);
      kl += step.kl(st.m.col(j), mu0, alpha);
    }
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

double collapsed_bound(const Eigen::MatrixXd& K, const std::vector<Eigen::MatrixXd>* dK,
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

}  // namespace augp
