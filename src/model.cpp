// Persistent models for the kernel hyperparameter search (see model.h).
#include "model.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "parallel.h"

namespace augp {

namespace {

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

Eigen::MatrixXd select_rows(const Eigen::MatrixXd& A, const std::vector<int>& rows) {
  Eigen::MatrixXd out(rows.size(), A.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) out.row(i) = A.row(rows[i]);
  return out;
}

}  // namespace

DenseModel::DenseModel(const Eigen::MatrixXd& X, std::unique_ptr<Likelihood> lik,
                       const Eigen::MatrixXd& mu0, double jitter, const std::vector<KernelSpec>& specs,
                       int maxit, double tol, int threads)
    : X_(X), mu0_(mu0), lik_(std::move(lik)), specs_(specs), jitter_(jitter), maxit_(maxit),
      threads_(threads), tol_(tol), best_value_(-std::numeric_limits<double>::infinity()) {
  const int n = X_.rows(), q = lik_->n_latent();
  if (lik_->n_obs() != n) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
  if (mu0_.rows() != n || mu0_.cols() != q) throw std::invalid_argument("mu0 must be an n x q matrix");
  if (specs_.empty() || (specs_.size() != 1 && static_cast<int>(specs_.size()) != q))
    throw std::invalid_argument("need one kernel or one per latent column");
  rows_.resize(n);
  for (int i = 0; i < n; ++i) rows_[i] = i;
  Xs_ = X_;
  mu0s_ = mu0_;
}

int DenseModel::n_params() const {
  int p = 0;
  for (const KernelSpec& s : specs_) p += s.n_params();
  return p;
}

std::vector<KernelSpec> DenseModel::with_theta(const std::vector<double>& theta) const {
  if (static_cast<int>(theta.size()) != n_params())
    throw std::invalid_argument("theta has the wrong length");
  std::vector<KernelSpec> sp = specs_;
  std::size_t at = 0;
  for (KernelSpec& s : sp)
    for (double& t : s.theta) t = theta[at++];
  return sp;
}

bool DenseModel::set_level(const std::vector<int>& rows, bool warm) {
  const int n = X_.rows(), q = lik_->n_latent();
  bool full = static_cast<int>(rows.size()) == n;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n) throw std::invalid_argument("level rows out of range");
    if (rows[i] != static_cast<int>(i)) full = false;
  }
  Eigen::MatrixXd Xn = full ? X_ : select_rows(X_, rows);
  Eigen::MatrixXd m0n = full ? mu0_ : select_rows(mu0_, rows);
  std::unique_ptr<Likelihood> likn = full ? nullptr : lik_->subset(rows);
  const Likelihood& ln = likn ? *likn : *lik_;

  // Warm start: predict q(f) of the best evaluation at the new inputs.
  Eigen::MatrixXd kappa, omega;
  bool sites = false;
  if (warm && has_fit_) {
    const int nn = Xn.rows();
    const bool percol = best_specs_.size() > 1;
    Eigen::MatrixXd mu(nn, q), v(nn, q), Ks, K;
    Eigen::VectorXd kss;
    sites = true;
    for (int j = 0; j < q && sites; ++j) {
      if (j == 0 || percol) {
        const KernelSpec& s = best_specs_[percol ? j : 0];
        Ks = kernel_eval(s, Xs_, Xn, nullptr);
        K = kernel_eval(s, Xs_, Xs_, nullptr);
        K.diagonal().array() += jitter_;
        kss = kernel_diag(s, Xn).array() + jitter_;
      }
      mu.col(j) = m0n.col(j) + Ks.transpose() * best_.alpha.col(j);
      const Eigen::VectorXd sw = best_.omega_q.col(j).cwiseMax(0.0).cwiseSqrt();
      Eigen::MatrixXd B = sw.asDiagonal() * K * sw.asDiagonal();
      B.diagonal().array() += 1.0;
      Eigen::LLT<Eigen::MatrixXd> llt(B);
      if (llt.info() != Eigen::Success) {
        sites = false;
        break;
      }
      const Eigen::MatrixXd V = llt.matrixL().solve(sw.asDiagonal() * Ks);
      v.col(j) = (kss - V.colwise().squaredNorm().transpose()).cwiseMax(1e-12);
    }
    if (sites) ln.expect_aux(mu, v, kappa, omega);
  }

  rows_ = rows;
  Xs_ = std::move(Xn);
  mu0s_ = std::move(m0n);
  liks_ = std::move(likn);
  best_ = CaviState();
  best_specs_.clear();
  best_value_ = -std::numeric_limits<double>::infinity();
  has_fit_ = false;
  has_sites_ = sites;
  if (sites) {
    best_.kappa = std::move(kappa);
    best_.omega = std::move(omega);
  }
  return sites;
}

