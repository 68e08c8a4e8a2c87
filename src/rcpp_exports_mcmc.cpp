// Convergence diagnostics of Gibbs draws: rank-normalised split R-hat and bulk effective
// sample size (Vehtari, Gelman, Simpson, Carpenter and Buerkner 2021), the definitions
// of posterior::rhat() and posterior::ess_bulk(), for many quantities in one call.
//
// For one quantity with S iterations in each of M chains:
//   split: each chain's first floor(S / 2) and last floor(S / 2) iterations become two
//     chains (the middle iteration of an odd S is dropped);
//   z-scale: z = qnorm((r - 3/8) / (N + 1/4)), r the average-tie rank among all N draws;
//   R-hat basic: sqrt((B / W + n - 1) / n), B = n var(chain means), W = mean chain
//     variance, n iterations per (split) chain;
//   R-hat = max(R-hat basic of z, R-hat basic of the z-scaled folded draws |x - median|);
//   bulk ESS: Geyer's initial monotone sequence on the averaged autocovariances of z
//     (autocovariance at lag t: sum_i y_i y_(i+t) / n for the centred chain y, as
//     posterior's FFT gives), with tau capped below at 1 / log10(N).
// A quantity that is constant (max - min below the double epsilon) or not finite gets NA.
//
// The quantities diagnosed in Gibbs fits are the response means at some training points,
// computed here from the latent draws (response_points()); the diagnostics of a fit need
// them only inside C++, so they are never an R vector then.
#include <RcppEigen.h>

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "adapter.h"
#include "likelihood.h"
#include "parallel.h"

