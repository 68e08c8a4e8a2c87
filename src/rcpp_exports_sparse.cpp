// R adapter of the sparse variational GP driver (src/sparse.h): converts R
// objects, builds one likelihood per block of rows, runs the blocks through
// RcppParallel and turns C++ errors into R errors.
#include <RcppEigen.h>
#include <RcppParallel.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adapter.h"
#include "kernel.h"
#include "likelihood.h"
#include "sparse.h"

// [[Rcpp::depends(RcppEigen, RcppParallel)]]

using Rcpp::List;

namespace {

// Test likelihood with q > 1 latent columns: column j is an independent
// binomial-logistic model (y[, j] successes out of trials[, j]). Used to check the
// multi-column sparse path exactly against q separate fits.
class BinomialColumns : public augp::Likelihood {
 public:
  BinomialColumns(const Eigen::MatrixXd& y, const Eigen::MatrixXd& tr) : n_(y.rows()) {
    for (int j = 0; j < y.cols(); ++j) {
      std::vector<double> yj(y.col(j).data(), y.col(j).data() + n_);
      std::vector<double> tj(tr.col(j).data(), tr.col(j).data() + n_);
      cols_.push_back(augp::make_bernoulli(yj, tj));
    }
  }
  int n_obs() const override { return n_; }
  int n_latent() const override { return static_cast<int>(cols_.size()); }
  void sample_aux(const Eigen::MatrixXd& f, augp::Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.resize(n_, n_latent());
    omega.resize(n_, n_latent());
    for (int j = 0; j < n_latent(); ++j) {
      Eigen::MatrixXd k, o;
      cols_[j]->sample_aux(f.col(j), rng, k, o);
      kappa.col(j) = k.col(0);
      omega.col(j) = o.col(0);
    }
  }
  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.resize(n_, n_latent());
    omega.resize(n_, n_latent());
    for (int j = 0; j < n_latent(); ++j) {
      Eigen::MatrixXd k, o;
      cols_[j]->expect_aux(m.col(j), v.col(j), k, o);
      kappa.col(j) = k.col(0);
      omega.col(j) = o.col(0);
    }
  }
  double elbo_local(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v) const override {
    double s = 0.0;
    for (int j = 0; j < n_latent(); ++j) s += cols_[j]->elbo_local(m.col(j), v.col(j));
    return s;
  }
  double loglik(const Eigen::MatrixXd& f) const override {
    double s = 0.0;
    for (int j = 0; j < n_latent(); ++j) s += cols_[j]->loglik(f.col(j));
    return s;
  }

 private:
  int n_;
  std::vector<std::unique_ptr<augp::Likelihood>> cols_;
};

// Builds the likelihood of rows [begin, end) from an engine likelihood list.
class LikFactory {
 public:
  explicit LikFactory(const List& lik) {
    type_ = Rcpp::as<std::string>(lik["type"]);
    if (type_ == "bernoulli" || type_ == "binomial") {
      y_ = Rcpp::as<std::vector<double>>(lik["y"]);
      tr_ = Rcpp::as<std::vector<double>>(lik["trials"]);
      n_ = static_cast<int>(y_.size());
      if (tr_.size() != y_.size()) throw std::invalid_argument("y and trials differ in length");
    } else if (type_ == "binomial_columns") {
      Y_ = Rcpp::as<Eigen::MatrixXd>(lik["y"]);
      T_ = Rcpp::as<Eigen::MatrixXd>(lik["trials"]);
      n_ = Y_.rows();
      if (T_.rows() != Y_.rows() || T_.cols() != Y_.cols())
        throw std::invalid_argument("y and trials differ in size");
    } else if (type_ == "logistic_softmax" || type_ == "stick_breaking") {
      Y_ = Rcpp::as<Eigen::MatrixXd>(lik["Y"]);
      n_ = Y_.rows();
      if (type_ == "logistic_softmax") {
        bij_ = Rcpp::as<bool>(lik["bijective"]);
        th_ = Rcpp::as<std::vector<double>>(lik["theta"]);
      }
    } else {
      throw std::invalid_argument("unknown likelihood type '" + type_ + "'");
    }
  }
  int n() const { return n_; }
  std::unique_ptr<augp::Likelihood> make(int b, int e) const {
    if (type_ == "bernoulli" || type_ == "binomial")
      return augp::make_bernoulli(std::vector<double>(y_.begin() + b, y_.begin() + e),
                                  std::vector<double>(tr_.begin() + b, tr_.begin() + e));
    const Eigen::MatrixXd Yb = Y_.middleRows(b, e - b);
    if (type_ == "binomial_columns")
      return std::unique_ptr<augp::Likelihood>(new BinomialColumns(Yb, T_.middleRows(b, e - b)));
    if (type_ == "logistic_softmax") return augp::make_logistic_softmax(Yb, bij_, th_);
    return augp::make_stick_breaking(Yb);
  }

