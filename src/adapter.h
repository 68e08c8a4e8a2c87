// Small conversions shared by the R adapter files (rcpp_exports_*.cpp).
#ifndef AUGP_ADAPTER_H
#define AUGP_ADAPTER_H

#include <RcppEigen.h>

#include <memory>
#include <string>
#include <vector>

#include "kernel.h"
#include "likelihood.h"
#include "param_sampler.h"
#include "sparse.h"

namespace augp {

// A kernel specification from the list made by kernel_flatten() in R.
inline KernelSpec kernel_spec_from_list(const Rcpp::List& k) {
  KernelSpec s;
  s.code = Rcpp::as<std::vector<int>>(k["code"]);
  s.nls = Rcpp::as<std::vector<int>>(k["nls"]);
  s.theta = Rcpp::as<std::vector<double>>(k["theta"]);
  // active inputs (optional: absent, every leaf uses every column)
  if (k.containsElementNamed("ndims")) {
    s.ndims = Rcpp::as<std::vector<int>>(k["ndims"]);
    s.dims = Rcpp::as<std::vector<int>>(k["dims"]);
  }
  return s;
}

// Kernel specs from a list of flattened kernels (kernel_flatten()): one shared by all
// latent columns or one per column.
inline std::vector<KernelSpec> kernel_specs_from_list(const Rcpp::List& specs) {
  if (specs.size() < 1) throw std::invalid_argument("specs: an empty list of kernels");
  std::vector<KernelSpec> out;
  for (R_xlen_t k = 0; k < specs.size(); ++k) out.push_back(kernel_spec_from_list(Rcpp::List(specs[k])));
  return out;
}

// A likelihood specification from the list made by lik_spec() in R: `type` (a
// string) and numeric or logical fields (vectors become one-column matrices);
// other elements (such as q) are ignored by the factories that do not read them.
inline LikSpec lik_spec_from_list(const Rcpp::List& lik) {
  LikSpec s;
  if (!lik.containsElementNamed("type")) throw std::invalid_argument("the likelihood list has no `type`");
  s.type = Rcpp::as<std::string>(lik["type"]);
  const Rcpp::CharacterVector nm = lik.names();
  for (R_xlen_t k = 0; k < lik.size(); ++k) {
    const std::string name = Rcpp::as<std::string>(nm[k]);
    SEXP el = lik[k];
    if (name == "type" || !(Rf_isReal(el) || Rf_isInteger(el) || Rf_isLogical(el))) continue;
    const Rcpp::NumericVector v(el);  // coerces integers and logicals
    int rows = v.size(), cols = 1;
    if (Rf_isMatrix(el)) {
      rows = Rf_nrows(el);
      cols = Rf_ncols(el);
    }
    s.fields[name] = Eigen::Map<const Eigen::MatrixXd>(v.begin(), rows, cols);
  }
  return s;
}

// The priors of a likelihood's sampled parameters from the list made by
// lik_prior_table() in R: name, index (1-based), family, a, b and optionally location
// (a parameter on the real line that moves with the latent level). Each is checked;
// throws std::invalid_argument.
inline std::vector<LikParamPrior> lik_priors_from_list(const Rcpp::List& lp) {
  const Rcpp::CharacterVector nm = lp["name"];
  const Rcpp::IntegerVector idx = lp["index"];
  const Rcpp::NumericVector fam = lp["family"], pa = lp["a"], pb = lp["b"];
  if (idx.size() != nm.size() || fam.size() != nm.size() || pa.size() != nm.size() || pb.size() != nm.size())
    throw std::invalid_argument("lik_prior: name, index, family, a and b differ in length");
  Rcpp::LogicalVector loc(nm.size(), false);
  if (lp.containsElementNamed("location")) loc = Rcpp::as<Rcpp::LogicalVector>(lp["location"]);
  if (loc.size() != nm.size()) throw std::invalid_argument("lik_prior: location differs in length");
  std::vector<LikParamPrior> out;
  for (R_xlen_t k = 0; k < nm.size(); ++k) {
    LikParamPrior p;
    p.name = Rcpp::as<std::string>(nm[k]);
    p.index = idx[k] - 1;
    p.family = static_cast<int>(fam[k]);
    p.a = pa[k];
    p.b = pb[k];
    p.location = loc[k] == TRUE;
    if (p.location && p.positive())
      throw std::invalid_argument("lik_prior: a location parameter needs a prior on the real line");
    lik_param_check_prior(p, ("the prior of likelihood parameter " + p.name).c_str());
    out.push_back(p);
  }
  return out;
}

// The likelihood of an R likelihood list, through the one registry.
inline std::unique_ptr<Likelihood> likelihood_from_list(const Rcpp::List& lik) {
  return make_likelihood(lik_spec_from_list(lik));
}

// The per-draw likelihood parameters of an R likelihood list: its element `param_draws`,
// list(names = character P, index = integer P (1-based element of each parameter),
// values = S x P matrix); empty when the list has none.
inline ParamDraws param_draws_from_list(const Rcpp::List& lik) {
  ParamDraws pd;
  if (!lik.containsElementNamed("param_draws")) return pd;
  const Rcpp::List d = lik["param_draws"];
  const Rcpp::CharacterVector nm = d["names"];
  const Rcpp::IntegerVector idx = d["index"];
  const Rcpp::NumericMatrix val = d["values"];
  if (nm.size() != idx.size() || val.ncol() != nm.size())
    throw std::invalid_argument("param_draws: names, index and the columns of values differ in length");
  for (R_xlen_t k = 0; k < nm.size(); ++k) {
    pd.names.push_back(Rcpp::as<std::string>(nm[k]));
    pd.index.push_back(idx[k] - 1);
  }
  pd.values = Rcpp::as<Eigen::MatrixXd>(val);
  return pd;
}

// A sparse q(u) as an R list: Lam, h, mv, Sv (one element per latent column) and kl.
inline Rcpp::List wrap_sparse_q(const SparseQ& qs) {
  Rcpp::List L(qs.Lam.size()), h(qs.h.size()), mv(qs.mv.size()), Sv(qs.Sv.size());
  for (std::size_t j = 0; j < qs.Lam.size(); ++j) {
    L[j] = Rcpp::wrap(qs.Lam[j]);
    h[j] = Rcpp::wrap(qs.h[j]);
    mv[j] = Rcpp::wrap(qs.mv[j]);
    Sv[j] = Rcpp::wrap(qs.Sv[j]);
  }
  return Rcpp::List::create(Rcpp::Named("Lam") = L, Rcpp::Named("h") = h, Rcpp::Named("mv") = mv,
                            Rcpp::Named("Sv") = Sv, Rcpp::Named("kl") = qs.kl());
}

// A sparse q(u) from its R list (Lam, h: one m x m precision and one m-vector per latent
// column, whitened); NULL gives the prior. Errors on the wrong shape or a precision that
// is not positive definite.
inline SparseQ unwrap_sparse_q(Rcpp::Nullable<Rcpp::List> state, int m, int q) {
  SparseQ qs;
  if (state.isNull()) {
    qs.init_prior(m, q);
    return qs;
  }
  Rcpp::List st(state.get());
  Rcpp::List L = st["Lam"], h = st["h"];
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

}  // namespace augp

#endif