namespace {

// qnorm((r - 3/8) / (N + 1/4)) for the average ranks r = 1, 1.5, 2, ..., N (entry
// 2 r - 2): the z-scores of every quantity with N draws, computed once.
std::vector<double> z_table(int N) {
  std::vector<double> t(2 * N - 1);
  const double denom = N - 2.0 * 0.375 + 1.0;
  for (int k = 0; k < 2 * N - 1; ++k)
    t[k] = R::qnorm((1.0 + 0.5 * k - 0.375) / denom, 0.0, 1.0, 1, 0);
  return t;
}

// z-scaled ranks of x (length N) into z; table: z_table(N).
void z_scale(const std::vector<double>& x, std::vector<double>& z,
             std::vector<std::pair<double, int>>& srt, const std::vector<double>& table) {
  const int N = static_cast<int>(x.size());
  srt.resize(N);
  for (int i = 0; i < N; ++i) srt[i] = {x[i], i};
  std::sort(srt.begin(), srt.end());
  z.resize(N);
  for (int i = 0; i < N;) {
    int j = i + 1;
    while (j < N && srt[j].first == srt[i].first) ++j;
    // the average of the ranks i + 1, ..., j is (i + 1 + j) / 2: entry i + j - 1
    const double zr = table[i + j - 1];
    for (int k = i; k < j; ++k) z[srt[k].second] = zr;
    i = j;
  }
}

// z-scaled ranks of the folded draws fold[i] = |x[i] - med| into z, from srt, x sorted by
// z_scale(): rounding is monotone, so |x - med| does not increase along the draws below
// med (in their sorted order) and does not decrease along those at or above it, and
// merging the two runs sorts the folded draws in O(N), with the same ties as a sort.
void z_scale_folded(const std::vector<double>& fold, double med, std::vector<double>& z,
                    const std::vector<std::pair<double, int>>& srt,
                    std::vector<int>& order, const std::vector<double>& table) {
  const int N = static_cast<int>(fold.size());
  // draws below med: sorted positions [0, b), folded values increasing from b - 1 down
  const int b = static_cast<int>(std::lower_bound(srt.begin(), srt.end(), std::make_pair(med, -1)) -
                                 srt.begin());
  order.resize(N);
  int lo = b - 1, hi = b;
  for (int k = 0; k < N; ++k) {
    if (hi >= N || (lo >= 0 && fold[srt[lo].second] <= fold[srt[hi].second])) {
      order[k] = srt[lo--].second;
    } else {
      order[k] = srt[hi++].second;
    }
  }
  z.resize(N);
  for (int i = 0; i < N;) {
    int j = i + 1;
    while (j < N && fold[order[j]] == fold[order[i]]) ++j;
    const double zr = table[i + j - 1];
    for (int k = i; k < j; ++k) z[order[k]] = zr;
    i = j;
  }
}

// R-hat basic of the m chains of length n stored one after another in z.
double rhat_basic(const std::vector<double>& z, int n, int m) {
  std::vector<double> mean(m), var(m);
  for (int c = 0; c < m; ++c) {
    const double* p = z.data() + static_cast<long>(c) * n;
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += p[i];
    mean[c] = s / n;
    double v = 0.0;
    for (int i = 0; i < n; ++i) v += (p[i] - mean[c]) * (p[i] - mean[c]);
    var[c] = v / (n - 1);
  }
  const double mm = std::accumulate(mean.begin(), mean.end(), 0.0) / m;
  double b = 0.0;
  for (int c = 0; c < m; ++c) b += (mean[c] - mm) * (mean[c] - mm);
  b = n * b / (m - 1);
  const double w = std::accumulate(var.begin(), var.end(), 0.0) / m;
  return std::sqrt((b / w + n - 1.0) / n);
}

// Bulk ESS of the m chains of length n >= 3 stored one after another in z.
double ess_basic(const std::vector<double>& z, int n, int m) {
  std::vector<double> y(z.size()), mean(m), var0(m);
  for (int c = 0; c < m; ++c) {
    const double* p = z.data() + static_cast<long>(c) * n;
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += p[i];
    mean[c] = s / n;
    double ss = 0.0;
    for (int i = 0; i < n; ++i) {
      y[static_cast<long>(c) * n + i] = p[i] - mean[c];
      ss += (p[i] - mean[c]) * (p[i] - mean[c]);
    }
    var0[c] = ss;  // zero: posterior's autocovariance is zero at every lag
  }
  // averaged autocovariance at lag t
  auto acov = [&](int t) {
    double total = 0.0;
    for (int c = 0; c < m; ++c) {
      if (!(var0[c] > 0.0)) continue;
      const double* p = y.data() + static_cast<long>(c) * n;
      double s = 0.0;
      for (int i = 0; i + t < n; ++i) s += p[i] * p[i + t];
      total += s / n;
    }
    return total / m;
  };
  const double acov0 = acov(0);
  const double mean_var = acov0 * n / (n - 1.0);
  double var_plus = mean_var * (n - 1.0) / n;
  if (m > 1) {
    const double mm = std::accumulate(mean.begin(), mean.end(), 0.0) / m;
    double v = 0.0;
    for (int c = 0; c < m; ++c) v += (mean[c] - mm) * (mean[c] - mm);
    var_plus += v / (m - 1);
  }
  std::vector<double> rho(n, 0.0);
  int t = 0;
  double even = 1.0;
  rho[0] = even;
  double odd = 1.0 - (mean_var - acov(1)) / var_plus;
  rho[1] = odd;
  while (t < n - 5 && !std::isnan(even + odd) && even + odd > 0.0) {
    t += 2;
    even = 1.0 - (mean_var - acov(t)) / var_plus;
    odd = 1.0 - (mean_var - acov(t + 1)) / var_plus;
    if (even + odd >= 0.0) {
      rho[t] = even;
      rho[t + 1] = odd;
    }
  }
  const int max_t = t;
  if (even > 0.0) rho[max_t] = even;
  // the initial monotone sequence
  t = 0;
  while (t <= max_t - 4) {
    t += 2;
    if (rho[t] + rho[t + 1] > rho[t - 2] + rho[t - 1]) {
      rho[t] = (rho[t - 2] + rho[t - 1]) / 2.0;
      rho[t + 1] = rho[t];
    }
  }
  const double N = static_cast<double>(n) * m;
  // posterior sums rho over 1:max_t (1-based), which for max_t = 0 is rho[1]
  double tau = -1.0 + rho[max_t];
  for (int k = 0; k < std::max(max_t, 1); ++k) tau += 2.0 * rho[k];
  tau = std::max(tau, 1.0 / std::log10(N));
  return N / tau;
}

// The response means of Gibbs draws at training points: latent draws [iterations,
// chains, n * q] (latent column j of point i at i + n j, 0-based) read in place; pts are
// the points (1-based). Fills out (length S r R, S = iterations x chains, r = points) as
// an array [S, r, R], point fastest, each draw with its own likelihood parameters when
// lik has param_draws; returns R.
int response_points(const Rcpp::List& lik, const Rcpp::NumericVector& draws,
                    const Rcpp::IntegerVector& pts, std::vector<double>& out) {
  std::unique_ptr<augp::Likelihood> L = augp::likelihood_from_list(lik)->subset({});
  const augp::ParamDraws pd = augp::param_draws_from_list(lik);
  const Rcpp::IntegerVector d = draws.attr("dim");
  const int q = L->n_latent(), R = L->n_response(), r = pts.size();
  if (d.size() != 3 || d[2] % q != 0)
    throw std::invalid_argument("latent draws must be an [iterations, chains, n * q] array");
  const long S = static_cast<long>(d[0]) * d[1], n = d[2] / q;
  for (int i = 0; i < r; ++i)
    if (pts[i] < 1 || pts[i] > n) throw std::invalid_argument("a point is out of range");
  if (!pd.empty() && pd.values.rows() != S)
    throw std::invalid_argument("param_draws needs one row of parameters per latent draw");
  out.assign(S * r * R, 0.0);
  const double* a = draws.begin();
  Eigen::MatrixXd F(r, q);
  for (long s = 0; s < S; ++s) {
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < r; ++i) F(i, j) = a[s + S * (pts[i] - 1 + n * j)];
    pd.apply(*L, static_cast<int>(s));
    const Eigen::MatrixXd M = L->response_mean(F);
    for (int k = 0; k < R; ++k)
      for (int i = 0; i < r; ++i) out[s + S * (i + static_cast<long>(r) * k)] = M(i, k);
  }
  return R;
}