 private:
  std::string type_;
  std::vector<double> y_, tr_, th_;
  Eigen::MatrixXd Y_, T_;
  bool bij_ = false;
  int n_ = 0;
};

void make_data(const Eigen::MatrixXd& X, const Eigen::MatrixXd& mu0, const List& lik, int block_size,
               augp::SparseData& data) {
  LikFactory f(lik);
  const int n = X.rows();
  if (f.n() != n) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
  if (block_size < 1) throw std::invalid_argument("block_size must be >= 1");
  data.X = X;
  data.n = n;
  for (int b = 0; b < n; b += block_size) {
    augp::SparseBlock blk;
    blk.begin = b;
    blk.end = std::min(n, b + block_size);
    blk.lik = f.make(blk.begin, blk.end);
    data.blocks.push_back(std::move(blk));
  }
  data.q = data.blocks.empty() ? 1 : data.blocks[0].lik->n_latent();
  if (mu0.rows() != n || mu0.cols() != data.q)
    throw std::invalid_argument("mu0 must be an n x q matrix");
  data.mu0 = mu0;
}

augp::SparseGeom make_geom(const List& spec, const Eigen::MatrixXd& Z, double jitter, bool strict) {
  augp::SparseGeom g;
  g.spec = augp::kernel_spec_from_list(spec);
  g.Z = Z;
  g.jitter = jitter;
  const double j0 = jitter;
  if (!g.setup()) throw std::runtime_error("the inducing-point kernel matrix is not positive definite even with jitter");
  if (strict && g.jitter != j0) throw std::runtime_error("the inducing-point kernel matrix needs more jitter");
  return g;
}

augp::SparseQ make_q(Rcpp::Nullable<List> state, int m, int q) {
  augp::SparseQ qs;
  if (state.isNull()) {
    qs.init_prior(m, q);
    return qs;
  }
  List st(state.get());
  List L = st["Lam"], h = st["h"];
  if (L.size() != q || h.size() != q) throw std::invalid_argument("state has the wrong number of columns");
  for (int j = 0; j < q; ++j) {
    qs.Lam.push_back(Rcpp::as<Eigen::MatrixXd>(L[j]));
    qs.h.push_back(Rcpp::as<Eigen::VectorXd>(h[j]));
    if (qs.Lam[j].rows() != m || qs.Lam[j].cols() != m || qs.h[j].size() != m)
      throw std::invalid_argument("state has the wrong size");
  }
  if (!qs.refresh()) throw std::runtime_error("state precision is not positive definite");
  return qs;
}

List wrap_q(const augp::SparseQ& qs) {
  List L(qs.Lam.size()), h(qs.h.size()), mv(qs.mv.size()), Sv(qs.Sv.size());
  for (std::size_t j = 0; j < qs.Lam.size(); ++j) {
    L[j] = Rcpp::wrap(qs.Lam[j]);
    h[j] = Rcpp::wrap(qs.h[j]);
    mv[j] = Rcpp::wrap(qs.mv[j]);
    Sv[j] = Rcpp::wrap(qs.Sv[j]);
  }
  return List::create(Rcpp::Named("Lam") = L, Rcpp::Named("h") = h, Rcpp::Named("mv") = mv,
                      Rcpp::Named("Sv") = Sv, Rcpp::Named("kl") = qs.kl());
}

struct FnWorker : public RcppParallel::Worker {
  const std::function<void(int)>& f;
  explicit FnWorker(const std::function<void(int)>& fn) : f(fn) {}
  void operator()(std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) f(static_cast<int>(i));
  }
};

augp::ParallelFor make_pf(int threads) {
  return [threads](int count, const std::function<void(int)>& body) {
    if (threads <= 1 || count <= 1) {
      for (int i = 0; i < count; ++i) body(i);
      return;
    }
    FnWorker w(body);
    RcppParallel::parallelFor(0, count, w, 1, threads);
  };
}

