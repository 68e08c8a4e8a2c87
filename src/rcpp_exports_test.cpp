// Test-only exports and the test-only likelihood: entry points that expose single
// pieces of the core (the Gaussian step, one auxiliary draw, the Poisson and
// negative-multinomial samplers, the kernel gradient contraction) so the tests can
// check them against exact results, a timing hook for bench/, and a likelihood of q
// independent binomial columns that checks multi-column code paths exactly against
// q separate fits. Nothing in R/ calls these.
#include <RcppEigen.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adapter.h"
#include "engine.h"
#include "hyper_sampler.h"
#include "gaussian_step.h"
#include "kernel.h"
#include "likelihood.h"
#include "negative_multinomial.h"
#include "param_sampler.h"
#include "numerics.h"
#include "rng.h"

// [[Rcpp::depends(RcppEigen)]]

using Rcpp::List;
using Rcpp::NumericVector;

namespace {

// The priors of a hyperparameter block from the R side's P x 4 matrix (family, a, b, on_sd).
std::vector<augp::HyperPrior> hyper_priors_from(const Rcpp::NumericMatrix& prior) {
  std::vector<augp::HyperPrior> pr;
  for (int k = 0; k < prior.nrow(); ++k) {
    augp::HyperPrior h;
    h.family = static_cast<int>(prior(k, 0));
    h.a = prior(k, 1);
    h.b = prior(k, 2);
    h.on_sd = prior(k, 3) != 0.0;
    pr.push_back(h);
  }
  return pr;
}

// Column j is an independent binomial-logistic model (y[, j] successes out of
// trials[, j]). Spec fields: y and trials, n x q matrices.
class BinomialColumns : public augp::Likelihood {
 public:
  BinomialColumns(const Eigen::MatrixXd& y, const Eigen::MatrixXd& tr) : y_(y), tr_(tr) {
    if (y.rows() != tr.rows() || y.cols() != tr.cols())
      throw std::invalid_argument("y and trials differ in size");
    for (int j = 0; j < y.cols(); ++j) {
      augp::LikSpec s;
      s.type = "binomial";
      s.fields["y"] = y.col(j);
      s.fields["trials"] = tr.col(j);
      cols_.push_back(augp::make_likelihood(s));
    }
  }
  int n_obs() const override { return static_cast<int>(y_.rows()); }
  int n_latent() const override { return static_cast<int>(cols_.size()); }
  int n_response() const override { return n_latent(); }
  std::unique_ptr<augp::Likelihood> subset(const std::vector<int>& rows) const override {
    Eigen::MatrixXd y(rows.size(), y_.cols()), t(rows.size(), y_.cols());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      y.row(r) = y_.row(rows[r]);
      t.row(r) = tr_.row(rows[r]);
    }
    return std::unique_ptr<augp::Likelihood>(new BinomialColumns(y, t));
  }
  void sample_aux(const Eigen::MatrixXd& f, augp::Rng& rng, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.resize(n_obs(), n_latent());
    omega.resize(n_obs(), n_latent());
    for (int j = 0; j < n_latent(); ++j) {
      Eigen::MatrixXd k, o;
      cols_[j]->sample_aux(f.col(j), rng, k, o);
      kappa.col(j) = k.col(0);
      omega.col(j) = o.col(0);
    }
  }
  void expect_aux(const Eigen::MatrixXd& m, const Eigen::MatrixXd& v, Eigen::MatrixXd& kappa,
                  Eigen::MatrixXd& omega) const override {
    kappa.resize(n_obs(), n_latent());
    omega.resize(n_obs(), n_latent());
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
  Eigen::VectorXd loglik_obs(const Eigen::MatrixXd& f) const override {
    Eigen::VectorXd s = Eigen::VectorXd::Zero(n_obs());
    for (int j = 0; j < n_latent(); ++j) s += cols_[j]->loglik_obs(f.col(j));
    return s;
  }
  Eigen::MatrixXd response_mean(const Eigen::MatrixXd& f) const override {
    Eigen::MatrixXd p(f.rows(), n_latent());
    for (int j = 0; j < n_latent(); ++j) p.col(j) = cols_[j]->response_mean(f.col(j));
    return p;
  }
  Eigen::MatrixXd simulate(const Eigen::MatrixXd& f, const Eigen::VectorXd& size,
                           augp::Rng& rng) const override {
    Eigen::MatrixXd y(f.rows(), n_latent());
    for (int j = 0; j < n_latent(); ++j) y.col(j) = cols_[j]->simulate(f.col(j), size, rng);
    return y;
  }

 private:
  Eigen::MatrixXd y_, tr_;
  std::vector<std::unique_ptr<augp::Likelihood>> cols_;
};

std::unique_ptr<augp::Likelihood> make_binomial_columns(const augp::LikSpec& spec) {
  return std::unique_ptr<augp::Likelihood>(new BinomialColumns(spec.mat("y"), spec.mat("trials")));
}

const bool binomial_columns_registered =
    augp::register_likelihood("binomial_columns", &make_binomial_columns);

}  // namespace