ProfileResult DenseModel::evaluate(const std::vector<double>& theta, const std::function<void()>& tick) {
  ProfileResult r;
  const std::vector<KernelSpec> sp = with_theta(theta);
  const Likelihood& lik = level_lik();
  const int n = Xs_.rows(), q = lik.n_latent();
  CaviState st;
  {
    const std::vector<Eigen::MatrixXd> Ks = kernel_matrices(sp, Xs_, jitter_);
    const KernelSet K = Ks.size() == 1 ? KernelSet(Ks[0]) : KernelSet(Ks);
    try {
      cavi_init(K, lik, mu0s_, st);
      if (has_sites_) {
        st.kappa = best_.kappa;
        st.omega = best_.omega;
      }
      cavi_squarem(K, lik, mu0s_, maxit_, tol_, st, threads_, tick);
    } catch (std::exception&) {
      return r;
    }
  }
  if (st.elbo.empty()) return r;
  r.value = st.elbo.back();
  // Gradient of the collapsed bound at the converged q(aux).
  if (sp.size() == 1) {
    collapsed_bound_kernel(sp[0], Xs_, jitter_, st.kappa, st.omega, mu0s_, &r.grad);
  } else {
    std::vector<std::vector<double>> grads(q);
    parallel_items(q, threads_for_cubic(q, n, threads_), [&](int j) {
      const Eigen::MatrixXd kj = st.kappa.col(j), oj = st.omega.col(j), mj = mu0s_.col(j);
      collapsed_bound_kernel(sp[j], Xs_, jitter_, kj, oj, mj, &grads[j]);
    });
    for (const std::vector<double>& g : grads) r.grad.insert(r.grad.end(), g.begin(), g.end());
  }
  r.ok = std::isfinite(r.value) && all_finite(r.grad);
  if (r.ok && r.value > best_value_) {
    best_value_ = r.value;
    best_ = std::move(st);
    best_specs_ = sp;
    has_fit_ = has_sites_ = true;
  }
  return r;
}

void make_sparse_data(const Eigen::Ref<const Eigen::MatrixXd>& X,
                      const Eigen::Ref<const Eigen::MatrixXd>& mu0, const Likelihood& lik,
                      int block_size, SparseData& data, bool copy, std::vector<int>* order,
                      const DesignStd* std) {
  const int n = X.rows();
  if (std) {
    const std::size_t k = std->cols.size();
    if (k == 0 || std->centre.size() != k || std->scale.size() != k)
      throw std::invalid_argument("the design's standardisation needs one centre and scale per column");
    for (std::size_t j = 0; j < k; ++j) {
      if (std->cols[j] < 0 || std->cols[j] >= X.cols()) throw std::invalid_argument("the design's column index is out of range");
      if (!(std->scale[j] > 0) || !std::isfinite(std->scale[j]) || !std::isfinite(std->centre[j]))
        throw std::invalid_argument("the design's scale must be positive and finite");
    }
  }
  if (lik.n_obs() != n) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
  if (block_size < 1) throw std::invalid_argument("block_size must be >= 1");
  data.q = lik.n_latent();
  if ((mu0.rows() != n && mu0.rows() != 1) || mu0.cols() != data.q)
    throw std::invalid_argument("mu0 must be an n x q or a 1 x q matrix");
  data.m0_rows = static_cast<int>(mu0.rows());
  data.order.clear();
  if (order) {
    if (static_cast<int>(order->size()) != n) throw std::invalid_argument("order must have n elements");
    std::vector<char> seen(n, 0);
    for (int r : *order) {
      if (r < 0 || r >= n || seen[r]) throw std::invalid_argument("order must be a permutation of the rows");
      seen[r] = 1;
    }
    data.order.swap(*order);
    order->clear();
  }
  if (copy) {
    data.own_X = X;
    data.own_mu0 = mu0;
    data.x = data.own_X.data();
    data.m0 = data.own_mu0.data();
  } else {
    data.own_X.resize(0, 0);
    data.own_mu0.resize(0, 0);
    data.x = X.data();
    data.m0 = mu0.data();
  }
  data.n = n;
  data.d_raw = X.cols();
  if (std) {
    data.std = *std;
    data.d = static_cast<int>(std->cols.size());
  } else {
    data.std = DesignStd();
    data.d = X.cols();
  }
  data.blocks.clear();
  for (int b = 0; b < n; b += block_size) {
    SparseBlock blk;
    blk.begin = b;
    blk.end = std::min(n, b + block_size);
    std::vector<int> rows(blk.end - blk.begin);
    for (int i = 0; i < blk.end - blk.begin; ++i)
      rows[i] = data.order.empty() ? blk.begin + i : data.order[blk.begin + i];
    blk.lik = lik.subset(rows);
    data.blocks.push_back(std::move(blk));
  }
}