std::vector<int> all_blocks(const augp::SparseData& d) {
  std::vector<int> ids(d.blocks.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  return ids;
}

// q(u) from `state` (whitened under (spec_from, Z_from), same jitter as g) re-expressed
// under the geometry g, q(u) itself unchanged.
augp::SparseQ rewhitened_q(const List& state, const List& spec_from, const Eigen::MatrixXd& Z_from,
                           const augp::SparseGeom& g, int q) {
  const augp::SparseGeom g0 = make_geom(spec_from, Z_from, g.jitter, true);
  augp::SparseQ qs = make_q(state, g.Z.rows(), q);
  if (!augp::sparse_rewhiten(g0, g, qs)) throw std::runtime_error("re-whitening failed");
  return qs;
}

// The full-data ELBO at (g, qs) and, if asked, its gradients (list elbo, grad, gz, state).
List elbo_grad_at(const augp::SparseGeom& g, const augp::SparseQ& qs, const augp::SparseData& data,
                  bool grad, bool zgrad, const augp::ParallelFor& pf) {
  augp::SparsePass p = augp::sparse_pass(g, qs, data, all_blocks(data), false, grad, zgrad, pf);
  std::vector<double> gth;
  Eigen::MatrixXd gz;
  const double val = augp::sparse_finish_grad(g, qs, p, 1.0, grad, zgrad, &gth, &gz);
  return List::create(Rcpp::Named("elbo") = val, Rcpp::Named("grad") = gth, Rcpp::Named("gz") = gz,
                      Rcpp::Named("state") = wrap_q(qs));
}

}  // namespace

// Full-data CAVI: up to maxit sweeps from `state` (NULL = prior); each sweep records the
// ELBO of the current q(u), then updates q(aux) and q(u) in closed form; accelerate:
// SQUAREM steps (augp::sparse_cavi). The returned state is the last recorded ELBO's.
// [[Rcpp::export(name = ".sparse_cavi_cpp")]]
List sparse_cavi_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec,
                     Eigen::MatrixXd Z, double jitter, Rcpp::Nullable<List> state, int maxit,
                     double tol, int threads, bool accelerate = false) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, false);
    augp::SparseQ qs = make_q(state, Z.rows(), data.q);
    const augp::ParallelFor pf = make_pf(threads);
    std::vector<double> trace;
    const bool converged = augp::sparse_cavi(g, qs, data, maxit, tol, accelerate, pf, trace,
                                             []() { Rcpp::checkUserInterrupt(); });
    return List::create(Rcpp::Named("state") = wrap_q(qs), Rcpp::Named("elbo") = trace,
                        Rcpp::Named("converged") = converged, Rcpp::Named("jitter") = g.jitter);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The profiled ELBO max_q ELBO(q, spec, Z) for the kernel hyperparameter search:
// `state` (whitened under (spec_from, Z_from)) is re-expressed under (spec, Z) and
// CAVI with SQUAREM runs to convergence (relative tol) or maxit sweeps; at its end the
// ELBO and, if asked, its gradients in the log kernel parameters and Z with q(u) held
// fixed, which at the CAVI fixed point are the profiled objective's (envelope theorem).
// The jitter is fixed (an error if the new K_mm needs more).
// [[Rcpp::export(name = ".sparse_profile_cpp")]]
List sparse_profile_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size,
                        List spec_from, Eigen::MatrixXd Z_from, List spec, Eigen::MatrixXd Z,
                        double jitter, List state, int maxit, double tol, bool grad, bool zgrad,
                        int threads) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    augp::SparseQ qs = rewhitened_q(state, spec_from, Z_from, g, data.q);
    const augp::ParallelFor pf = make_pf(threads);
    std::vector<double> trace;
    const bool converged = augp::sparse_cavi(g, qs, data, maxit, tol, true, pf, trace,
                                             []() { Rcpp::checkUserInterrupt(); });
    // One more pass at the final q(u): its ELBO (the last recorded one) and gradients.
    List out = elbo_grad_at(g, qs, data, grad, zgrad, pf);
    out["trace"] = trace;
    out["converged"] = converged;
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// ELBO at the geometry (spec, Z) with q(u) held fixed in the original coordinates
// (state whitened under (spec_from, Z_from)); optional gradients in the log kernel
// parameters and Z. The jitter is fixed (an error if the new K_mm needs more).
// [[Rcpp::export(name = ".sparse_obj_cpp")]]
List sparse_obj_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec_from,
                    Eigen::MatrixXd Z_from, List spec, Eigen::MatrixXd Z, double jitter, List state,
                    bool grad, bool zgrad, int threads) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    augp::SparseQ qs = rewhitened_q(state, spec_from, Z_from, g, data.q);
    return elbo_grad_at(g, qs, data, grad, zgrad, make_pf(threads));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Stochastic variational inference (see augp::sparse_svi); X, mu0 and lik are
