// Coordinate-ascent variational inference for augmented GP models, and the
// collapsed bound used to learn kernel hyperparameters.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
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

std::vector<Eigen::MatrixXd> kernel_matrices(const std::vector<KernelSpec>& specs,
                                             const Eigen::MatrixXd& X, double jitter) {
  std::vector<Eigen::MatrixXd> Ks(specs.size());
  for (std::size_t k = 0; k < specs.size(); ++k) {
    Ks[k] = kernel_eval(specs[k], X, X, nullptr);
    if (jitter != 0.0) Ks[k].diagonal().array() += jitter;
  }
  return Ks;
}

bool find_jitter(const std::vector<KernelSpec>& specs, const Eigen::MatrixXd& X, double* jitter) {
  double out = *jitter;
  Eigen::MatrixXd L;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    double jk = *jitter;
    if (!chol_jitter(kernel_eval(specs[k], X, X, nullptr), &jk, L)) return false;
    if (k == 0 || jk > out) out = jk;
  }
  *jitter = out;
  return true;
}

namespace {

// Column j of q(f) from its sites: q(f_j) proportional to N(f_j; m0, K) exp(kappa' f_j -
// f_j' diag(omega) f_j / 2), written to st.m, st.v, st.alpha (column j) and its KL to the
// prior to *kl. False when I + W^1/2 K W^1/2 has no Cholesky factor (st unchanged).
bool q_from_sites(const Eigen::MatrixXd& K, const Eigen::VectorXd& kappa,
                  const Eigen::VectorXd& omega, const Eigen::VectorXd& m0, int j, CaviState& st,
                  double* kl) {
  GaussianStep step;
  if (!step.factor(K, omega)) return false;
  Eigen::VectorXd alpha;
  const Eigen::VectorXd mj = step.mean(K, kappa, m0, &alpha);
  st.m.col(j) = mj;
  st.alpha.col(j) = alpha;
  st.v.col(j) = step.diag_cov(K).cwiseMax(0.0);
  *kl = step.kl(mj, m0, alpha);
  return true;
}

}  // namespace

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
  // CAVI can then settle at a poor fixed point, below the ELBO of the flat fit.
  lik.expect_aux(st.m, Eigen::MatrixXd::Zero(n, q), st.kappa, st.omega);
  st.omega_q = Eigen::MatrixXd::Zero(n, q);
  st.have_q = false;
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
  const bool sequential = q > 1 && lik.sequential_columns();
  for (; it < maxit; ++it) {
    // The q(f_j) update of column j: one Gaussian step from its sites.
    auto update = [&](int j) {
      if (!q_from_sites(Ks[j], st.kappa.col(j), st.omega.col(j), mu0.col(j), j, st, &kls[j]))
        throw std::runtime_error("Cholesky factorisation of I + W^1/2 K W^1/2 failed");
    };
    if (sequential) {
      // column by column, each from sites refreshed at the columns updated before it
      const bool refresh = st.have_q;
      for (int j = 0; j < q; ++j) {
        if (j > 0 && refresh) lik.expect_aux_column(j, st.m, st.v, st.kappa, st.omega);
        update(j);
      }
    } else {
      // the q(f_j) updates are independent given q(aux)
      parallel_items(q, threads_for_cubic(q, Ks.rows(), threads), update);
    }
    st.have_q = true;
    double kl = 0.0;
    for (int j = 0; j < q; ++j) kl += kls[j];
    st.kl = kl;
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

int cvi_refine(const KernelSet& Ks, const Likelihood& lik, const Eigen::MatrixXd& mu0,
               const Eigen::MatrixXd& Z, int rounds, double step, double tol, CaviState& st,
               std::vector<double>* direct, int threads, const std::function<void()>& tick) {
  const int n = lik.n_obs(), q = lik.n_latent();
  Ks.check(n, q);
  if (st.m.rows() != n || st.m.cols() != q || st.alpha.rows() != n || st.alpha.cols() != q ||
      st.omega_q.rows() != n || st.omega_q.cols() != q || mu0.rows() != n || mu0.cols() != q)
    throw std::invalid_argument("cvi_refine: the state and prior mean must be n x q");
  if (!(step > 0 && step <= 1)) throw std::invalid_argument("cvi_refine: step must be in (0, 1]");
  const int nthr = threads_for_cubic(q, Ks.rows(), threads);
  // q(f) and its direct ELBO from sites (kappa, omega) into s; false on failure.
  std::vector<double> kls(q);
  Eigen::MatrixXd G, H, Gt, Ht;
  Eigen::VectorXd ell;
  auto build = [&](const Eigen::MatrixXd& kappa, const Eigen::MatrixXd& omega, CaviState& s,
                   Eigen::MatrixXd& g, Eigen::MatrixXd& h, double* value) {
    std::vector<int> ok(q, 0);
    parallel_items(q, nthr, [&](int j) {
      ok[j] = q_from_sites(Ks[j], kappa.col(j), omega.col(j), mu0.col(j), j, s, &kls[j]) ? 1 : 0;
    });
    for (int j = 0; j < q; ++j)
      if (!ok[j]) return false;
    double kl = 0.0;
    for (int j = 0; j < q; ++j) kl += kls[j];
    s.kl = kl;
    if (!lik.expected_loglik_derivs(s.m, s.v, Z, g, h, ell))
      throw std::invalid_argument("the likelihood provides no expected derivatives of log p(y | f)");
    *value = ell.sum() - kl;
    return std::isfinite(*value) && g.allFinite() && h.allFinite();
  };
  // the sites of the current q(f): K^-1 (m - mu0) + W (m - mu0) = kappa - W mu0
  Eigen::MatrixXd omega = st.omega_q;
  Eigen::MatrixXd kappa = st.alpha + omega.cwiseProduct(st.m);
  double cur;
  if (!build(kappa, omega, st, G, H, &cur))
    throw std::runtime_error("cvi_refine: the starting q(f) failed");
  if (direct) direct->push_back(cur);
  int accepted = 0;
  double rate = step;
  CaviState trial = st;
  for (int t = 0; t < rounds; ++t) {
    if (tick) tick();
    const Eigen::MatrixXd P = H.cwiseMax(1e-6);
    const Eigen::MatrixXd kappa_target = G + P.cwiseProduct(st.m);
    bool gained = false;
    double r = rate, val = cur;
    int halve = 0;
    for (; halve <= 4 && !gained; ++halve, r *= 0.5) {
      const Eigen::MatrixXd om = (1.0 - r) * omega + r * P;
      const Eigen::MatrixXd ka = (1.0 - r) * kappa + r * kappa_target;
      if (!build(ka, om, trial, Gt, Ht, &val) || !(val >= cur)) continue;
      gained = true;
      omega = om;
      kappa = ka;
    }
    if (!gained) break;
    rate = next_rate(rate, halve - 1);
    std::swap(st.m, trial.m);
    std::swap(st.v, trial.v);
    std::swap(st.alpha, trial.alpha);
    st.kl = trial.kl;
    std::swap(G, Gt);
    std::swap(H, Ht);
    ++accepted;
    const double prev = cur;
    cur = val;
    if (direct) direct->push_back(cur);
    if (cur - prev <= tol * std::fabs(prev)) break;
  }
  st.kappa = kappa;
  st.omega = omega;
  st.omega_q = omega;
  st.have_q = true;
  return accepted;
}

namespace {

// One plain sweep from st (no convergence test); false if it failed (Cholesky or a
// non-finite ELBO), leaving st unspecified.
bool sweep_once(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                CaviState& st, int threads) {
  try {
    cavi_sweeps(K, lik, mu0, 1, -1.0, st, threads);
  } catch (std::exception&) {
    return false;
  }
  return true;
}

// The extrapolation coordinates of the sites: kappa and log omega (omega > 0).
Eigen::VectorXd squarem_pack(const CaviState& s) {
  const Eigen::Index nk = s.kappa.size();
  Eigen::VectorXd p(2 * nk);
  for (Eigen::Index i = 0; i < nk; ++i) {
    p[i] = s.kappa.data()[i];
    const double om = s.omega.data()[i];
    p[nk + i] = om > 0 ? std::log(om) : 0.0;
  }
  return p;
}

}  // namespace

int cavi_squarem(const KernelSet& K, const Likelihood& lik, const Eigen::MatrixXd& mu0,
                 int maxit, double tol, CaviState& st, int threads,
                 const std::function<void()>& tick) {
  // st.elbo holds the trace so far (usually empty); convergence compares each new
  // value with the last recorded one, relative to its size.
  const std::size_t start = st.elbo.size();
  auto count = [&]() { return static_cast<int>(st.elbo.size() - start); };
  auto done = [&](double prev, double e) { return std::fabs(e - prev) <= tol * std::fabs(prev); };
  st.converged = false;
  while (count() < maxit) {
    if (tick) tick();
    // s1 = F(st), s2 = F(s1): two plain sweeps.
    const Eigen::VectorXd p0 = squarem_pack(st);
    const bool had = !st.elbo.empty();
    const double last = had ? st.elbo.back() : 0.0;
    cavi_sweeps(K, lik, mu0, 1, -1.0, st, threads);  // throws on failure, as a plain sweep
    if ((had && done(last, st.elbo.back())) || count() >= maxit) {
      st.converged = had && done(last, st.elbo.back());
      break;
    }
    const Eigen::VectorXd p1 = squarem_pack(st);
    const double e1 = st.elbo.back();
    cavi_sweeps(K, lik, mu0, 1, -1.0, st, threads);
    const double e2 = st.elbo.back();
    if (done(e1, e2) || count() >= maxit) {
      st.converged = done(e1, e2);
      break;
    }
    const Eigen::VectorXd p2 = squarem_pack(st);
    const Eigen::VectorXd r = p1 - p0, v = p2 - 2.0 * p1 + p0;
    const double nv = v.norm();
    if (!(nv > 0) || !v.allFinite()) continue;
    const double a = std::min(-1.0, -r.norm() / nv);
    const Eigen::VectorXd p3 = p0 - 2.0 * a * r + a * a * v;
    if (!p3.allFinite()) continue;
    CaviState s3 = st;
    const Eigen::Index nk = st.kappa.size();
    for (Eigen::Index i = 0; i < nk; ++i) {
      s3.kappa.data()[i] = p3[i];
      if (st.omega.data()[i] > 0) s3.omega.data()[i] = std::exp(p3[nk + i]);
    }
    if (!s3.kappa.allFinite() || !s3.omega.allFinite()) continue;
    if (!sweep_once(K, lik, mu0, s3, threads)) continue;
    const double e3 = s3.elbo.back();
    if (!(std::isfinite(e3) && e3 >= e2)) continue;  // keep s2
    const bool conv = done(e2, e3);
    st = std::move(s3);
    if (conv) {
      st.converged = true;
      break;
    }
  }
  return count();
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
  if (!chol_lower_inplace(L)) return -std::numeric_limits<double>::infinity();
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