// Gradient contraction sum_ik M_ik dK_ik / d theta_j.
// [[Rcpp::export(name = ".gp_kernel_contract_cpp")]]
NumericVector gp_kernel_contract_cpp(List spec, Eigen::MatrixXd x, Eigen::MatrixXd M) {
  try {
    return Rcpp::wrap(augp::kernel_grad_contract(augp::kernel_spec_from_list(spec), x, M));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The Gaussian step on its own: mean and full covariance (mu0: one value or one per row).
// [[Rcpp::export(name = ".gp_gaussian_step_cpp")]]
List gp_gaussian_step_cpp(Eigen::MatrixXd K, Eigen::VectorXd omega, Eigen::VectorXd kappa,
                          NumericVector mu0, int ndraws, NumericVector seed) {
  augp::GaussianStep step;
  if (!step.factor(K, omega)) Rcpp::stop("Cholesky factorisation of B failed");
  Eigen::VectorXd m0(K.rows());
  for (int i = 0; i < K.rows(); ++i) m0[i] = mu0[mu0.size() == 1 ? 0 : i];
  Eigen::VectorXd alpha;
  const Eigen::VectorXd m = step.mean(K, kappa, m0, &alpha);
  Eigen::MatrixXd draws(ndraws, K.rows());
  if (ndraws > 0) {
    Eigen::MatrixXd LK;
    double jit = 0.0;
    if (!augp::chol_jitter(K, &jit, LK)) Rcpp::stop("K is not positive definite");
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    for (int s = 0; s < ndraws; ++s) draws.row(s) = step.draw(K, LK, kappa, m0, rng).transpose();
  }
  return List::create(Rcpp::Named("mean") = m, Rcpp::Named("cov") = step.cov(K),
                      Rcpp::Named("diag") = step.diag_cov(K), Rcpp::Named("alpha") = alpha,
                      Rcpp::Named("kl") = step.kl(m, m0, alpha), Rcpp::Named("draws") = draws);
}

// One Gibbs auxiliary draw: kappa and omega given f.
// [[Rcpp::export(name = ".gp_lik_sample_cpp")]]
List gp_lik_sample_cpp(List lik, Eigen::MatrixXd f, NumericVector seed) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    Eigen::MatrixXd kappa, omega;
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    L->sample_aux(f, rng, kappa, omega);
    return List::create(Rcpp::Named("kappa") = kappa, Rcpp::Named("omega") = omega);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Likelihood::loglik_gradient at f for the named positive parameter elements (1-based
// indices): list(ok, ll, grad_f, grad_t); ok FALSE when the likelihood does not give them.
// [[Rcpp::export(name = ".lik_loglik_gradient_cpp")]]
List lik_loglik_gradient_cpp(List lik, Eigen::MatrixXd f, std::vector<std::string> names,
                             std::vector<int> index) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    for (int& k : index) --k;
    double ll = 0.0;
    Eigen::MatrixXd gf;
    Eigen::VectorXd gt;
    const bool ok = L->loglik_gradient(f, names, index, &ll, gf, gt);
    return List::create(Rcpp::Named("ok") = ok, Rcpp::Named("ll") = ll, Rcpp::Named("grad_f") = gf,
                        Rcpp::Named("grad_t") = gt);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The core's digamma function and psi(y + r) - psi(r), elementwise.
// [[Rcpp::export(name = ".digamma_cpp")]]
List digamma_cpp(NumericVector x, NumericVector y, NumericVector r) {
  NumericVector d(x.size()), dd(y.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) d[i] = augp::digamma(x[i]);
  for (R_xlen_t i = 0; i < y.size(); ++i) dd[i] = augp::digamma_diff(y[i], r[i]);
  return List::create(Rcpp::Named("digamma") = d, Rcpp::Named("diff") = dd);
}

// n Poisson(mu) draws from the engine's generator.
// [[Rcpp::export(name = ".softmax_poisson_cpp")]]
NumericVector softmax_poisson_cpp(double mu, int n, NumericVector seed) {
  if (!(mu >= 0) || n < 0 || seed.size() < 2) Rcpp::stop("bad arguments");
  augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
  NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = rng.poisson(mu);
  return out;
}

// n draws of NM(r, p) (rows), p the q success probabilities with sum(p) < 1.
// [[Rcpp::export(name = ".softmax_nm_cpp")]]
Rcpp::NumericMatrix softmax_nm_cpp(double r, NumericVector p, int n, NumericVector seed) {
  const int q = p.size();
  double p0 = 1.0;
  for (int j = 0; j < q; ++j) {
    if (!(p[j] >= 0)) Rcpp::stop("p must be non-negative");
    p0 -= p[j];
  }
  if (!(r > 0) || !(p0 > 0) || n < 0 || seed.size() < 2) Rcpp::stop("bad arguments");
  std::vector<double> ratio(q), cnt(q);
  for (int j = 0; j < q; ++j) ratio[j] = p[j] / p0;
  augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
  Rcpp::NumericMatrix out(n, q);
  for (int i = 0; i < n; ++i) {
    augp::nm::draw(r, ratio.data(), q, rng, cnt.data());
    for (int j = 0; j < q; ++j) out(i, j) = cnt[j];
  }
  return out;
}

// Timing for bench/: one Eigen Cholesky of K + I versus one Gibbs iteration.
// [[Rcpp::export(name = ".gp_bench_cpp")]]
NumericVector gp_bench_cpp(Eigen::MatrixXd K, List lik, int reps, NumericVector seed) {
  typedef std::chrono::steady_clock clock;
  std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
  const int n = K.rows();
  Eigen::MatrixXd LK;
  double jit = 1e-8;
  if (!augp::chol_jitter(K, &jit, LK)) Rcpp::stop("K is not positive definite");
  K.diagonal().array() += jit;
  Eigen::MatrixXd A = K;
  A.diagonal().array() += 1.0;
  double t_chol = 0.0;
  for (int r = 0; r < reps; ++r) {
    Eigen::MatrixXd M = A;
    const auto t0 = clock::now();
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(M);
    t_chol += std::chrono::duration<double>(clock::now() - t0).count();
  }
  Eigen::MatrixXd f0 = Eigen::MatrixXd::Zero(n, 1);
  std::vector<double> out(reps);
  augp::GibbsChain chain(K, LK, *L, Eigen::MatrixXd::Zero(n, 1), f0,
                         augp::Rng(augp::combine_seed(seed[0], seed[1]), 0), reps, 0, 1, out.data(), 1);
  const auto t0 = clock::now();
  chain.run(reps);
  const double t_gibbs = std::chrono::duration<double>(clock::now() - t0).count();
  return NumericVector::create(Rcpp::Named("chol") = t_chol / reps,
                               Rcpp::Named("gibbs_iter") = t_gibbs / reps);
}

// The likelihood restricted to `rows` (1-based, as R indexes): its per-observation
// log-likelihoods at f (one row per selected observation), expected aux and local
// ELBO at (m, v), for the subset-consistency check of the conformance test.
// [[Rcpp::export(name = ".lik_subset_cpp")]]
List lik_subset_cpp(List lik, Rcpp::IntegerVector rows, Eigen::MatrixXd f, Eigen::MatrixXd m,
                    Eigen::MatrixXd v) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    std::vector<int> r(rows.begin(), rows.end());
    for (int& i : r) {
      if (i < 1 || i > L->n_obs()) throw std::invalid_argument("rows out of range");
      --i;
    }
    std::unique_ptr<augp::Likelihood> S = L->subset(r);
    Eigen::MatrixXd kappa, omega;
    S->expect_aux(m, v, kappa, omega);
    return List::create(Rcpp::Named("n_obs") = S->n_obs(), Rcpp::Named("loglik_obs") = S->loglik_obs(f),
                        Rcpp::Named("kappa") = kappa, Rcpp::Named("omega") = omega,
                        Rcpp::Named("elbo_local") = S->elbo_local(m, v));
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The n-point Gauss-Hermite rule for a standard normal weight (nodes x, weights w) and
// the standard normal quantiles at p, from the core's numerics.
// [[Rcpp::export(name = ".numerics_cpp")]]
List numerics_cpp(int n, NumericVector p) {
  try {
    const augp::GaussHermite& gh = augp::gauss_hermite(n);
    NumericVector z(p.size());
    for (R_xlen_t i = 0; i < p.size(); ++i) z[i] = augp::normal_quantile(p[i]);
    return List::create(Rcpp::Named("x") = gh.x, Rcpp::Named("w") = gh.w, Rcpp::Named("z") = z);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The log prior density of a kernel log parameter theta (hyper_sampler.h), for tests.
// [[Rcpp::export(name = ".hyper_log_prior_cpp")]]
NumericVector hyper_log_prior_cpp(int family, double a, double b, bool on_sd, NumericVector theta) {
  augp::HyperPrior p;
  p.family = family;
  p.a = a;
  p.b = b;
  p.on_sd = on_sd;
  try {
    augp::hyper_check_prior(p, "prior");
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
  NumericVector out(theta.size());
  for (R_xlen_t i = 0; i < theta.size(); ++i) out[i] = augp::hyper_log_prior(p, theta[i]);
  return out;
}

// S slice-sampling sweeps of the likelihood parameters in `prior` (a list as
// .gp_gibbs_cpp's lik_prior) at fixed latent values f, from the likelihood's starting
// values: an S x P matrix of the draws (one sweep per row), from the stream of `seed`.
// [[Rcpp::export(name = ".lik_param_sweeps_cpp")]]
Eigen::MatrixXd lik_param_sweeps_cpp(List lik, Eigen::MatrixXd f, List prior, int S, NumericVector seed) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    std::vector<augp::LikParamPrior> pri = augp::lik_priors_from_list(prior);
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    Eigen::MatrixXd out(S, pri.size());
    for (int s = 0; s < S; ++s) {
      augp::sample_lik_params(*L, pri, f, rng);
      const std::vector<double> v = augp::lik_param_values(*L, pri);
      for (std::size_t k = 0; k < v.size(); ++k) out(s, static_cast<Eigen::Index>(k)) = v[k];
    }
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The hyperparameter move of one block (HyperBlock::step) repeated with the auxiliaries
// held fixed: a Metropolis-Hastings chain on p(theta | kappa, omega), which the tests
// compare with quadrature of that density. spec: one flattened kernel (its theta the
// start); prior: P x 4 (family, a, b, on_sd) as for .gp_gibbs_cpp; kappa, omega: n x 1.
// Returns the iter draws of theta after warmup (iter x P) with attribute accept.
// [[Rcpp::export(name = ".hyper_block_chain_cpp")]]
Rcpp::NumericMatrix hyper_block_chain_cpp(List spec, Eigen::MatrixXd X, Rcpp::NumericMatrix prior,
                                          Eigen::MatrixXd kappa, Eigen::MatrixXd omega,
                                          double jitter, int warmup, int iter, NumericVector seed) {
  try {
    const augp::KernelSpec sp = augp::kernel_spec_from_list(spec);
    const std::vector<augp::HyperPrior> pr = hyper_priors_from(prior);
    augp::HyperBlock b(sp, pr, std::vector<int>{0}, X, jitter, 1, warmup);
    const Eigen::MatrixXd mu0 = Eigen::MatrixXd::Zero(X.rows(), 1);
    Eigen::MatrixXd f = mu0;
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    std::vector<augp::Rng> cr{augp::Rng(augp::combine_seed(seed[0], seed[1]), 1)};
    Rcpp::NumericMatrix out(iter, sp.n_params());
    for (int it = 0; it < warmup + iter; ++it) {
      if (!b.step(kappa, omega, mu0, f, rng, cr, it < warmup ? it + 1 : 0))
        Rcpp::stop("numerical failure");
      if (it >= warmup)
        for (int k = 0; k < sp.n_params(); ++k) out(it - warmup, k) = b.theta()[k];
    }
    out.attr("accept") = static_cast<double>(b.accepted()) / std::max(1L, b.proposed());
    out.attr("hmc") = b.uses_hmc();
    out.attr("step") = b.hmc_step();
    out.attr("leapfrog") = b.hmc_steps();
    out.attr("chol") = static_cast<double>(b.factorisations());
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The log target of a hyperparameter block, log p(theta | aux) up to a constant, at the
// log parameters theta (pseudo-data from kappa and omega, prior mean mu0), with its
// gradient in the sampled parameters as attribute "grad" (tests).
// [[Rcpp::export(name = ".hyper_log_target_cpp")]]
Rcpp::NumericVector hyper_log_target_cpp(List spec, Eigen::MatrixXd X, Rcpp::NumericMatrix prior,
                                         Eigen::MatrixXd kappa, Eigen::MatrixXd omega,
                                         Eigen::MatrixXd mu0, double jitter, NumericVector theta) {
  try {
    const augp::KernelSpec sp = augp::kernel_spec_from_list(spec);
    const std::vector<augp::HyperPrior> pr = hyper_priors_from(prior);
    std::vector<int> cols(kappa.cols());
    for (int j = 0; j < kappa.cols(); ++j) cols[j] = j;
    augp::HyperBlock b(sp, pr, cols, X, jitter, 1, 0);
    Eigen::VectorXd g;
    const double v = b.log_target_grad(Rcpp::as<std::vector<double>>(theta), kappa, omega, mu0, &g);
    Rcpp::NumericVector out = Rcpp::NumericVector::create(v);
    out.attr("grad") = Rcpp::NumericVector(g.data(), g.data() + g.size());
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The joint gradient move of f and the likelihood's positive parameters (latent_hmc.h) run
// alone warmup + S times at a fixed kernel factor L (n x n, lower; one latent column), from
// f0 and the likelihood's starting values, with `steps` leapfrog steps: an S x (P + n)
// matrix of the draws after warmup (the P elements of prior, a list as .gp_gibbs_cpp's
// lik_prior, then f), with attribute accept (the mean acceptance probability after warmup).
// [[Rcpp::export(name = ".latent_hmc_chain_cpp")]]
Rcpp::NumericMatrix latent_hmc_chain_cpp(List lik, Eigen::MatrixXd L, Eigen::MatrixXd mu0, List prior,
                                         Eigen::MatrixXd f0, int S, int warmup, int steps,
                                         NumericVector seed) {
  try {
    std::unique_ptr<augp::Likelihood> lk = augp::likelihood_from_list(lik);
    std::vector<augp::LikParamPrior> pri = augp::lik_priors_from_list(prior);
    augp::LatentHmc hmc(*lk, pri, f0, steps, warmup);
    if (!hmc.active()) Rcpp::stop("the move is not available for this likelihood");
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    Eigen::MatrixXd f = f0;
    const augp::KernelSet LK(L);
    const int P = static_cast<int>(pri.size()), n = static_cast<int>(f.rows());
    Rcpp::NumericMatrix out(S, P + n);
    double acc = 0.0;
    for (int it = 0; it < warmup + S; ++it) {
      const double a = hmc.step(*lk, pri, f, mu0, LK, rng, it < warmup ? it + 1 : 0);
      if (it < warmup) continue;
      acc += a;
      const std::vector<double> v = augp::lik_param_values(*lk, pri);
      for (int k = 0; k < P; ++k) out(it - warmup, k) = v[k];
      for (int i = 0; i < n; ++i) out(it - warmup, P + i) = f(i, 0);
    }
    out.attr("accept") = acc / S;
    out.attr("eps") = hmc.eps();
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}