// already in the (shuffled) order whose contiguous blocks form the minibatches.
// [[Rcpp::export(name = ".sparse_svi_cpp")]]
List sparse_svi_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec,
                    Eigen::MatrixXd Z, double jitter, Rcpp::Nullable<List> state, Rcpp::IntegerVector starts,
                    int blocks_per_batch, double tau, double kappa, double lr, bool learn_hyper,
                    bool learn_inducing, int hyper_start, bool lr_decay, double box, int threads,
                    bool verbose) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    augp::SparseGeom g = make_geom(spec, Z, jitter, false);
    augp::SparseQ qs = make_q(state, Z.rows(), data.q);
    augp::SviOptions opt;
    opt.starts.assign(starts.begin(), starts.end());
    opt.blocks_per_batch = blocks_per_batch;
    opt.tau = tau;
    opt.kappa = kappa;
    opt.lr = lr;
    opt.learn_hyper = learn_hyper;
    opt.learn_inducing = learn_inducing;
    opt.hyper_start = hyper_start;
    opt.lr_decay = lr_decay;
    opt.box = box;
    std::vector<double> trace;
    const int total = static_cast<int>(opt.starts.size());
    auto tick = [&](int t) {
      if (t % 10 == 0) Rcpp::checkUserInterrupt();
      if (verbose && total >= 10 && t % (total / 10) == 0)
        Rcpp::Rcout << "SVI: iteration " << t << " / " << total << ", ELBO estimate " << trace.back() << "\n";
    };
    augp::sparse_svi(g, qs, data, opt, make_pf(threads), trace, tick);
    return List::create(Rcpp::Named("state") = wrap_q(qs), Rcpp::Named("elbo") = trace,
                        Rcpp::Named("theta") = g.spec.theta, Rcpp::Named("Z") = g.Z,
                        Rcpp::Named("jitter") = g.jitter);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// One minibatch estimate (see augp::sparse_batch_estimate) over the 0-based blocks
// `ids`: the scaled ELBO estimate, its gradients in the log kernel parameters and Z,
// and the natural-gradient target (Lam, h) = (I + s Phi'W Phi, s Phi'(kappa - W mu0)).
// [[Rcpp::export(name = ".sparse_batch_cpp")]]
List sparse_batch_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec,
                      Eigen::MatrixXd Z, double jitter, List state, Rcpp::IntegerVector ids,
                      bool grad, bool zgrad, int threads) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    const augp::SparseQ qs = make_q(state, Z.rows(), data.q);
    std::vector<int> b(ids.begin(), ids.end());
    for (int i : b)
      if (i < 0 || i >= static_cast<int>(data.blocks.size())) throw std::invalid_argument("block id out of range");
    augp::SparsePass p;
    double scale = 1.0;
    std::vector<double> gth;
    Eigen::MatrixXd gz;
    const double val = augp::sparse_batch_estimate(g, qs, data, b, grad, zgrad, make_pf(threads), p, scale,
                                                   &gth, &gz);
    augp::SparseQ target = qs;
    if (!augp::sparse_global_step(p, scale, 1.0, target)) throw std::runtime_error("q(u) target is not positive definite");
    return List::create(Rcpp::Named("elbo") = val, Rcpp::Named("grad") = gth, Rcpp::Named("gz") = gz,
                        Rcpp::Named("scale") = scale, Rcpp::Named("target") = wrap_q(target));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Predictive marginals of every latent column at Xnew.
// [[Rcpp::export(name = ".sparse_predict_cpp")]]
List sparse_predict_cpp(List spec, Eigen::MatrixXd Z, double jitter, List state, Eigen::MatrixXd Xnew,
                        Eigen::MatrixXd mu0new) {
  try {
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    List st = state;
    List L = st["Lam"];
    augp::SparseQ qs = make_q(state, Z.rows(), L.size());
    if (mu0new.rows() != Xnew.rows() || mu0new.cols() != L.size())
      throw std::invalid_argument("mu0new must be an nnew x q matrix");
    Eigen::MatrixXd mean, var;
    augp::sparse_predict(g, qs, Xnew, mu0new, mean, var);
    return List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Kernel helpers (tests): diagonal with log-parameter gradients and input derivatives.
// [[Rcpp::export(name = ".sparse_kernel_extra_cpp")]]
List sparse_kernel_extra_cpp(List spec, Eigen::MatrixXd x, Eigen::MatrixXd z) {
  try {
    const augp::KernelSpec s = augp::kernel_spec_from_list(spec);
    std::vector<Eigen::VectorXd> gd;
    const Eigen::VectorXd kd = augp::kernel_diag(s, x, &gd);
    std::vector<Eigen::MatrixXd> D;
    const Eigen::MatrixXd K = augp::kernel_input_grad(s, x, z, &D);
    List gdl(gd.size()), Dl(D.size());
    for (std::size_t k = 0; k < gd.size(); ++k) gdl[k] = Rcpp::wrap(gd[k]);
    for (std::size_t k = 0; k < D.size(); ++k) Dl[k] = Rcpp::wrap(D[k]);
    return List::create(Rcpp::Named("kdiag") = kd, Rcpp::Named("kdiag_grad") = gdl,
                        Rcpp::Named("K") = K, Rcpp::Named("dz") = Dl);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}
