// R adapter of the persistent hyperparameter-search models (src/model.h): each model
// lives in an external pointer made once per fit; the R side passes only log
// parameters (and inducing locations) per evaluation.
#include <RcppEigen.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "adapter.h"
#include "gaussian_exact.h"
#include "kernel.h"
#include "likelihood.h"
#include "model.h"
#include "sparse.h"

// [[Rcpp::depends(RcppEigen, RcppParallel)]]

using Rcpp::List;

namespace {

void interrupt_check() { Rcpp::checkUserInterrupt(); }

template <class M>
M* model_of(SEXP ptr) {
  Rcpp::XPtr<M> p(ptr);
  if (p.get() == nullptr) throw std::invalid_argument("the model pointer is no longer valid");
  return p.get();
}

}  // namespace

// The dense model: X (n x d), the likelihood list, the prior mean (n x q), the jitter
// added to every kernel matrix, specs (a list of one flattened kernel shared by all
// latent columns or one per column), and CAVI's sweep limit, tolerance and threads.
// [[Rcpp::export(name = ".model_dense_new")]]
SEXP model_dense_new(Eigen::MatrixXd X, List lik, Eigen::MatrixXd mu0, double jitter, List specs,
                     int maxit, double tol, int threads) {
  try {
    const std::vector<augp::KernelSpec> sp = augp::kernel_specs_from_list(specs);
    std::unique_ptr<augp::DenseModel> m(
        new augp::DenseModel(X, augp::likelihood_from_list(lik), mu0, jitter, sp, maxit, tol, threads));
    return Rcpp::XPtr<augp::DenseModel>(m.release(), true);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Moves the dense model to the data level `rows` (1-based rows of X); warm: sites
// predicted from the current level's best evaluation (see DenseModel::set_level).
// Returns whether the new level has sites.
// [[Rcpp::export(name = ".model_dense_level")]]
bool model_dense_level(SEXP model, Rcpp::IntegerVector rows, bool warm) {
  try {
    std::vector<int> r(rows.begin(), rows.end());
    for (int& i : r) i -= 1;
    return model_of<augp::DenseModel>(model)->set_level(r, warm);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The profiled ELBO at the log parameters theta and its gradient: list(value,
// gradient); value is NaN when the evaluation failed.
// [[Rcpp::export(name = ".model_dense_eval")]]
List model_dense_eval(SEXP model, std::vector<double> theta) {
  try {
    const augp::ProfileResult r = model_of<augp::DenseModel>(model)->evaluate(theta, interrupt_check);
    return List::create(Rcpp::Named("value") = r.ok ? r.value : R_NaN,
                        Rcpp::Named("gradient") = r.grad);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The dense model's sites at the current level: list(kappa, omega) (level size x q
// matrices), or NULL when it has none.
// [[Rcpp::export(name = ".model_dense_state")]]
SEXP model_dense_state(SEXP model) {
  try {
    const augp::DenseModel* m = model_of<augp::DenseModel>(model);
    if (!m->has_sites()) return R_NilValue;
    return List::create(Rcpp::Named("kappa") = m->kappa(), Rcpp::Named("omega") = m->omega());
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The sparse model: X, mu0 (n x q), the likelihood list, the block size, the
// flattened kernel (its structure; the log parameters come with every call) and threads.
// [[Rcpp::export(name = ".model_sparse_new")]]
SEXP model_sparse_new(Eigen::MatrixXd X, Eigen::MatrixXd mu0, List lik, int block_size, List spec,
                      int threads) {
  try {
    const std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    std::unique_ptr<augp::SparseModel> m(
        new augp::SparseModel(X, mu0, *L, block_size, augp::kernel_spec_from_list(spec), threads));
    return Rcpp::XPtr<augp::SparseModel>(m.release(), true);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Full-data CAVI at (theta, Z, jitter) from `start` (a q(u) list whitened under that
// geometry) if given, else from the prior or (from_best) the model's best q(u); the
// result becomes the model's best q(u). Returns the list of .sparse_cavi_cpp (state,
// elbo, converged, jitter).
// [[Rcpp::export(name = ".model_sparse_cavi")]]
List model_sparse_cavi(SEXP model, std::vector<double> theta, Eigen::MatrixXd Z, double jitter,
                       bool from_best, int maxit, double tol, bool accelerate,
                       Rcpp::Nullable<List> start = R_NilValue) {
  try {
    augp::SparseModel* m = model_of<augp::SparseModel>(model);
    bool converged = false;
    std::unique_ptr<augp::SparseQ> s0;
    if (start.isNotNull()) s0.reset(new augp::SparseQ(augp::unwrap_sparse_q(start, Z.rows(), m->q())));
    const std::vector<double> trace =
        m->cavi(theta, Z, jitter, from_best, maxit, tol, accelerate, converged, interrupt_check, s0.get());
    return List::create(Rcpp::Named("state") = augp::wrap_sparse_q(m->best_q()),
                        Rcpp::Named("elbo") = trace, Rcpp::Named("converged") = converged,
                        Rcpp::Named("jitter") = m->best_geom().jitter);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The profiled sparse ELBO at (theta, Z) from the model's best q(u): list(elbo, grad,
// gz, ok, sweeps); ok is false when the ELBO or a gradient is not finite; sweeps: the
// passes of the CAVI run (recorded ELBOs).
// [[Rcpp::export(name = ".model_sparse_eval")]]
List model_sparse_eval(SEXP model, std::vector<double> theta, Eigen::MatrixXd Z, int maxit, double tol,
                       bool grad, bool zgrad) {
  try {
    bool ok = false;
    const augp::SparseProfile o =
        model_of<augp::SparseModel>(model)->evaluate(theta, Z, maxit, tol, grad, zgrad, ok, interrupt_check);
    return List::create(Rcpp::Named("elbo") = o.elbo, Rcpp::Named("grad") = o.grad,
                        Rcpp::Named("gz") = o.gz, Rcpp::Named("ok") = ok,
                        Rcpp::Named("sweeps") = static_cast<int>(o.trace.size()));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The sparse model's best q(u) (list Lam, h, mv, Sv, kl), whitened under its best geometry.
// [[Rcpp::export(name = ".model_sparse_state")]]
List model_sparse_state(SEXP model) {
  try {
    return augp::wrap_sparse_q(model_of<augp::SparseModel>(model)->best_q());
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The exact Gaussian regression model (src/gaussian_exact.h): X (n x d), y, the
// frequency weights t and the prior mean mu0 (n-vectors), the jitter and the flattened
// kernel (its structure; the log parameters come with every evaluation), and the
// threads of the dense factorisations.
// [[Rcpp::export(name = ".gauss_exact_new")]]
SEXP gauss_exact_new(Eigen::MatrixXd X, Eigen::VectorXd y, Eigen::VectorXd t, Eigen::VectorXd mu0,
                     double jitter, List spec, int threads) {
  try {
    std::unique_ptr<augp::GaussianExactModel> m(new augp::GaussianExactModel(
        X, y, t, mu0, jitter, augp::kernel_spec_from_list(spec), threads));
    return Rcpp::XPtr<augp::GaussianExactModel>(m.release(), true);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// A new kernel structure for the Gaussian model (a flattened kernel).
// [[Rcpp::export(name = ".gauss_exact_kernel")]]
void gauss_exact_kernel(SEXP model, List spec) {
  try {
    model_of<augp::GaussianExactModel>(model)->set_kernel(augp::kernel_spec_from_list(spec));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Moves the Gaussian model to the rows `rows` (1-based rows of X).
// [[Rcpp::export(name = ".gauss_exact_level")]]
void gauss_exact_level(SEXP model, Rcpp::IntegerVector rows) {
  try {
    std::vector<int> r(rows.begin(), rows.end());
    for (int& i : r) i -= 1;
    model_of<augp::GaussianExactModel>(model)->set_level(r);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The log marginal likelihood at par (the kernel's log parameters, then log sigma) and,
// with grad, its gradient: list(value, gradient); value is NaN when A = K + S has no
// Cholesky factor or a value is not finite.
// [[Rcpp::export(name = ".gauss_exact_eval")]]
List gauss_exact_eval(SEXP model, std::vector<double> par, bool grad) {
  try {
    Rcpp::checkUserInterrupt();
    const augp::GaussianExactEval r = model_of<augp::GaussianExactModel>(model)->evaluate(par, grad);
    return List::create(Rcpp::Named("value") = r.ok ? r.value : R_NaN,
                        Rcpp::Named("gradient") = r.grad);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The exact posterior at par on the model's current rows: list(m, v, alpha, kappa,
// omega, value, kl, loo).
// [[Rcpp::export(name = ".gauss_exact_posterior")]]
List gauss_exact_posterior(SEXP model, std::vector<double> par) {
  try {
    const augp::GaussianExactPosterior p = model_of<augp::GaussianExactModel>(model)->posterior(par);
    return List::create(Rcpp::Named("m") = p.m, Rcpp::Named("v") = p.v, Rcpp::Named("alpha") = p.alpha,
                        Rcpp::Named("kappa") = p.kappa, Rcpp::Named("omega") = p.omega,
                        Rcpp::Named("value") = p.value, Rcpp::Named("kl") = p.kl,
                        Rcpp::Named("loo") = p.loo);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}
