// R adapter of the likelihoods' response methods: the response mean and its
// summaries (from Gaussian marginals of f or from latent draws), simulation and
// per-observation log-likelihoods, for any likelihood of the registry. Latent
// draws arrive as S x r x q arrays (draw, point, latent column).
#include <RcppEigen.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adapter.h"
#include "likelihood.h"
#include "parallel.h"
#include "rng.h"

// [[Rcpp::depends(RcppEigen)]]

using Rcpp::List;
using Rcpp::NumericVector;

namespace {

// The S draws of an S x r x q array as r x q matrices.
std::vector<Eigen::MatrixXd> draws_from_array(const NumericVector& a, int q) {
  const Rcpp::IntegerVector d = a.attr("dim");
  if (d.size() != 3 || d[2] != q) throw std::invalid_argument("latent draws must be an S x r x q array");
  const int S = d[0], r = d[1];
  std::vector<Eigen::MatrixXd> out(S, Eigen::MatrixXd(r, q));
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < r; ++i)
      for (int s = 0; s < S; ++s) out[s](i, j) = a[s + static_cast<R_xlen_t>(S) * (i + static_cast<R_xlen_t>(r) * j)];
  return out;
}

// Per-draw parameters need one row per draw.
void check_param_rows(const augp::ParamDraws& pd, int S) {
  if (!pd.empty() && pd.values.rows() != S)
    throw std::invalid_argument("param_draws needs one row of parameters per latent draw");
}

List wrap_summary(const augp::ResponseSummary& s) {
  return List::create(Rcpp::Named("mean") = s.mean, Rcpp::Named("sd") = s.sd,
                      Rcpp::Named("lwr") = s.lwr, Rcpp::Named("upr") = s.upr);
}

}  // namespace

