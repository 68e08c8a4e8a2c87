// Adapter for the GO annotation model: converts R lists to the plain structs of
// go_annotator.h, runs parallel sections through RcppParallel, and turns C++
// errors into R errors. Only this file includes Rcpp for the GO model.
#include <Rcpp.h>
#include <RcppParallel.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "go_annotator.h"
#include "rng.h"

using namespace Rcpp;

namespace {

struct ThreadRunner {
  int threads;
  void operator()(std::size_t n, const augp::go::Body& body) const {
    if (n == 0) return;
    if (threads <= 1 || n == 1) {
      body(0, n);
      return;
    }
    struct W : public RcppParallel::Worker {
      const augp::go::Body* f;
      void operator()(std::size_t b, std::size_t e) { (*f)(b, e); }
    } w;
    w.f = &body;
    RcppParallel::parallelFor(0, n, w, 1, threads);
  }
};

// dgCMatrix-like list(p, i, x) -> Csc (0-based indices already).
augp::go::Csc to_csc(const List& m) {
  augp::go::Csc out;
  IntegerVector p = m["p"];
  IntegerVector i = m["i"];
  NumericVector x = m["x"];
  out.p.assign(p.begin(), p.end());
  out.idx.assign(i.begin(), i.end());
  out.val.assign(x.begin(), x.end());
  return out;
}

augp::go::Corpus to_corpus(const List& data) {
  augp::go::Corpus c;
  c.n_terms = as<int>(data["n_terms"]);
  c.n_words = as<int>(data["n_words"]);
  c.sentences = to_csc(data["sentences"]);
  c.doc_authors = to_csc(data["doc_authors"]);
  c.definitions = to_csc(data["definitions"]);
  NumericVector dp = data["doc_ptr"];
  c.doc_ptr.assign(dp.begin(), dp.end());
  return c;
}

List resp_to_list(const augp::go::Resp& r) {
  NumericVector p(r.p.begin(), r.p.end());
  IntegerVector g(r.g.begin(), r.g.end());
  NumericVector x(r.r.begin(), r.r.end());
  IntegerVector top(r.top.begin(), r.top.end());
  NumericVector top_r(r.top_r.begin(), r.top_r.end());
  return List::create(_["p"] = p, _["g"] = g, _["r"] = x, _["top"] = top,
                      _["top_r"] = top_r, _["loglik"] = r.loglik, _["n_full"] = r.n_full);
}

// Profiles as rows (p, g, v) of increments plus one floor per profile.
List theta_to_list(const std::vector<augp::go::Profile>& theta) {
  std::vector<double> p{0}, fl;
  std::vector<int> g;
  std::vector<double> v;
  for (const auto& row : theta) {
    fl.push_back(row.floor);
    for (const auto& e : row.inc) {
      g.push_back(e.g);
      v.push_back(e.v);
    }
    p.push_back(static_cast<double>(g.size()));
  }
  return List::create(_["p"] = NumericVector(p.begin(), p.end()),
                      _["g"] = IntegerVector(g.begin(), g.end()),
                      _["v"] = NumericVector(v.begin(), v.end()),
                      _["floor"] = NumericVector(fl.begin(), fl.end()));
}

// The inverse of theta_to_list (rows sorted by term; non-positive increments dropped).
std::vector<augp::go::Profile> list_to_theta(const List& th) {
  NumericVector p = th["p"];
  IntegerVector g = th["g"];
  NumericVector v = th["v"];
  NumericVector fl = th["floor"];
  if (fl.size() + 1 != p.size()) throw std::invalid_argument("profile floors do not match rows");
  std::vector<augp::go::Profile> out(p.size() - 1);
  for (R_xlen_t a = 0; a + 1 < p.size(); ++a) {
    out[a].floor = fl[a];
    for (std::size_t k = static_cast<std::size_t>(p[a]); k < static_cast<std::size_t>(p[a + 1]);
         ++k) {
      if (v[k] > 0.0) out[a].inc.push_back({g[k], v[k]});
    }
  }
  return out;
}

augp::go::Control to_control(const List& ctl) {
  augp::go::Control c;
  c.pseudocount = as<double>(ctl["pseudocount"]);
  c.author_pseudocount = as<double>(ctl["author_pseudocount"]);
  if (ctl.containsElementNamed("auto_author_pc")) {
    c.auto_author_pc = as<bool>(ctl["auto_author_pc"]);
    NumericVector range = ctl["author_pc_range"];
    c.author_pc_lo = range[0];
    c.author_pc_hi = range[1];
  }
  if (ctl.containsElementNamed("keep_heldout")) c.keep_heldout = as<bool>(ctl["keep_heldout"]);
  if (ctl.containsElementNamed("reselect_author_pc")) {
    c.reselect_author_pc = as<bool>(ctl["reselect_author_pc"]);
  }
  c.hard = as<bool>(ctl["hard"]);
  c.max_iter = as<int>(ctl["max_iter"]);
  c.tol = as<double>(ctl["tol"]);
  c.truncate = as<double>(ctl["truncate"]);
  if (ctl.containsElementNamed("background")) c.background = as<double>(ctl["background"]);
  if (ctl.containsElementNamed("skip_min")) c.skip_min = as<int>(ctl["skip_min"]);
  NumericVector seed = ctl["seed"];
  c.seed = augp::combine_seed(seed[0], seed[1]);
  return c;
}

}  // namespace

