// Exports for the logistic-softmax augmentation: the Poisson and
// negative-multinomial samplers of the C++ core, seeded like the engine (for the
// tests), and Monte Carlo class probabilities for predictions.
#include <Rcpp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "negative_multinomial.h"
#include "parallel.h"
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

// Monte Carlo class probabilities under independent Gaussian latents: for row i,
// the mean and standard deviation over the S draws f_j = m_ij + s_ij Z_tj (Z: S x q,
// the same standard normals for every row) of the class probabilities of the
// logistic-softmax link (type 0: p_k = theta_k sigma(f_k) / sum_l theta_l sigma(f_l),
// with f_K = 0 when bijective) or of stick breaking (type 1: pi_SB(f), K = q + 1).
// Rows are independent, so blocks of rows run in parallel with identical results
// for any thread count.
// [[Rcpp::export(name = ".multi_prob_mc_cpp")]]
Rcpp::List multi_prob_mc_cpp(Rcpp::NumericMatrix m, Rcpp::NumericMatrix s, Rcpp::NumericMatrix Z,
                             int type, Rcpp::NumericVector theta, bool bijective, int threads = 1) {
  const int n = m.nrow(), q = m.ncol(), S = Z.nrow();
  if (s.nrow() != n || s.ncol() != q || Z.ncol() != q || S < 1)
    Rcpp::stop("multi_prob_mc: m, s and Z do not conform");
  const int K = (type == 1 || bijective) ? q + 1 : q;
  if (type == 0 && theta.size() != K) Rcpp::stop("multi_prob_mc: theta needs one weight per class");
  // plain copies: the workers must not touch R objects
  const std::vector<double> mv(m.begin(), m.end()), sv(s.begin(), s.end()), zv(Z.begin(), Z.end());
  const std::vector<double> th(theta.begin(), theta.end());
  std::vector<double> mean_out(static_cast<std::size_t>(n) * K), sd_out(mean_out.size());
  const int block = 32;
  const int nblocks = (n + block - 1) / block;
  augp::parallel_items(nblocks, threads < 1 ? 1 : threads, [&](int b) {
    std::vector<double> P(static_cast<std::size_t>(S) * K), f(q);
    const int i_end = std::min(n, (b + 1) * block);
    for (int i = b * block; i < i_end; ++i) {
      for (int t = 0; t < S; ++t) {
        double* p = &P[static_cast<std::size_t>(t) * K];
        for (int j = 0; j < q; ++j)
          f[j] = mv[static_cast<std::size_t>(j) * n + i] +
                 sv[static_cast<std::size_t>(j) * n + i] * zv[static_cast<std::size_t>(j) * S + t];
        if (type == 1) {
          double rest = 1.0;  // the stick left
          for (int j = 0; j < q; ++j) {
            const double e = std::exp(-std::fabs(f[j]));
            const double hi = 1.0 / (1.0 + e), lo = e / (1.0 + e);  // sigma(|f|), sigma(-|f|)
            p[j] = rest * (f[j] >= 0 ? hi : lo);
            rest *= f[j] >= 0 ? lo : hi;
          }
          p[q] = rest;
        } else {
          double tot = 0.0;
          for (int k = 0; k < K; ++k) {
            const double fk = k < q ? f[k] : 0.0;
            const double e = std::exp(-std::fabs(fk));
            p[k] = th[k] * (fk >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e));
            tot += p[k];
          }
          for (int k = 0; k < K; ++k) p[k] /= tot;
        }
      }
      for (int k = 0; k < K; ++k) {
        double a = 0.0;
        for (int t = 0; t < S; ++t) a += P[static_cast<std::size_t>(t) * K + k];
        const double mu = a / S;
        double v = 0.0;
        for (int t = 0; t < S; ++t) {
          const double d = P[static_cast<std::size_t>(t) * K + k] - mu;
          v += d * d;
        }
        mean_out[static_cast<std::size_t>(k) * n + i] = mu;
        sd_out[static_cast<std::size_t>(k) * n + i] = S > 1 ? std::sqrt(v / (S - 1)) : 0.0;
      }
    }
  });
  Rcpp::NumericMatrix mean(n, K), sd(n, K);
  std::copy(mean_out.begin(), mean_out.end(), mean.begin());
  std::copy(sd_out.begin(), sd_out.end(), sd.begin());
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("sd") = sd);
}
