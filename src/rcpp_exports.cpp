// Adapter layer between R and the C++ core: converts R vectors to plain data,
// runs the parallel sections, and turns C++ errors into R errors. The core
// files (polyagamma.*, kernel.*) never include Rcpp.
#include <Rcpp.h>
#include <RcppParallel.h>

#include <algorithm>
#include <vector>

#include "polyagamma.h"
#include "rng.h"

using namespace Rcpp;

namespace {

constexpr std::size_t PG_BLOCK = 512;  // draws per random-number stream

struct RpgWorker : public RcppParallel::Worker {
  const double* b;
  const double* c;
  double* out;
  std::size_t n, nb, nc;
  int method;
  std::uint64_t seed;

  void operator()(std::size_t begin, std::size_t end) {
    for (std::size_t blk = begin; blk < end; ++blk) {
      augp::Rng rng(seed, blk);
      // method 0: automatic exact sampler; 2, 3 and 4 force its engines 1, 2 and 3 (tests, benchmarks)
      augp::pg::ExactSampler exact(method >= 2 ? method - 1 : 0);
      const std::size_t lo = blk * PG_BLOCK, hi = std::min(n, lo + PG_BLOCK);
      for (std::size_t i = lo; i < hi; ++i) {
        const double bi = b[i % nb], ci = c[i % nc];
        out[i] = (method == 1) ? augp::pg::draw_normal(bi, ci, rng)
                               : exact(bi, ci, rng);
      }
    }
  }
};

struct DpgWorker : public RcppParallel::Worker {
  const double *x, *b, *c;
  double* out;
  int* bad;
  bool is_cdf, lower, log_p;

  void operator()(std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      bool ok = true;
      if (is_cdf) {
        out[i] = augp::pg::cdf(x[i], b[i], c[i], lower, log_p, &ok);
      } else {
        const double l = augp::pg::log_density(x[i], b[i], c[i], &ok);
        out[i] = log_p ? l : std::exp(l);
      }
      bad[i] = ok ? 0 : 1;
    }
  }
};

}  // namespace

// [[Rcpp::export(name = ".rpg_cpp")]]
List rpg_cpp(double n, NumericVector b, NumericVector c, int method, NumericVector seed,
             int threads) {
  const std::size_t nn = static_cast<std::size_t>(n);
  NumericVector out(nn);
  if (nn == 0) return List::create(_["draws"] = out, _["violations"] = 0);
  // Build the fractional-b envelope table on the main thread before any worker needs it.
  augp::pg::frac_const(0.5);
  const long before =
      augp::pg::envelope_violations().load() + augp::pg::saddle_violations().load();
  RpgWorker w;
  w.b = b.begin();
  w.c = c.begin();
  w.out = out.begin();
  w.n = nn;
  w.nb = b.size();
  w.nc = c.size();
  w.method = method;
  w.seed = augp::combine_seed(seed[0], seed[1]);
  const std::size_t nblocks = (nn + PG_BLOCK - 1) / PG_BLOCK;
  // Work in chunks so that interrupts are checked on the main thread between them.
  const std::size_t chunk = std::max<std::size_t>(1, 64 * std::max(1, threads));
  for (std::size_t s = 0; s < nblocks; s += chunk) {
    const std::size_t e = std::min(nblocks, s + chunk);
    RcppParallel::parallelFor(s, e, w, 1, threads);
    Rcpp::checkUserInterrupt();
  }
  const long viol = augp::pg::envelope_violations().load() +
                    augp::pg::saddle_violations().load() - before;
  return List::create(_["draws"] = out, _["violations"] = static_cast<double>(viol));
}

// [[Rcpp::export(name = ".dpg_cpp")]]
List dpg_cpp(NumericVector x, NumericVector b, NumericVector c, bool is_cdf, bool lower,
             bool log_p, int threads) {
  const std::size_t n = x.size();
  NumericVector out(n);
  IntegerVector bad(n);
  DpgWorker w;
  w.x = x.begin();
  w.b = b.begin();
  w.c = c.begin();
  w.out = out.begin();
  w.bad = bad.begin();
  w.is_cdf = is_cdf;
  w.lower = lower;
  w.log_p = log_p;
  const std::size_t chunk = 4096;
  for (std::size_t s = 0; s < n; s += chunk) {
    RcppParallel::parallelFor(s, std::min(n, s + chunk), w, 64, threads);
    Rcpp::checkUserInterrupt();
  }
  return List::create(_["value"] = out, _["inaccurate"] = bad);
}

// Exact moments, exposed for tests and for the mean-field updates.
// [[Rcpp::export(name = ".pg_moments_cpp")]]
NumericMatrix pg_moments_cpp(NumericVector b, NumericVector c) {
  const R_xlen_t n = b.size();
  NumericMatrix out(n, 2);
  for (R_xlen_t i = 0; i < n; ++i) {
    out(i, 0) = augp::pg::mean(b[i], c[i]);
    out(i, 1) = augp::pg::var(b[i], c[i]);
  }
  return out;
}

// Envelope constants for fractional b (for tests of the sampler's internals).
// [[Rcpp::export(name = ".pg_frac_const_cpp")]]
NumericVector pg_frac_const_cpp(double b) {
  const augp::pg::FracConst fc = augp::pg::frac_const(b);
  return NumericVector::create(_["t"] = fc.t, _["logM"] = fc.logM);
}