// Split R-hat and bulk ESS (see the top of this file) of the Q quantities in all, an
// array [S, M, Q], into a Q x 2 matrix. The quantities are independent items spread over
// `threads` threads (parallel_items: no R API in the workers, which write only their own
// quantity's entries), so the result does not depend on threads.
Rcpp::NumericMatrix rhat_ess(const double* all, int S, int M, int Q, int threads) {
  Rcpp::NumericMatrix out(Q, 2);
  const int half = S / 2;
  const bool split = S > 1;
  const int n = split ? half : S, m = split ? 2 * M : M;
  const int N = n * m;
  const std::vector<double> table = z_table(N);
  // per quantity: R-hat and ESS, and whether each is NA
  std::vector<double> rhat(Q), ess(Q);
  std::vector<char> rhat_na(Q, 0), ess_na(Q, 0);
  const int nthreads = std::max(1, std::min(threads, Q / 8));
  augp::parallel_items(Q, nthreads, [&](int q) {
    std::vector<double> x(N), z(N), fold(N), tmp;
    std::vector<std::pair<double, int>> idx;
    std::vector<int> order;
    const double* p = all + static_cast<long>(q) * S * M;
    // split chains, one after another: chain c's halves are chains 2c and 2c + 1
    bool finite = true;
    for (int c = 0; c < M; ++c)
      for (int i = 0; i < n; ++i) {
        const double a = p[static_cast<long>(c) * S + i];
        const double b = split ? p[static_cast<long>(c) * S + (S - half) + i] : a;
        x[static_cast<long>(2 * c) * n + i] = a;
        if (split) x[static_cast<long>(2 * c + 1) * n + i] = b;
        finite = finite && std::isfinite(a) && std::isfinite(b);
      }
    const auto mm = std::minmax_element(x.begin(), x.end());
    if (!finite || !(std::fabs(*mm.second - *mm.first) >= DBL_EPSILON)) {
      rhat_na[q] = ess_na[q] = 1;
      return;
    }
    z_scale(x, z, idx, table);
    const double rb = rhat_basic(z, n, m);
    if (n >= 3) ess[q] = ess_basic(z, n, m);
    else ess_na[q] = 1;
    // folded draws |x - median|, the median of all S M draws (before the split)
    tmp.assign(p, p + static_cast<long>(S) * M);
    const long T = static_cast<long>(S) * M, h = T / 2;
    std::nth_element(tmp.begin(), tmp.begin() + h, tmp.end());
    double med = tmp[h];
    if (T % 2 == 0) med = 0.5 * (med + *std::max_element(tmp.begin(), tmp.begin() + h));
    for (int i = 0; i < N; ++i) fold[i] = std::fabs(x[i] - med);
    const auto fm = std::minmax_element(fold.begin(), fold.end());
    if (std::fabs(*fm.second - *fm.first) >= DBL_EPSILON) {
      z_scale_folded(fold, med, z, idx, order, table);
      const double rt = rhat_basic(z, n, m);
      if (std::isnan(rt)) rhat_na[q] = 1;
      else rhat[q] = std::max(rb, rt);
    } else {
      rhat_na[q] = 1;
    }
  });
  for (int q = 0; q < Q; ++q) {
    out(q, 0) = rhat_na[q] ? NA_REAL : rhat[q];
    out(q, 1) = ess_na[q] ? NA_REAL : ess[q];
  }
  return out;
}

}  // namespace

