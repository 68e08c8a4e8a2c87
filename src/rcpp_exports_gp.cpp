// Adapter between R and the GP engine core: converts R objects to plain C++
// data, runs the parallel Gibbs chains, checks interrupts on the main thread and
// turns C++ errors into R errors. The only GP file that includes Rcpp.
#include <RcppEigen.h>
#include <RcppParallel.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.h"
#include "gaussian_step.h"
#include "adapter.h"
#include "kernel.h"
#include "likelihood.h"
#include "parallel.h"
#include "predict.h"
#include "rng.h"

// [[Rcpp::depends(RcppEigen, RcppParallel)]]

using Rcpp::List;
using Rcpp::NumericVector;

namespace {

// The prior mean as an n x q matrix: a scalar, one value per column (length q),
// one value per row (length n, q = 1) or a full n x q matrix (column-major).
Eigen::MatrixXd as_mu0_mat(const NumericVector& mu0, int n, int q) {
  Eigen::MatrixXd m(n, q);
  const R_xlen_t len = mu0.size();
  if (len == 1) {
    m.setConstant(mu0[0]);
  } else if (len == static_cast<R_xlen_t>(n) * q) {
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < n; ++i) m(i, j) = mu0[i + static_cast<R_xlen_t>(n) * j];
  } else if (len == q) {
    for (int j = 0; j < q; ++j) m.col(j).setConstant(mu0[j]);
  } else {
    throw std::invalid_argument("the prior mean must have length 1, q or n * q");
  }
  return m;
}

// Kernel matrices from R: one matrix (shared by all latent columns) or a list of
// one matrix per latent column.
std::vector<Eigen::MatrixXd> as_kernels(SEXP K) {
  std::vector<Eigen::MatrixXd> out;
  if (Rf_isNewList(K)) {
    const List l(K);
    if (l.size() < 1) throw std::invalid_argument("K: an empty list of kernel matrices");
    for (R_xlen_t j = 0; j < l.size(); ++j) out.push_back(Rcpp::as<Eigen::MatrixXd>(l[j]));
  } else {
    out.push_back(Rcpp::as<Eigen::MatrixXd>(K));
  }
  return out;
}

augp::KernelSet kernel_set(const std::vector<Eigen::MatrixXd>& Ks) {
  return Ks.size() == 1 ? augp::KernelSet(Ks[0]) : augp::KernelSet(Ks);
}

// CAVI with the kernel matrices K from (kappa, omega) or, without them, from
// cavi_init's sites; prev_elbo (if finite) precedes the trace for the first
// convergence check and is not returned.
List cavi_run(const augp::KernelSet& K, const augp::Likelihood& L, const NumericVector& mu0,
              const Rcpp::Nullable<Eigen::MatrixXd>& kappa, const Rcpp::Nullable<Eigen::MatrixXd>& omega,
              int maxit, double tol, double prev_elbo, int threads, bool accelerate) {
  const int n = L.n_obs();
  K.check(n, L.n_latent());
  const Eigen::MatrixXd m0 = as_mu0_mat(mu0, n, L.n_latent());
  augp::CaviState st;
  augp::cavi_init(K, L, m0, st);
  if (kappa.isNotNull() && omega.isNotNull()) {
    st.kappa = Rcpp::as<Eigen::MatrixXd>(kappa.get());
    st.omega = Rcpp::as<Eigen::MatrixXd>(omega.get());
  }
  const bool had_prev = std::isfinite(prev_elbo);
  if (had_prev) st.elbo.push_back(prev_elbo);
  if (accelerate) {
    augp::cavi_squarem(K, L, m0, maxit, tol, st, threads, []() { Rcpp::checkUserInterrupt(); });
  } else {
    augp::cavi_sweeps(K, L, m0, maxit, tol, st, threads);
  }
  std::vector<double> trace(st.elbo.begin() + (had_prev ? 1 : 0), st.elbo.end());
  return List::create(Rcpp::Named("m") = st.m, Rcpp::Named("v") = st.v,
                      Rcpp::Named("alpha") = st.alpha, Rcpp::Named("kappa") = st.kappa,
                      Rcpp::Named("omega") = st.omega, Rcpp::Named("omega_q") = st.omega_q,
                      Rcpp::Named("elbo") = trace, Rcpp::Named("kl") = st.kl,
                      Rcpp::Named("converged") = st.converged);
}