// [[Rcpp::export(name = ".go_em_cpp")]]
List go_em_cpp(List data, List control) {
  augp::go::Fit fit;
  const int threads = as<int>(control["threads"]);
  const int n_profiles = as<int>(data["n_profiles"]);
  try {
    const augp::go::Corpus c = to_corpus(data);
    const augp::go::Control ctl = to_control(control);
    fit = augp::go::fit_em(c, n_profiles, ctl, ThreadRunner{threads},
                           [](int) { Rcpp::checkUserInterrupt(); });
  } catch (Rcpp::internal::InterruptedException&) {
    throw;
  } catch (std::exception& e) {
    stop(std::string("go_annotator: ") + e.what());
  }
  const augp::go::Phi& phi = fit.phi;
  NumericVector wp(phi.wp.begin(), phi.wp.end());
  List phi_list = List::create(
      _["wp"] = wp, _["g"] = IntegerVector(phi.g.begin(), phi.g.end()),
      _["count"] = NumericVector(phi.count.begin(), phi.count.end()),
      _["logpz"] = NumericVector(phi.logpz.begin(), phi.logpz.end()),
      _["l1p"] = NumericVector(phi.l1p.begin(), phi.l1p.end()),
      _["lambda"] = phi.lambda,
      _["beta"] = NumericVector(phi.beta.begin(), phi.beta.end()),
      _["uniform"] = IntegerVector(phi.uniform.begin(), phi.uniform.end()),
      _["lu"] = NumericVector(phi.lu.begin(), phi.lu.end()),
      _["log_prior"] = phi.log_prior);
  const std::vector<double> pi = augp::go::term_distribution(fit.resp, as<int>(data["n_terms"]));
  const augp::go::HeldOut& ho = fit.heldout;
  std::vector<int> ho_sent(ho.sent.begin(), ho.sent.end());
  List heldout = List::create(
      _["c"] = NumericVector(ho.c.begin(), ho.c.end()),
      _["value"] = NumericVector(ho.value.begin(), ho.value.end()),
      _["ptr"] = NumericVector(ho.ptr.begin(), ho.ptr.end()),
      _["sentence"] = IntegerVector(ho_sent.begin(), ho_sent.end()),
      _["fold"] = IntegerVector(ho.fold.begin(), ho.fold.end()),
      _["rho"] = NumericVector(ho.rho.begin(), ho.rho.end()),
      _["n_other"] = NumericVector(ho.n_other.begin(), ho.n_other.end()),
      _["ls0"] = NumericVector(ho.ls0.begin(), ho.ls0.end()));
  return List::create(
      _["theta"] = theta_to_list(fit.theta), _["phi"] = phi_list,
      _["resp"] = resp_to_list(fit.resp),
      _["baseline"] = IntegerVector(fit.baseline.begin(), fit.baseline.end()),
      _["objective"] = NumericVector(fit.objective.begin(), fit.objective.end()),
      _["n_changed"] = NumericVector(fit.n_changed.begin(), fit.n_changed.end()),
      _["seconds"] = NumericVector(fit.seconds.begin(), fit.seconds.end()),
      _["n_full"] = NumericVector(fit.n_full.begin(), fit.n_full.end()),
      _["converged"] = fit.converged, _["iterations"] = fit.iterations,
      _["pi"] = NumericVector(pi.begin(), pi.end()),
      _["objective_prev"] = NumericVector(fit.objective_prev.begin(), fit.objective_prev.end()),
      _["author_pc"] = NumericVector(fit.author_pc.begin(), fit.author_pc.end()),
      _["heldout"] = heldout);
}

// E-step for new documents with given profiles and phi (prediction).
// [[Rcpp::export(name = ".go_estep_cpp")]]
List go_estep_cpp(List data, List profiles, List phi_list, List control) {
  augp::go::Resp r;
  const int threads = as<int>(control["threads"]);
  try {
    const augp::go::Corpus c = to_corpus(data);
    augp::go::Control ctl = to_control(control);
    ctl.hard = false;
    augp::go::Phi phi;
    NumericVector wp = phi_list["wp"];
    IntegerVector g = phi_list["g"];
    NumericVector cnt = phi_list["count"];
    NumericVector logpz = phi_list["logpz"];
    phi.wp.assign(wp.begin(), wp.end());
    phi.g.assign(g.begin(), g.end());
    phi.count.assign(cnt.begin(), cnt.end());
    phi.logpz.assign(logpz.begin(), logpz.end());
    if (phi_list.containsElementNamed("l1p")) {
      NumericVector l1p = phi_list["l1p"];
      phi.l1p.assign(l1p.begin(), l1p.end());
    } else {
      phi.l1p.resize(phi.count.size());
      for (std::size_t e = 0; e < phi.count.size(); ++e) {
        phi.l1p[e] = std::log1p(phi.count[e] / ctl.pseudocount);
      }
    }
    if (phi_list.containsElementNamed("uniform")) {
      IntegerVector u = phi_list["uniform"];
      NumericVector lu = phi_list["lu"];
      phi.uniform.assign(u.begin(), u.end());
      phi.lu.assign(lu.begin(), lu.end());
      for (int x : u) phi.n_uniform += x != 0 ? 1 : 0;
    }
    const std::vector<augp::go::Profile> th = list_to_theta(profiles);
    r = augp::go::e_step(c, phi, th, ctl, ThreadRunner{threads});
  } catch (std::exception& e) {
    stop(std::string("go_annotator: ") + e.what());
  }
  return resp_to_list(r);
}
