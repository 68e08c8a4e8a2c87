// Test-only exports for the logistic-softmax augmentation: the Poisson and
// negative-multinomial samplers of the C++ core, seeded like the engine.
#include <Rcpp.h>

#include <vector>

#include "negative_multinomial.h"
#include "rng.h"

// [[Rcpp::export(name = ".softmax_poisson_cpp")]]
Rcpp::NumericVector softmax_poisson_cpp(double mu, int n, Rcpp::NumericVector seed) {
  if (!(mu >= 0) || n < 0 || seed.size() < 2) Rcpp::stop("bad arguments");
  augp::Rng rng(augp::combine_seed(seed[0], seed[1]), 0);
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = rng.poisson(mu);
  return out;
}

// n draws of NM(r, p) (rows), p the q success probabilities with sum(p) < 1.
// [[Rcpp::export(name = ".softmax_nm_cpp")]]
Rcpp::NumericMatrix softmax_nm_cpp(double r, Rcpp::NumericVector p, int n, Rcpp::NumericVector seed) {
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