void sparse_profile(const SparseGeom& from, const SparseGeom& to, SparseQ& qs, const SparseData& data,
                    int maxit, double tol, bool grad, bool zgrad, const ParallelFor& pf,
                    const std::function<void()>& tick, SparseProfile& out) {
  if (!sparse_rewhiten(from, to, qs)) throw std::runtime_error("re-whitening failed");
  out.trace.clear();
  out.converged = sparse_cavi(to, qs, data, maxit, tol, true, pf, out.trace, tick);
  // One more pass at the final q(u): its ELBO (the last recorded one) and gradients.
  std::vector<int> ids(data.blocks.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  const SparsePass p = sparse_pass(to, qs, data, ids, false, grad, zgrad, pf);
  out.elbo = sparse_finish_grad(to, qs, p, 1.0, grad, zgrad, &out.grad, &out.gz);
}

SparseModel::SparseModel(const Eigen::MatrixXd& X, const Eigen::MatrixXd& mu0, const Likelihood& lik,
                         int block_size, const KernelSpec& spec, int threads)
    : spec_(spec), best_value_(-std::numeric_limits<double>::infinity()) {
  make_sparse_data(X, mu0, lik, block_size, data_);
  pf_ = [threads](int count, const std::function<void(int)>& body) { parallel_items(count, threads, body); };
}

SparseGeom SparseModel::geom(const std::vector<double>& theta, const Eigen::MatrixXd& Z, double jitter,
                             bool strict) const {
  if (theta.size() != spec_.theta.size()) throw std::invalid_argument("theta has the wrong length");
  if (Z.cols() != data_.d) throw std::invalid_argument("Z has the wrong number of columns");
  SparseGeom g;
  g.spec = spec_;
  g.spec.theta = theta;
  g.Z = Z;
  g.jitter = jitter;
  if (!g.setup()) throw std::runtime_error("the inducing-point kernel matrix is not positive definite even with jitter");
  if (strict && g.jitter != jitter) throw std::runtime_error("the inducing-point kernel matrix needs more jitter");
  return g;
}

std::vector<double> SparseModel::cavi(const std::vector<double>& theta, const Eigen::MatrixXd& Z,
                                      double jitter, bool from_best, int maxit, double tol,
                                      bool accelerate, bool& converged,
                                      const std::function<void()>& tick, const SparseQ* start) {
  const SparseGeom g = geom(theta, Z, jitter, false);
  SparseQ qs;
  if (start) {
    if (static_cast<int>(start->Lam.size()) != data_.q || start->Lam[0].rows() != Z.rows())
      throw std::invalid_argument("the starting q(u) has the wrong size");
    qs = *start;
  } else if (from_best) {
    if (!has_best_) throw std::invalid_argument("the model has no q(u) yet");
    if (best_q_.Lam.empty() || best_q_.Lam[0].rows() != Z.rows())
      throw std::invalid_argument("the best q(u) has the wrong size");
    qs.Lam = best_q_.Lam;
    qs.h = best_q_.h;
    if (!qs.refresh()) throw std::runtime_error("state precision is not positive definite");
  } else {
    qs.init_prior(Z.rows(), data_.q);
  }
  std::vector<double> trace;
  converged = sparse_cavi(g, qs, data_, maxit, tol, accelerate, pf_, trace, tick);
  best_g_ = g;
  best_q_ = std::move(qs);
  best_value_ = -std::numeric_limits<double>::infinity();
  has_best_ = true;
  return trace;
}

SparseProfile SparseModel::evaluate(const std::vector<double>& theta, const Eigen::MatrixXd& Z, int maxit,
                                    double tol, bool grad, bool zgrad, bool& ok,
                                    const std::function<void()>& tick) {
  if (!has_best_) throw std::invalid_argument("the model has no q(u) yet");
  const SparseGeom g = geom(theta, Z, best_g_.jitter, true);
  SparseQ qs;
  qs.Lam = best_q_.Lam;
  qs.h = best_q_.h;
  if (!qs.refresh()) throw std::runtime_error("state precision is not positive definite");
  SparseProfile out;
  sparse_profile(best_g_, g, qs, data_, maxit, tol, grad, zgrad, pf_, tick, out);
  ok = std::isfinite(out.elbo) && all_finite(out.grad) && out.gz.allFinite();
  if (ok && out.elbo > best_value_) {
    best_value_ = out.elbo;
    best_g_ = g;
    best_q_ = std::move(qs);
  }
  return out;
}

}  // namespace augp
