// R adapter of the sparse variational GP driver (src/sparse.h): converts R
// objects, builds one likelihood per block of rows (subsets of the registry's
// likelihood), runs the blocks through RcppParallel and turns C++ errors into R
// errors.
#include <RcppEigen.h>
#include <RcppParallel.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adapter.h"
#include "kernel.h"
#include "likelihood.h"
#include "model.h"
#include "sparse.h"

// [[Rcpp::depends(RcppEigen, RcppParallel)]]

using Rcpp::List;

namespace {

// The data of the sparse driver: X, the prior means and one likelihood per block of
// block_size rows (subsets of the likelihood of `lik`). copy = false views X and mu0 in
// place (the call's arguments, alive until it returns); order: the rows' order in the
// blocks (0-based), or NULL.
void make_data(const Eigen::Ref<const Eigen::MatrixXd>& X, const Eigen::Ref<const Eigen::MatrixXd>& mu0,
               const List& lik, int block_size, augp::SparseData& data, bool copy = true,
               Rcpp::Nullable<Rcpp::IntegerVector> order = R_NilValue,
               const augp::DesignStd* std = nullptr) {
  const std::unique_ptr<augp::Likelihood> full = augp::likelihood_from_list(lik);
  if (order.isNull()) {
    augp::make_sparse_data(X, mu0, *full, block_size, data, copy, nullptr, std);
    return;
  }
  const Rcpp::IntegerVector o(order.get());
  std::vector<int> ord(o.begin(), o.end());
  augp::make_sparse_data(X, mu0, *full, block_size, data, copy, &ord, std);
}

// A double matrix argument viewed in place (an error naming it otherwise).
Eigen::Map<Eigen::MatrixXd> as_map(SEXP x, const char* what) {
  if (!Rf_isMatrix(x) || TYPEOF(x) != REALSXP) throw std::invalid_argument(std::string(what) + " must be a double matrix");
  return Eigen::Map<Eigen::MatrixXd>(REAL(x), Rf_nrows(x), Rf_ncols(x));
}

// The data of the sparse driver from X in place: a double matrix, or a standardised
// design (an R list x, cols (1-based), centre, scale: input j is (x[, cols[j]] -
// centre[j]) / scale[j], computed as each block's rows are read, so that the
// standardised copy of a large design is never made).
void make_data_in_place(SEXP X, SEXP mu0, const List& lik, int block_size, augp::SparseData& data,
                        Rcpp::Nullable<Rcpp::IntegerVector> order = R_NilValue) {
  if (TYPEOF(X) != VECSXP) {
    make_data(as_map(X, "X"), as_map(mu0, "mu0"), lik, block_size, data, false, order);
    return;
  }
  const List d(X);
  augp::DesignStd std;
  const Rcpp::IntegerVector cols = d["cols"];
  for (int c : cols) std.cols.push_back(c - 1);
  std.centre = Rcpp::as<std::vector<double>>(d["centre"]);
  std.scale = Rcpp::as<std::vector<double>>(d["scale"]);
  make_data(as_map(d["x"], "X"), as_map(mu0, "mu0"), lik, block_size, data, false, order, &std);
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
  augp::SparseQ qs = augp::unwrap_sparse_q(state, g.Z.rows(), q);
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
                      Rcpp::Named("state") = augp::wrap_sparse_q(qs));
}

}  // namespace

