// Memory-lean helpers for large designs: column statistics and standardisation in one
// pass per column with no temporaries (R code would copy each column for each
// statistic), and returning the C++ heap's freed memory to the system.

#include <Rcpp.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cmath>
#include <stdexcept>

using Rcpp::List;

namespace {

// x viewed in place: a double matrix (an error otherwise).
const double* design_ptr(SEXP x, R_xlen_t& n, int& p) {
  if (!Rf_isMatrix(x) || TYPEOF(x) != REALSXP) throw std::invalid_argument("x must be a double matrix");
  n = Rf_nrows(x);
  p = Rf_ncols(x);
  return REAL(x);
}

}  // namespace

// Per column of the double matrix x: finite (no NA, NaN or Inf), mean and standard
// deviation (denominator n - 1; NA for a column that is not finite or has one row).
// The mean and the sum of squares are accumulated around the column's first value
// (shifted data), so that columns with a large offset keep their precision.
// [[Rcpp::export(name = ".design_col_stats_cpp")]]
List design_col_stats(SEXP x) {
  try {
    R_xlen_t n = 0;
    int p = 0;
    const double* a = design_ptr(x, n, p);
    Rcpp::LogicalVector finite(p);
    Rcpp::NumericVector mean(p), sd(p);
    for (int j = 0; j < p; ++j) {
      const double* c = a + static_cast<R_xlen_t>(j) * n;
      bool ok = true;
      const double k = n > 0 ? c[0] : 0.0;
      double s = 0.0, ss = 0.0;
      for (R_xlen_t i = 0; i < n; ++i) {
        const double v = c[i];
        if (!std::isfinite(v)) {
          ok = false;
          break;
        }
        const double d = v - k;
        s += d;
        ss += d * d;
      }
      finite[j] = ok;
      if (!ok || n < 1) {
        mean[j] = NA_REAL;
        sd[j] = NA_REAL;
        continue;
      }
      const double nn = static_cast<double>(n);
      mean[j] = k + s / nn;
      sd[j] = n > 1 ? std::sqrt(std::max(0.0, (ss - s * s / nn) / (nn - 1.0))) : NA_REAL;
    }
    return List::create(Rcpp::Named("finite") = finite, Rcpp::Named("mean") = mean,
                        Rcpp::Named("sd") = sd);
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// The columns `cols` (1-based) of x, each centred by `centre` and divided by `scale`
// (one value per selected column), as a new n x length(cols) matrix: the only copy of
// the design the standardisation makes.
// [[Rcpp::export(name = ".design_standardise_cpp")]]
Rcpp::NumericMatrix design_standardise(SEXP x, Rcpp::IntegerVector cols, Rcpp::NumericVector centre,
                                       Rcpp::NumericVector scale) {
  try {
    R_xlen_t n = 0;
    int p = 0;
    const double* a = design_ptr(x, n, p);
    const int k = cols.size();
    if (centre.size() != k || scale.size() != k) throw std::invalid_argument("centre and scale need one value per column");
    Rcpp::NumericMatrix out(static_cast<int>(n), k);
    double* o = out.begin();
    for (int j = 0; j < k; ++j) {
      const int c = cols[j] - 1;
      if (c < 0 || c >= p) throw std::invalid_argument("column index out of range");
      const double* src = a + static_cast<R_xlen_t>(c) * n;
      double* dst = o + static_cast<R_xlen_t>(j) * n;
      const double m = centre[j], s = scale[j];
      for (R_xlen_t i = 0; i < n; ++i) dst[i] = (src[i] - m) / s;
    }
    return out;
  } catch (std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// Give the memory the C++ heap holds but no longer uses back to the system (glibc's
// malloc_trim; a no-op elsewhere). The sparse engine's per-block data are many small
// allocations, which free() keeps in the process after a pass over a large data set.
// [[Rcpp::export(name = ".release_memory_cpp")]]
bool release_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) != 0;
#else
  return false;
#endif
}