struct ChainWorker : public RcppParallel::Worker {
  std::vector<augp::GibbsChain>& chains;
  std::vector<int>& ok;
  int count;
  ChainWorker(std::vector<augp::GibbsChain>& c, std::vector<int>& o, int k)
      : chains(c), ok(o), count(k) {}
  void operator()(std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      if (!ok[c]) continue;
      try {
        ok[c] = chains[c].run(count) ? 1 : 0;
      } catch (...) {
        ok[c] = 0;
      }
    }
  }
};

}  // namespace

// [[Rcpp::export(name = ".gp_kernel_matrix_cpp")]]
Eigen::MatrixXd gp_kernel_matrix_cpp(List spec, Eigen::MatrixXd x, Eigen::MatrixXd y,
                                     double jitter = 0.0) {
  try {
    Eigen::MatrixXd K = augp::kernel_eval(augp::kernel_spec_from_list(spec), x, y, nullptr);
    if (jitter != 0.0) K.diagonal().array() += jitter;  // K(x, x) + jitter I (square K)
    return K;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// [[Rcpp::export(name = ".gp_kernel_grad_cpp")]]
List gp_kernel_grad_cpp(List spec, Eigen::MatrixXd x) {
  try {
    std::vector<Eigen::MatrixXd> g;
    Eigen::MatrixXd K = augp::kernel_eval(augp::kernel_spec_from_list(spec), x, x, &g);
    List grads(g.size());
    for (std::size_t j = 0; j < g.size(); ++j) grads[j] = Rcpp::wrap(g[j]);
    return List::create(Rcpp::Named("K") = K, Rcpp::Named("grad") = grads);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// [[Rcpp::export(name = ".gp_kernel_diag_cpp")]]
Eigen::VectorXd gp_kernel_diag_cpp(List spec, Eigen::MatrixXd x) {
  try {
    return augp::kernel_diag(augp::kernel_spec_from_list(spec), x);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Lower Cholesky factor of K + jitter I with escalating jitter.
// [[Rcpp::export(name = ".gp_chol_jitter_cpp")]]
List gp_chol_jitter_cpp(Eigen::MatrixXd K, double jitter) {
  Eigen::MatrixXd L;
  double jit = jitter;
  const bool ok = augp::chol_jitter(K, &jit, L);
  return List::create(Rcpp::Named("ok") = ok, Rcpp::Named("jitter") = jit,
                      Rcpp::Named("L") = L);
}

// CAVI sweeps with a fixed K (one matrix, or a list of one per latent column),
// optionally warm-started from (kappa, omega); accelerate: SQUAREM (cavi_squarem).
// [[Rcpp::export(name = ".gp_cavi_cpp")]]
List gp_cavi_cpp(SEXP K_in, List lik, NumericVector mu0, Rcpp::Nullable<Eigen::MatrixXd> kappa,
                 Rcpp::Nullable<Eigen::MatrixXd> omega, int maxit, double tol, double prev_elbo,
                 int threads = 1, bool accelerate = false) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    const std::vector<Eigen::MatrixXd> Ks = as_kernels(K_in);
    return cavi_run(kernel_set(Ks), *L, mu0, kappa, omega, maxit, tol, prev_elbo, threads, accelerate);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The same CAVI with K = k(X, X) + jitter I built here from the kernel specs (a list
// of one flattened kernel shared by all latent columns, or one per column).
// [[Rcpp::export(name = ".gp_cavi_kernel_cpp")]]
List gp_cavi_kernel_cpp(List specs, Eigen::MatrixXd X, double jitter, List lik, NumericVector mu0,
                        Rcpp::Nullable<Eigen::MatrixXd> kappa, Rcpp::Nullable<Eigen::MatrixXd> omega,
                        int maxit, double tol, int threads = 1, bool accelerate = false) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    if (X.rows() != L->n_obs()) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
    const std::vector<Eigen::MatrixXd> Ks = augp::kernel_matrices(augp::kernel_specs_from_list(specs), X, jitter);
    return cavi_run(kernel_set(Ks), *L, mu0, kappa, omega, maxit, tol, NA_REAL, threads, accelerate);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Refinement of a variational q(f) by natural-gradient steps on the direct ELBO
// (augp::cvi_refine) with K = k(X, X) + jitter I from the specs (as for
// .gp_cavi_kernel_cpp): the q(f) of the sites omega and alpha + omega m (the fit's
// m, alpha and site precisions, n x q), Z the S x q standard normals of the direct ELBO.
// Returns list(m, v, alpha, omega, kappa, kl, direct, rounds): the refined q(f), its
// sites, its KL to the prior, the direct ELBO trace (start, then every accepted round)
// and the number of accepted rounds.
// [[Rcpp::export(name = ".gp_cvi_kernel_cpp")]]
List gp_cvi_kernel_cpp(List specs, Eigen::MatrixXd X, double jitter, List lik, NumericVector mu0,
                       Eigen::MatrixXd m, Eigen::MatrixXd alpha, Eigen::MatrixXd omega,
                       Eigen::MatrixXd Z, int rounds, double step, double tol, int threads = 1) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    const int n = L->n_obs(), q = L->n_latent();
    if (X.rows() != n) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
    const std::vector<Eigen::MatrixXd> Ks = augp::kernel_matrices(augp::kernel_specs_from_list(specs), X, jitter);
    augp::CaviState st;
    st.m = m;
    st.alpha = alpha;
    st.omega_q = omega;
    st.v = Eigen::MatrixXd::Zero(n, q);
    std::vector<double> direct;
    const int acc = augp::cvi_refine(kernel_set(Ks), *L, as_mu0_mat(mu0, n, q), Z, rounds, step, tol,
                                     st, &direct, threads, []() { Rcpp::checkUserInterrupt(); });
    return List::create(Rcpp::Named("m") = st.m, Rcpp::Named("v") = st.v,
                        Rcpp::Named("alpha") = st.alpha, Rcpp::Named("omega") = st.omega_q,
                        Rcpp::Named("kappa") = st.kappa, Rcpp::Named("kl") = st.kl,
                        Rcpp::Named("direct") = direct, Rcpp::Named("rounds") = acc);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The jitter search (augp::find_jitter) over the kernel matrices k(X, X) of the specs:
// list(ok, jitter), jitter the largest settled on (the starting value when not ok).
// [[Rcpp::export(name = ".gp_find_jitter_cpp")]]
List gp_find_jitter_cpp(List specs, Eigen::MatrixXd X, double jitter) {
  try {
    double jit = jitter;
    const bool ok = augp::find_jitter(augp::kernel_specs_from_list(specs), X, &jit);
    return List::create(Rcpp::Named("ok") = ok, Rcpp::Named("jitter") = jit);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The predictive distribution of a dense fit at Xnew (augp::predict_dense): specs as
// for .gp_cavi_kernel_cpp; mu0new the prior mean at Xnew (m x q). Variational fits
// (gibbs FALSE): alpha and omega (n x q). Gibbs fits: draws (S x n q values,
// column-major, e.g. the [draws, chains, n q] array), n_draws = S, mu0 the prior mean
// at X (n x q) and z (NULL for no predictive draws): S x m q standard normals.
// Returns list(mean, var, draws) with m x q mean and var and draws S x m q or NULL.
// [[Rcpp::export(name = ".gp_predict_cpp")]]
List gp_predict_cpp(List specs, Eigen::MatrixXd X, Eigen::MatrixXd Xnew, double jitter,
                    Eigen::MatrixXd mu0new, bool gibbs, Rcpp::Nullable<Eigen::MatrixXd> alpha,
                    Rcpp::Nullable<Eigen::MatrixXd> omega, Rcpp::Nullable<NumericVector> draws,
                    int n_draws, Rcpp::Nullable<Eigen::MatrixXd> mu0, Rcpp::Nullable<NumericVector> z,
                    int threads = 1) {
  try {
    const int n = X.rows(), m = Xnew.rows(), q = mu0new.cols();
    augp::DensePosterior post;
    post.gibbs = gibbs;
    Eigen::MatrixXd a, w, m0;
    NumericVector dr, zz;
    if (gibbs) {
      if (draws.isNull() || mu0.isNull()) throw std::invalid_argument("a Gibbs prediction needs draws and mu0");
      dr = NumericVector(draws.get());
      if (n_draws < 1 || dr.size() != static_cast<R_xlen_t>(n_draws) * n * q)
        throw std::invalid_argument("draws must have n_draws x n q values");
      m0 = Rcpp::as<Eigen::MatrixXd>(mu0.get());
      post.draws = dr.begin();
      post.n_draws = n_draws;
      post.mu0 = &m0;
      if (z.isNotNull()) {
        zz = NumericVector(z.get());
        if (zz.size() != static_cast<R_xlen_t>(n_draws) * m * q)
          throw std::invalid_argument("z must have n_draws x m q values");
      }
    } else {
      if (alpha.isNull() || omega.isNull()) throw std::invalid_argument("a variational prediction needs alpha and omega");
      a = Rcpp::as<Eigen::MatrixXd>(alpha.get());
      w = Rcpp::as<Eigen::MatrixXd>(omega.get());
      post.alpha = &a;
      post.omega = &w;
    }
    augp::DensePrediction out;
    augp::predict_dense(augp::kernel_specs_from_list(specs), X, Xnew, jitter, mu0new, post,
                        gibbs && z.isNotNull() ? zz.begin() : nullptr, threads, out);
    SEXP d = R_NilValue;
    if (out.draws.size() > 0) d = Rcpp::wrap(out.draws);
    return List::create(Rcpp::Named("mean") = out.mean, Rcpp::Named("var") = out.var,
                        Rcpp::Named("draws") = d);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Hyperparameter objective (collapsed bound for fixed q(aux)) and its gradient in
// the kernel's log parameters.
// [[Rcpp::export(name = ".gp_hyper_obj_cpp")]]
NumericVector gp_hyper_obj_cpp(List spec, Eigen::MatrixXd x, double jitter, Eigen::MatrixXd kappa,
                               Eigen::MatrixXd omega, NumericVector mu0, bool gradient) {
  try {
    const augp::KernelSpec s = augp::kernel_spec_from_list(spec);
    std::vector<double> g;
    const double val = augp::collapsed_bound_kernel(s, x, jitter, kappa, omega,
                                                    as_mu0_mat(mu0, x.rows(), kappa.cols()),
                                                    gradient ? &g : nullptr);
    NumericVector out = NumericVector::create(val);
    if (gradient) out.attr("gradient") = Rcpp::wrap(g);
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The same objective with one kernel per latent column (specs: a list of q kernel
// lists): the per-column bounds (length q) and, with gradient, a list of their
// gradients; columns run in parallel (threads), each on its own, so the values do
// not depend on the thread count.
// [[Rcpp::export(name = ".gp_hyper_obj_cols_cpp")]]
List gp_hyper_obj_cols_cpp(List specs, Eigen::MatrixXd x, double jitter, Eigen::MatrixXd kappa,
                           Eigen::MatrixXd omega, NumericVector mu0, bool gradient,
                           int threads = 1) {
  try {
    const int q = kappa.cols(), n = x.rows();
    if (specs.size() != q) throw std::invalid_argument("need one kernel per latent column");
    if (omega.cols() != q || kappa.rows() != n || omega.rows() != n)
      throw std::invalid_argument("kappa and omega must be n x q");
    std::vector<augp::KernelSpec> sp;
    for (int j = 0; j < q; ++j) sp.push_back(augp::kernel_spec_from_list(List(specs[j])));
    const Eigen::MatrixXd m0 = as_mu0_mat(mu0, n, q);
    std::vector<double> vals(q);
    std::vector<std::vector<double>> grads(q);
    augp::parallel_items(q, augp::threads_for_cubic(q, n, threads), [&](int j) {
      const Eigen::MatrixXd kj = kappa.col(j), oj = omega.col(j), mj = m0.col(j);
      vals[j] = augp::collapsed_bound_kernel(sp[j], x, jitter, kj, oj, mj,
                                             gradient ? &grads[j] : nullptr);
    });
    List g(gradient ? q : 0);
    if (gradient)
      for (int j = 0; j < q; ++j) g[j] = Rcpp::wrap(grads[j]);
    return List::create(Rcpp::Named("value") = Rcpp::wrap(vals), Rcpp::Named("gradient") = g);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Likelihood pieces: the expected aux (CAVI warm starts), elbo_local and loglik.
// [[Rcpp::export(name = ".gp_lik_eval_cpp")]]
List gp_lik_eval_cpp(List lik, Eigen::MatrixXd m, Eigen::MatrixXd v, Eigen::MatrixXd f) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    Eigen::MatrixXd kappa, omega;
    L->expect_aux(m, v, kappa, omega);
    return List::create(Rcpp::Named("elbo_local") = L->elbo_local(m, v),
                        Rcpp::Named("loglik") = L->loglik(f), Rcpp::Named("kappa") = kappa,
                        Rcpp::Named("omega") = omega);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Gibbs chains in parallel, one random stream per chain: chain_ids are the
// 0-based stream indices (running chains one at a time with the same seed and
// ids reproduces a joint run). n_streams is the total number of chains of the
// run (starting points use streams n_streams + id). specs: one flattened kernel shared
// by all latent columns or one per column; K = k(X, X) is built here and each matrix
// gets its own jitter (the search from `jitter`; the largest is returned). init_sd
// NULL: the prior standard deviations sqrt(k(x_i, x_i)).
// The chains advance together in chunks of iterations (sized by n alone); between
// chunks the main thread checks for interrupts and, if `progress` is an R function,
// calls progress(done, total) with the iterations done so far. Worker threads never
// touch the R API, and neither the chunking nor the callback touches the random
// streams, so the draws do not depend on progress reporting or the thread count.
// Returns draws as an array [iter, length(chain_ids), n * q] (latent column j of
// point i at i + n * j).
// hyper (NULL: the kernels stay fixed) samples the kernel hyperparameters
// (hyper_sampler.h): list(prior = P x 4 matrix, one row per log parameter of the specs in
// order: family code, a, b, on_sd; init_sd = the spread of the chains' starting log
// parameters around the specs' values, drawn from each chain's starting-point stream;
// moves = Metropolis proposals per sweep, default 1; flow_moves = passes per sweep of
// the likelihood's parameter flow when its parameter is sampled, default 2, 0: off;
// flow_variance = whether that move changes the kernel's variance too, default TRUE;
// hmc_steps = leapfrog steps per sweep of the joint gradient move of f and the likelihood's
// positive parameters (latent_hmc.h), default 0: off).
// The kernel matrices of the sampled kernels are k(X, X) + jitter I with the jitter found
// at the specs' values (the same for every chain) and held fixed: absolute, not scaled
// with a sampled variance.
// One block per spec (one spec: all latent columns; q specs: column j). The result then
// also has theta, an array [iter, length(chain_ids), P] of the log parameters, and
// accept, a length(chain_ids) x (number of blocks) matrix of acceptance rates per
// proposal after warmup (delayed-rejection stages counted as proposals), and chol_per_sweep, the Cholesky factorisations of n x n matrices per sweep
// (warmup included) of each chain, and eig_per_sweep, its eigendecompositions of n x n
// matrices per sweep (HyperBlock::spectrum, for the moves of the kernel variances).
// lik_prior (NULL: the likelihood's parameters stay fixed) samples elements of the
// likelihood's parameters (param_sampler.h): list(name = character P, index = integer P
// (1-based element), family, a, b = numeric P (LikParamPrior)). The result then also has
// lik_params, an array [iter, length(chain_ids), P] of their draws.
// reference (NULL: none) is a Gaussian approximation of the posterior for the
// likelihood's Gibbs move (Likelihood::gibbs_reference()): list(mean, prec), both
// n x q, the variational fit's means and site precisions at the kernels `specs`.
// [[Rcpp::export(name = ".gp_gibbs_cpp")]]
List gp_gibbs_cpp(List specs, Eigen::MatrixXd X, List lik, NumericVector mu0,
                  Eigen::MatrixXd init_mean, Rcpp::Nullable<Eigen::MatrixXd> init_sd, int warmup,
                  int iter, int thin, Rcpp::IntegerVector chain_ids,
                  int n_streams, NumericVector seed, int threads, double jitter,
                  Rcpp::Nullable<Rcpp::Function> progress = R_NilValue,
                  Rcpp::Nullable<List> hyper = R_NilValue,
                  Rcpp::Nullable<List> lik_prior = R_NilValue,
                  Rcpp::Nullable<List> reference = R_NilValue) {
  const int chains = chain_ids.size();
  if (chains < 1) Rcpp::stop("no chains to run");
  for (int c = 0; c < chains; ++c)
    if (chain_ids[c] < 0 || chain_ids[c] >= n_streams) Rcpp::stop("chain_ids out of range");
  std::unique_ptr<augp::Likelihood> L;
  try {
    L = augp::likelihood_from_list(lik);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
  const int n = L->n_obs(), q = L->n_latent();
  std::vector<Eigen::MatrixXd> Ks;
  std::vector<augp::KernelSpec> kspecs;
  try {
    if (X.rows() != n) throw std::invalid_argument("the likelihood data and X differ in their number of rows");
    kspecs = augp::kernel_specs_from_list(specs);
    Ks = augp::kernel_matrices(kspecs, X, 0.0);
    kernel_set(Ks).check(n, q);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
  // Hyperparameter priors, one row per log parameter over the specs.
  const bool full_bayes = hyper.isNotNull();
  std::vector<augp::HyperPrior> priors;
  double theta_sd = 0.0;
  int moves = 1;
  int flow_moves = 2;
  bool flow_variance = true;
  int hmc_steps = 0;
  int n_theta = 0;
  for (const augp::KernelSpec& sp : kspecs) n_theta += sp.n_params();
  if (full_bayes) {
    List h(hyper.get());
    const Rcpp::NumericMatrix pm = h["prior"];
    theta_sd = Rcpp::as<double>(h["init_sd"]);
    moves = h.containsElementNamed("moves") ? Rcpp::as<int>(h["moves"]) : 1;
    if (h.containsElementNamed("flow_moves")) flow_moves = Rcpp::as<int>(h["flow_moves"]);
    if (h.containsElementNamed("flow_variance")) flow_variance = Rcpp::as<bool>(h["flow_variance"]);
    if (h.containsElementNamed("hmc_steps")) hmc_steps = Rcpp::as<int>(h["hmc_steps"]);
    if (pm.nrow() != n_theta || pm.ncol() != 4)
      Rcpp::stop("hyper$prior must have one row per kernel parameter and 4 columns");
    try {
      for (int k = 0; k < n_theta; ++k) {
        augp::HyperPrior p;
        p.family = static_cast<int>(pm(k, 0));
        p.a = pm(k, 1);
        p.b = pm(k, 2);
        p.on_sd = pm(k, 3) != 0.0;
        augp::hyper_check_prior(p, "hyper$prior");
        priors.push_back(p);
      }
    } catch (std::exception& e) {
      Rcpp::stop(e.what());
    }
  }
  // Priors of the likelihood's sampled parameters.
  std::vector<augp::LikParamPrior> lpriors;
  if (lik_prior.isNotNull()) {
    try {
      lpriors = augp::lik_priors_from_list(List(lik_prior.get()));
    } catch (std::exception& e) {
      Rcpp::stop(e.what());
    }
  }
  const int n_lp = static_cast<int>(lpriors.size());
  // Starting spreads: given, or the prior standard deviations sqrt(k(x_i, x_i)).
  Eigen::MatrixXd sd0(n, q);
  if (init_sd.isNotNull()) {
    sd0 = Rcpp::as<Eigen::MatrixXd>(init_sd.get());
  } else {
    for (int j = 0; j < q; ++j) sd0.col(j) = Ks[Ks.size() == 1 ? 0 : j].diagonal().cwiseMax(0.0).cwiseSqrt();
  }
  if (init_mean.rows() != n || init_mean.cols() != q || sd0.rows() != n || sd0.cols() != q)
    Rcpp::stop("init_mean / init_sd have the wrong size");
  std::vector<Eigen::MatrixXd> LKs(Ks.size());
  double jit = jitter;
  for (std::size_t k = 0; k < Ks.size(); ++k) {
    double jk = jitter;
    if (!augp::chol_jitter(Ks[k], &jk, LKs[k]))
      Rcpp::stop("the kernel matrix is not positive definite even with jitter");
    Ks[k].diagonal().array() += jk;
    if (k == 0 || jk > jit) jit = jk;
  }
  const augp::KernelSet K = kernel_set(Ks), LK = kernel_set(LKs);
  Eigen::MatrixXd m0;
  try {
    m0 = as_mu0_mat(mu0, n, q);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
  const std::uint64_t base = augp::combine_seed(seed[0], seed[1]);
  // The likelihood's reference for its Gibbs move, prepared once for all chains.
  std::shared_ptr<const augp::MoveReference> ref;
  if (reference.isNotNull()) {
    List rl(reference.get());
    const Eigen::MatrixXd rm = Rcpp::as<Eigen::MatrixXd>(rl["mean"]);
    const Eigen::MatrixXd rw = Rcpp::as<Eigen::MatrixXd>(rl["prec"]);
    if (rm.rows() != n || rm.cols() != q || rw.rows() != n || rw.cols() != q)
      Rcpp::stop("reference$mean and reference$prec must be n x q");
    try {
      ref = L->gibbs_reference(rm, rw, K);
    } catch (std::exception& e) {
      Rcpp::stop(e.what());
    }
  }

  // Columns run in parallel inside a chain only when the chains leave threads
  // idle (nested loops would only add thread start-up costs) and n is large.
  const int col_threads = chains < threads ? augp::threads_for_cubic(q, n, threads) : 1;
  NumericVector out(static_cast<R_xlen_t>(iter) * chains * n * q);
  NumericVector theta_out(full_bayes ? static_cast<R_xlen_t>(iter) * chains * n_theta : 0);
  NumericVector param_out(static_cast<R_xlen_t>(iter) * chains * n_lp);
  std::vector<augp::GibbsChain> ch;
  ch.reserve(chains);
  for (int c = 0; c < chains; ++c) {
    // Dispersed starting points from a stream of their own (n_streams + id).
    const int id = chain_ids[c];
    augp::Rng rinit(base, static_cast<std::uint64_t>(n_streams + id));
    Eigen::MatrixXd f0(n, q);
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < n; ++i) f0(i, j) = init_mean(i, j) + sd0(i, j) * rinit.norm();
    ch.emplace_back(K, LK, *L, m0, f0, augp::Rng(base, static_cast<std::uint64_t>(id)), warmup,
                    iter, thin, out.begin() + static_cast<R_xlen_t>(iter) * c, iter * chains,
                    col_threads);
    ch.back().set_reference(ref);
    ch.back().set_flow_updates(flow_moves, flow_variance);
    ch.back().set_hmc_steps(hmc_steps);
    if (n_lp > 0) {
      try {
        ch.back().sample_params(lpriors, param_out.begin() + static_cast<R_xlen_t>(iter) * c);
      } catch (std::exception& e) {
        Rcpp::stop(e.what());
      }
    }
    if (full_bayes) {
      std::vector<augp::HyperBlock> blocks;
      int k0 = 0;
      try {
        for (std::size_t b = 0; b < kspecs.size(); ++b) {
          augp::KernelSpec sp = kspecs[b];
          const int p = sp.n_params();
          std::vector<augp::HyperPrior> pr(priors.begin() + k0, priors.begin() + k0 + p);
          for (int k = 0; k < p; ++k)
            if (pr[k].family != augp::HyperPrior::FIXED) sp.theta[k] += theta_sd * rinit.norm();
          std::vector<int> cols;
          if (kspecs.size() == 1) {
            for (int j = 0; j < q; ++j) cols.push_back(j);
          } else {
            cols.push_back(static_cast<int>(b));
          }
          blocks.emplace_back(sp, pr, cols, X, jit, moves, warmup);
          k0 += p;
        }
        ch.back().sample_hyper(std::move(blocks),
                               theta_out.begin() + static_cast<R_xlen_t>(iter) * c);
      } catch (std::exception& e) {
        Rcpp::stop(std::string("chain ") + std::to_string(id + 1) + ": " + e.what());
      }
    }
  }
  std::vector<int> ok(chains, 1);
  const int total = warmup + iter * thin;
  const double work = static_cast<double>(n) * n * n;
  const int block = std::max(1, std::min(100, static_cast<int>(2e8 / std::max(work, 1.0))));
  int done = 0;
  while (done < total) {
    const int count = std::min(block, total - done);
    ChainWorker w(ch, ok, count);
    RcppParallel::parallelFor(0, chains, w, 1, threads);
    done += count;
    for (int c = 0; c < chains; ++c)
      if (!ok[c]) Rcpp::stop("numerical failure in Gibbs chain " + std::to_string(chain_ids[c] + 1));
    Rcpp::checkUserInterrupt();
    if (progress.isNotNull()) Rcpp::Function(progress.get())(done, total);
  }
  out.attr("dim") = Rcpp::IntegerVector::create(iter, chains, n * q);
  param_out.attr("dim") = Rcpp::IntegerVector::create(iter, chains, n_lp);
  // the gradient move's final step size and mean acceptance probability, per chain
  // and the variances of its adapted low-rank metric (empty when none)
  NumericVector grad_eps(chains), grad_accept(chains);
  List grad_metric(chains);
  for (int c = 0; c < chains; ++c) {
    grad_eps[c] = ch[c].gradient_move().step_size();
    grad_accept[c] = ch[c].gradient_move().mean_accept();
    const Eigen::VectorXd& lam = ch[c].gradient_move().metric_variances();
    grad_metric[c] = NumericVector(lam.data(), lam.data() + lam.size());
  }
  if (!full_bayes)
    return List::create(Rcpp::Named("draws") = out, Rcpp::Named("jitter") = jit,
                        Rcpp::Named("lik_params") = param_out, Rcpp::Named("grad_eps") = grad_eps,
                        Rcpp::Named("grad_accept") = grad_accept,
                        Rcpp::Named("grad_metric") = grad_metric);
  theta_out.attr("dim") = Rcpp::IntegerVector::create(iter, chains, n_theta);
  const int nb = static_cast<int>(kspecs.size());
  Rcpp::NumericMatrix accept(chains, nb);
  NumericVector chol_per_sweep(chains), eig_per_sweep(chains);
  for (int c = 0; c < chains; ++c) {
    double nchol = 0.0, neig = 0.0;
    for (int b = 0; b < nb; ++b) {
      const augp::HyperBlock& hb = ch[c].hyper_blocks()[b];
      accept(c, b) = hb.proposed() > 0 ? static_cast<double>(hb.accepted()) / hb.proposed() : NA_REAL;
      nchol += static_cast<double>(hb.factorisations());
      neig += static_cast<double>(hb.eigendecompositions());
    }
    chol_per_sweep[c] = nchol / total;
    eig_per_sweep[c] = neig / total;
  }
  return List::create(Rcpp::Named("draws") = out, Rcpp::Named("jitter") = jit,
                      Rcpp::Named("theta") = theta_out, Rcpp::Named("accept") = accept,
                      Rcpp::Named("chol_per_sweep") = chol_per_sweep,
                      Rcpp::Named("eig_per_sweep") = eig_per_sweep,
                      Rcpp::Named("lik_params") = param_out);
}