// draws: array [iterations, chains, quantities]. Returns a quantities x 2 matrix of
// split R-hat and bulk ESS, the quantities over `threads` threads.
// [[Rcpp::export(name = ".mcmc_rhat_ess_cpp")]]
Rcpp::NumericMatrix mcmc_rhat_ess_cpp(Rcpp::NumericVector draws, int threads = 1) {
  const Rcpp::IntegerVector d = draws.attr("dim");
  if (d.size() != 3) Rcpp::stop("draws must be an array [iterations, chains, quantities]");
  return rhat_ess(draws.begin(), d[0], d[1], d[2], threads);
}

// The response means of Gibbs latent draws [iterations, chains, n * q] at the training
// points pts (1-based): an array [iterations, chains, length(pts) * R], point fastest
// (see response_points()).
// [[Rcpp::export(name = ".lik_response_mean_points_cpp")]]
Rcpp::NumericVector lik_response_mean_points_cpp(Rcpp::List lik, Rcpp::NumericVector draws,
                                                 Rcpp::IntegerVector pts) {
  try {
    std::vector<double> P;
    const int R = response_points(lik, draws, pts, P);
    const Rcpp::IntegerVector d = draws.attr("dim");
    Rcpp::NumericVector out(P.begin(), P.end());
    out.attr("dim") = Rcpp::IntegerVector::create(d[0], d[1], pts.size() * R);
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Split R-hat and bulk ESS of the response means at the training points pts (1-based)
// of Gibbs latent draws [iterations, chains, n * q]: the values of
// .mcmc_rhat_ess_cpp(.lik_response_mean_points_cpp(lik, draws, pts), threads), without
// the response means as an R array in between.
// [[Rcpp::export(name = ".mcmc_response_rhat_ess_cpp")]]
Rcpp::NumericMatrix mcmc_response_rhat_ess_cpp(Rcpp::List lik, Rcpp::NumericVector draws,
                                               Rcpp::IntegerVector pts, int threads = 1) {
  try {
    std::vector<double> P;
    const int R = response_points(lik, draws, pts, P);
    const Rcpp::IntegerVector d = draws.attr("dim");
    return rhat_ess(P.data(), d[0], d[1], pts.size() * R, threads);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}