// Full-data CAVI: up to maxit sweeps from `state` (NULL = prior); each sweep records the
// ELBO of the current q(u), then updates q(aux) and q(u) in closed form; accelerate:
// SQUAREM steps (augp::sparse_cavi). The returned state is the last recorded ELBO's.
// [[Rcpp::export(name = ".sparse_cavi_cpp")]]
List sparse_cavi_cpp(SEXP X, SEXP mu0, List lik, int block_size, List spec,
                     Eigen::MatrixXd Z, double jitter, Rcpp::Nullable<List> state, int maxit,
                     double tol, int threads, bool accelerate = false) {
  try {
    augp::SparseData data;
    make_data_in_place(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, false);
    augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), data.q);
    const augp::ParallelFor pf = make_pf(threads);
    std::vector<double> trace;
    const bool converged = augp::sparse_cavi(g, qs, data, maxit, tol, accelerate, pf, trace,
                                             []() { Rcpp::checkUserInterrupt(); });
    return List::create(Rcpp::Named("state") = augp::wrap_sparse_q(qs), Rcpp::Named("elbo") = trace,
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
    const augp::SparseGeom g0 = make_geom(spec_from, Z_from, g.jitter, true);
    augp::SparseQ qs = augp::unwrap_sparse_q(state, g.Z.rows(), data.q);
    augp::SparseProfile o;
    augp::sparse_profile(g0, g, qs, data, maxit, tol, grad, zgrad, make_pf(threads), []() { Rcpp::checkUserInterrupt(); }, o);
    return List::create(Rcpp::Named("elbo") = o.elbo, Rcpp::Named("grad") = o.grad, Rcpp::Named("gz") = o.gz,
                        Rcpp::Named("state") = augp::wrap_sparse_q(qs), Rcpp::Named("trace") = o.trace,
                        Rcpp::Named("converged") = o.converged);
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

// Stochastic variational inference (see augp::sparse_svi). The minibatches are made of
// contiguous blocks of the rows in the order `order` (0-based; NULL: as given), so a
// shuffled order needs no shuffled copy of the data.
// progress: NULL, or an R function called on the main thread as
// progress(t, total, elbo) after every max(1, total / 100)-th step and the last (t
// steps done, elbo the last minibatch estimate); it does not affect the fit.
// direct: NULL, or S x q standard normals: the steps follow the direct ELBO (its sites
// for q(u), its gradient for the kernel and Z; SviOptions::direct) and the trace holds
// minibatch estimates of the direct ELBO.
// [[Rcpp::export(name = ".sparse_svi_cpp")]]
List sparse_svi_cpp(SEXP X, SEXP mu0, List lik, int block_size, List spec,
                    Eigen::MatrixXd Z, double jitter, Rcpp::Nullable<List> state, Rcpp::IntegerVector starts,
                    int blocks_per_batch, double tau, double kappa, double lr, bool learn_hyper,
                    bool learn_inducing, int hyper_start, bool lr_decay, double box, int threads,
                    Rcpp::Nullable<Rcpp::Function> progress = R_NilValue,
                    Rcpp::Nullable<Rcpp::IntegerVector> order = R_NilValue,
                    Rcpp::Nullable<Rcpp::NumericMatrix> direct = R_NilValue) {
  try {
    augp::SparseData data;
    make_data_in_place(X, mu0, lik, block_size, data, order);
    augp::SparseGeom g = make_geom(spec, Z, jitter, false);
    augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), data.q);
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
    Eigen::MatrixXd Zd;
    if (direct.isNotNull()) {
      Zd = Rcpp::as<Eigen::MatrixXd>(direct.get());
      if (Zd.cols() != data.q || Zd.rows() < 1) throw std::invalid_argument("the direct-ELBO draws must be S x q");
      opt.direct = &Zd;
    }
    std::vector<double> trace;
    const int total = static_cast<int>(opt.starts.size());
    const int every = std::max(1, total / 100);
    auto tick = [&](int t) {
      if (t % 10 == 0) Rcpp::checkUserInterrupt();
      if (progress.isNotNull() && (t % every == 0 || t == total))
        Rcpp::Function(progress.get())(t, total, trace.back());
    };
    augp::sparse_svi(g, qs, data, opt, make_pf(threads), trace, tick);
    return List::create(Rcpp::Named("state") = augp::wrap_sparse_q(qs), Rcpp::Named("elbo") = trace,
                        Rcpp::Named("theta") = g.spec.theta, Rcpp::Named("Z") = g.Z,
                        Rcpp::Named("jitter") = g.jitter);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// One minibatch estimate (see augp::sparse_batch_estimate) over the 0-based blocks
// `ids`: the scaled ELBO estimate, its gradients in the log kernel parameters and Z,
// and the natural-gradient target (Lam, h) = (I + s Phi'W Phi, s Phi'(kappa - W mu0));
// with `direct` (S x q standard normals) all three are the direct ELBO's.
// [[Rcpp::export(name = ".sparse_batch_cpp")]]
List sparse_batch_cpp(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec,
                      Eigen::MatrixXd Z, double jitter, List state, Rcpp::IntegerVector ids,
                      bool grad, bool zgrad, int threads,
                      Rcpp::Nullable<Rcpp::NumericMatrix> direct = R_NilValue) {
  try {
    augp::SparseData data;
    make_data(X, mu0, lik, block_size, data);
    Eigen::MatrixXd Zd;
    if (direct.isNotNull()) Zd = Rcpp::as<Eigen::MatrixXd>(direct.get());
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    const augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), data.q);
    std::vector<int> b(ids.begin(), ids.end());
    for (int i : b)
      if (i < 0 || i >= static_cast<int>(data.blocks.size())) throw std::invalid_argument("block id out of range");
    augp::SparsePass p;
    double scale = 1.0;
    std::vector<double> gth;
    Eigen::MatrixXd gz;
    const double val = augp::sparse_batch_estimate(g, qs, data, b, grad, zgrad, make_pf(threads), p, scale,
                                                   &gth, &gz, direct.isNotNull() ? &Zd : nullptr);
    augp::SparseQ target = qs;
    if (!augp::sparse_global_step(p, scale, 1.0, target)) throw std::runtime_error("q(u) target is not positive definite");
    return List::create(Rcpp::Named("elbo") = val, Rcpp::Named("grad") = gth, Rcpp::Named("gz") = gz,
                        Rcpp::Named("scale") = scale, Rcpp::Named("target") = augp::wrap_sparse_q(target));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Predictive marginals of every latent column at Xnew.
// [[Rcpp::export(name = ".sparse_predict_cpp")]]
List sparse_predict_cpp(List spec, Eigen::MatrixXd Z, double jitter, List state, Eigen::MatrixXd Xnew,
                        Eigen::MatrixXd mu0new, int threads = 1) {
  try {
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    List st = state;
    List L = st["Lam"];
    augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), L.size());
    if ((mu0new.rows() != Xnew.rows() && mu0new.rows() != 1) || mu0new.cols() != L.size())
      throw std::invalid_argument("mu0new must be an nnew x q or a 1 x q matrix");
    Eigen::MatrixXd mean, var;
    const augp::ParallelFor pf = make_pf(threads);
    augp::sparse_predict(g, qs, Xnew, mu0new, mean, var, &pf);
    return List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The ELBO at q(u) (`state`) over all the data and the marginals of f at every row, in
// one pass (augp::sparse_marginals); X and mu0 are viewed in place.
// [[Rcpp::export(name = ".sparse_marginals_cpp")]]
List sparse_marginals_cpp(SEXP X, SEXP mu0, List lik, int block_size, List spec, Eigen::MatrixXd Z,
                          double jitter, List state, int threads) {
  try {
    augp::SparseData data;
    make_data_in_place(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    const augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), data.q);
    Eigen::MatrixXd mean, var;
    const double elbo = augp::sparse_marginals(g, qs, data, make_pf(threads), mean, var);
    // (large data: the blocks and each C++ matrix are freed as soon as their R copy exists,
    // so that at most one n x q matrix is held twice)
    data = augp::SparseData();
    SEXP m_r = PROTECT(Rcpp::wrap(mean));
    mean.resize(0, 0);
    SEXP v_r = PROTECT(Rcpp::wrap(var));
    var.resize(0, 0);
    List out = List::create(Rcpp::Named("elbo") = elbo, Rcpp::Named("mean") = m_r,
                            Rcpp::Named("var") = v_r);
    UNPROTECT(2);
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// augp_control(refine = ) on a full-batch sparse fit: q(u) (`state`) refined by
// conjugate-computation VI on the direct ELBO (augp::sparse_cvi_refine), the
// expectations over the rows of Zd (S x q standard normals). Returns list(state (Lam, h,
// mv, Sv, kl), mean, var (the marginals of f at the data), direct (the direct-ELBO
// trace), rounds (accepted)).
// [[Rcpp::export(name = ".sparse_refine_cpp")]]
List sparse_refine_cpp(SEXP X, SEXP mu0, List lik, int block_size, List spec, Eigen::MatrixXd Z,
                       double jitter, List state, Eigen::MatrixXd Zd, int rounds, double step,
                       double tol, int threads) {
  try {
    augp::SparseData data;
    make_data_in_place(X, mu0, lik, block_size, data);
    const augp::SparseGeom g = make_geom(spec, Z, jitter, true);
    augp::SparseQ qs = augp::unwrap_sparse_q(state, Z.rows(), data.q);
    const augp::ParallelFor pf = make_pf(threads);
    std::vector<double> direct;
    const int acc = augp::sparse_cvi_refine(g, qs, data, Zd, rounds, step, tol, pf, direct,
                                            [] { Rcpp::checkUserInterrupt(); });
    Eigen::MatrixXd mean, var;
    augp::sparse_marginals(g, qs, data, pf, mean, var);
    // (as in sparse_marginals_cpp: at most one n x q matrix held twice)
    data = augp::SparseData();
    SEXP m_r = PROTECT(Rcpp::wrap(mean));
    mean.resize(0, 0);
    SEXP v_r = PROTECT(Rcpp::wrap(var));
    var.resize(0, 0);
    List out = List::create(Rcpp::Named("state") = augp::wrap_sparse_q(qs), Rcpp::Named("mean") = m_r,
                            Rcpp::Named("var") = v_r, Rcpp::Named("direct") = direct,
                            Rcpp::Named("rounds") = acc);
    UNPROTECT(2);
    return out;
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