// The response mean at latent values f (r x q): r x n_response.
// [[Rcpp::export(name = ".lik_response_mean_cpp")]]
Eigen::MatrixXd lik_response_mean_cpp(List lik, Eigen::MatrixXd f) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    if (f.cols() != L->n_latent()) throw std::invalid_argument("f does not conform: it needs one column per latent function");
    return L->response_mean(f);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The response mean at every draw of an S x r x q array (with the likelihood's
// parameters of each draw when the list has param_draws): an S x r x n_response array.
// [[Rcpp::export(name = ".lik_response_mean_draws_cpp")]]
NumericVector lik_response_mean_draws_cpp(List lik, NumericVector draws) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    const augp::ParamDraws pd = augp::param_draws_from_list(lik);
    const std::vector<Eigen::MatrixXd> F = draws_from_array(draws, L->n_latent());
    const int S = F.size(), r = S ? F[0].rows() : 0, R = L->n_response();
    check_param_rows(pd, S);
    NumericVector out(static_cast<R_xlen_t>(S) * r * R);
    for (int s = 0; s < S; ++s) {
      pd.apply(*L, s);
      const Eigen::MatrixXd M = L->response_mean(F[s]);
      for (int k = 0; k < R; ++k)
        for (int i = 0; i < r; ++i) out[s + static_cast<R_xlen_t>(S) * (i + static_cast<R_xlen_t>(r) * k)] = M(i, k);
    }
    out.attr("dim") = Rcpp::IntegerVector::create(S, r, R);
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Summary of the response mean under independent Gaussian marginals (m, v: r x q,
// read in place); Z: S x q standard normals for the likelihoods that average over
// draws; level <= 0: no interval (lwr, upr 0 x 0). Blocks of rows run in parallel with
// identical results for any thread count, each writing its rows straight into the
// result matrices (allocated here, before the workers start; no R API in them).
// [[Rcpp::export(name = ".lik_response_cpp")]]
List lik_response_cpp(List lik, Eigen::Map<Eigen::MatrixXd> m, Eigen::Map<Eigen::MatrixXd> v,
                      Eigen::MatrixXd Z, double level, int threads = 1, bool want_sd = true) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    const int r = m.rows(), q = L->n_latent(), R = L->n_response();
    if (m.cols() != q || v.rows() != r || v.cols() != q)
      throw std::invalid_argument("m and v do not conform: they must be r x q, one column per latent function");
    const bool iv = level > 0;
    // (want_sd = false: no sd matrix, 0 x R, for callers that need the means only)
    Rcpp::NumericMatrix mean(r, R), sd(want_sd ? r : 0, R), lwr(iv ? r : 0, iv ? R : 0),
        upr(iv ? r : 0, iv ? R : 0);
    Eigen::Map<Eigen::MatrixXd> om(mean.begin(), r, R), os(sd.begin(), want_sd ? r : 0, R),
        ol(lwr.begin(), iv ? r : 0, iv ? R : 0), ou(upr.begin(), iv ? r : 0, iv ? R : 0);
    const int block = 64;
    const int nb = (r + block - 1) / block;
    augp::parallel_items(nb, std::max(1, threads), [&](int b) {
      const int i0 = b * block, len = std::min(r, i0 + block) - i0;
      augp::ResponseSummary part;
      L->response_summary(m.middleRows(i0, len), v.middleRows(i0, len), Z, level, part);
      om.middleRows(i0, len) = part.mean;
      if (want_sd) os.middleRows(i0, len) = part.sd;
      if (iv) {
        ol.middleRows(i0, len) = part.lwr;
        ou.middleRows(i0, len) = part.upr;
      }
    });
    return List::create(Rcpp::Named("mean") = mean, Rcpp::Named("sd") = sd, Rcpp::Named("lwr") = lwr,
                        Rcpp::Named("upr") = upr);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Summary of the response mean over latent draws (S x r x q array).
// [[Rcpp::export(name = ".lik_response_draws_cpp")]]
List lik_response_draws_cpp(List lik, NumericVector draws, double level) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    augp::ResponseSummary out;
    augp::response_summary_draws(*L, draws_from_array(draws, L->n_latent()), level, out,
                                 augp::param_draws_from_list(lik));
    return wrap_summary(out);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// One response per draw and point: draws is S x r x q, size the r trial counts;
// returns an S x r x n_response array of counts, from the stream of `seed`.
// [[Rcpp::export(name = ".lik_simulate_cpp")]]
NumericVector lik_simulate_cpp(List lik, NumericVector draws, Eigen::VectorXd size, NumericVector seed) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    const augp::ParamDraws pd = augp::param_draws_from_list(lik);
    const std::vector<Eigen::MatrixXd> F = draws_from_array(draws, L->n_latent());
    const int S = F.size(), r = S ? F[0].rows() : 0, R = L->n_response();
    if (size.size() != r) throw std::invalid_argument("size needs one value per point");
    check_param_rows(pd, S);
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    NumericVector out(static_cast<R_xlen_t>(S) * r * R);
    for (int s = 0; s < S; ++s) {
      pd.apply(*L, s);
      const Eigen::MatrixXd y = L->simulate(F[s], size, rng);
      for (int k = 0; k < R; ++k)
        for (int i = 0; i < r; ++i) out[s + static_cast<R_xlen_t>(S) * (i + static_cast<R_xlen_t>(r) * k)] = y(i, k);
    }
    out.attr("dim") = Rcpp::IntegerVector::create(S, r, R);
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// log p(y_i | f_s) for the likelihood's own observations at every draw: S x n.
// [[Rcpp::export(name = ".lik_loglik_obs_cpp")]]
Eigen::MatrixXd lik_loglik_obs_cpp(List lik, NumericVector draws) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    const augp::ParamDraws pd = augp::param_draws_from_list(lik);
    const std::vector<Eigen::MatrixXd> F = draws_from_array(draws, L->n_latent());
    check_param_rows(pd, static_cast<int>(F.size()));
    Eigen::MatrixXd out(F.size(), L->n_obs());
    for (std::size_t s = 0; s < F.size(); ++s) {
      if (F[s].rows() != L->n_obs()) throw std::invalid_argument("draws must have one row per observation");
      pd.apply(*L, static_cast<int>(s));
      out.row(s) = L->loglik_obs(F[s]).transpose();
    }
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// E[log p(y_i | f_i)] under independent Gaussian marginals f_ij ~ N(m_ij, v_ij) (m, v:
// n x q at the likelihood's own observations), one value per observation; Z: S x q
// standard normals for the likelihoods that average over draws.
// [[Rcpp::export(name = ".lik_expected_loglik_cpp")]]
Eigen::VectorXd lik_expected_loglik_cpp(List lik, Eigen::MatrixXd m, Eigen::MatrixXd v, Eigen::MatrixXd Z) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    if (m.rows() != L->n_obs() || m.cols() != L->n_latent() || v.rows() != m.rows() || v.cols() != m.cols())
      throw std::invalid_argument("m and v must be n x q at the likelihood's observations");
    return L->expected_loglik(m, v, Z);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The expected derivatives of log p(y_i | f_i) under independent Gaussian marginals
// (Likelihood::expected_loglik_derivs): list(grad, neg_hess, ell), or NULL when the
// likelihood does not provide them.
// [[Rcpp::export(name = ".lik_expected_derivs_cpp")]]
SEXP lik_expected_derivs_cpp(List lik, Eigen::MatrixXd m, Eigen::MatrixXd v, Eigen::MatrixXd Z) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    if (m.rows() != L->n_obs() || m.cols() != L->n_latent() || v.rows() != m.rows() || v.cols() != m.cols())
      throw std::invalid_argument("m and v must be n x q at the likelihood's observations");
    Eigen::MatrixXd g, h;
    Eigen::VectorXd ell;
    if (!L->expected_loglik_derivs(m, v, Z, g, h, ell)) return R_NilValue;
    return List::create(Rcpp::Named("grad") = g, Rcpp::Named("neg_hess") = h, Rcpp::Named("ell") = ell);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The likelihood's parameter flow (Likelihood::param_flow) at f (n x q at the likelihood's
// own observations) and d: NULL when the likelihood has none, else list(name, index
// (1-based), lo, hi (the range of d at f), f (phi_d(f), NA when d is outside the range),
// log_jac).
// [[Rcpp::export(name = ".lik_param_flow_cpp")]]
SEXP lik_param_flow_cpp(List lik, Eigen::MatrixXd f, double d) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    if (f.rows() != L->n_obs() || f.cols() != L->n_latent())
      throw std::invalid_argument("f must be n x q at the likelihood's observations");
    std::string name;
    int index = 0;
    if (!L->param_flow(&name, &index)) return R_NilValue;
    double lo = 0.0, hi = 0.0;
    L->param_flow_range(f, &lo, &hi);
    Eigen::MatrixXd out = Eigen::MatrixXd::Constant(f.rows(), f.cols(), NA_REAL);
    double lj = NA_REAL;
    if (d > lo && d < hi) lj = L->param_flow_map(f, d, out);
    return List::create(Rcpp::Named("name") = name, Rcpp::Named("index") = index + 1,
                        Rcpp::Named("lo") = lo, Rcpp::Named("hi") = hi, Rcpp::Named("f") = out,
                        Rcpp::Named("log_jac") = lj);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The likelihood's learned parameters at their optimum given q(f) (m, v: n x q at the
// likelihood's own observations): the gain in the local ELBO and the parameters by
// their spec names.
// [[Rcpp::export(name = ".lik_learn_params_cpp")]]
List lik_learn_params_cpp(List lik, Eigen::MatrixXd m, Eigen::MatrixXd v) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik);
    if (m.rows() != L->n_obs() || m.cols() != L->n_latent() || v.rows() != m.rows() || v.cols() != m.cols())
      throw std::invalid_argument("m and v must be n x q at the likelihood's observations");
    const double gain = L->learn_params(m, v);
    List par;
    for (const auto& p : L->params()) par[p.first] = Rcpp::wrap(Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(p.second.data(), p.second.size())));
    return List::create(Rcpp::Named("gain") = gain, Rcpp::Named("params") = par);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Central interval of probability `level` of the predictive distribution of one new
// response per point when f ~ N(m, v) (r x q): list(lwr, upr), r x n_response; the
// Monte Carlo default draws from the stream of `seed`.
// [[Rcpp::export(name = ".lik_predictive_interval_cpp")]]
List lik_predictive_interval_cpp(List lik, Eigen::MatrixXd m, Eigen::MatrixXd v, double level,
                                 NumericVector seed) {
  try {
    std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
    if (m.cols() != L->n_latent() || v.rows() != m.rows() || v.cols() != m.cols())
      throw std::invalid_argument("m and v do not conform: they must be r x q, one column per latent function");
    if (!(level > 0 && level < 1)) throw std::invalid_argument("level must lie in (0, 1)");
    augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
    Eigen::MatrixXd lwr, upr;
    L->predictive_interval(m, v, level, rng, lwr, upr);
    return List::create(Rcpp::Named("lwr") = lwr, Rcpp::Named("upr") = upr);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}
