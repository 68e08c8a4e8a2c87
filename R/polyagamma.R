#' The Polya-Gamma distribution
#'
#' Density, distribution function and random generation for the Polya-Gamma
#' distribution \eqn{PG(b, c)}, the law of
#' \deqn{\omega = \frac{1}{2\pi^2}\sum_{k \ge 1} \frac{g_k}{(k - 1/2)^2 + c^2 / (4\pi^2)},
#'   \quad g_k \sim \mathrm{Gamma}(b, 1).}
#' Its mean is \eqn{b \tanh(c/2) / (2c)} (\eqn{b/4} at \eqn{c = 0}).
#'
#' @section Sampler:
#' `method = "exact"` (the default) is exact for every `b > 0` and every real
#' `c`. Below \eqn{b = 13} the integer part of `b` is drawn as a sum of
#' \eqn{PG(1, c)} variates by Devroye's alternating-series rejection method, and a
#' fractional part \eqn{0 < b < 1} by an alternating-series rejection sampler whose
#' envelope is the first term of the small-\eqn{x} series below a switch point and
#' an exponential above it; the accept/reject step uses partial sums that bracket
#' the true density, so no truncation error enters. From \eqn{b = 13} on (integer
#' or not) a rejection sampler built on the saddle-point approximation is used
#' instead: its envelope is a piecewise-exponential hull of the (log-concave)
#' saddle-point density, and each proposal is accepted or rejected by the
#' second-order saddle-point density where its error bound (about
#' \eqn{0.015 / b^2} relative, checked against `dpg()`) decides, and by the exact
#' density otherwise, so the draws are exactly \eqn{PG(b, c)} while the cost per
#' draw does not grow with `b`. From \eqn{b = 10^9} on, where the log density has
#' terms of size `b` whose rounding defeats any accept/reject test, a draw is the
#' Cornish-Fisher quantile of a normal variate to order \eqn{1/b}, built from the exact
#' cumulants: its error, of order \eqn{b^{-3/2}} standard deviations, is below the spacing
#' of double-precision numbers near the draw, so these draws too are exact to the
#' precision in which they are returned. The same holds, and the same expansion is
#' used, for \eqn{b \ge 13} once \eqn{b \max(1, |c| / 3) \ge 10^9}: for large
#' \eqn{|c|}, \eqn{PG(b, c)} is close to a sum of about \eqn{b |c| / 2} unit gamma
#' variables, and there the saddle-point test, too, is defeated by rounding.
#' `method = "normal"` is an opt-in moment-matched normal
#' approximation (redrawn when negative): cheap, but not exact; its
#' Kolmogorov distance to the exact law is about \eqn{0.13 / \sqrt{b}}
#' (measured exactly with `ppg()` in `bench/pg/pg_normal_error.R`; 0.013 at b = 100).
#'
#' Draws are made on `threads` threads in blocks with their own random-number
#' streams, seeded from R's RNG: results depend on [set.seed()] and never on the
#' number of threads.
#'
#' @section Density and distribution function:
#' `dpg()` sums the alternating small-\eqn{x} series in log space in extended
#' precision and checks its rounding error; where cancellation makes it
#' inaccurate (large `b` and `x`) it switches to a large-\eqn{x} expansion or to
#' a Fourier inversion of the characteristic function. `ppg()` integrates the
#' series term by term in closed form, with the same fall-backs and a
#' Gauss-Laguerre rule for far upper tails. Values that could not be computed to
#' about `1e-8` relative accuracy come with a warning.
#'
#' @param x,q Vector of quantiles.
#' @param n Number of draws (or a vector whose length is used, as in [rgamma()]).
#' @param b Shape parameter(s), `b > 0`.
#' @param c Tilting parameter(s), any real number.
#' @param log,log.p If `TRUE`, densities or probabilities are returned on the log scale.
#' @param lower.tail If `TRUE` (default) \eqn{P(\omega \le q)}, otherwise \eqn{P(\omega > q)}.
#' @param method `"exact"` or `"normal"` (see Sampler).
#' @param threads Number of threads; default `getOption("augmentedGP.threads", 2)`.
#' @return `rpg()` a numeric vector of draws, `dpg()` densities, `ppg()` probabilities.
#' @examples
#' set.seed(1)
#' w <- rpg(1000, b = 1, c = 2, threads = 1)
#' c(mean(w), pg_mean(1, 2))
#' dpg(c(0.1, 0.25, 0.5), b = 1.5, c = 1)
#' ppg(0.25, b = 1)
#' @name polyagamma
NULL

pg_recycle <- function(n, ...) {
  args <- list(...)
  lens <- vapply(args, length, integer(1))
  if (any(lens == 0)) {
    stop(sprintf("`%s` must not be empty.", names(args)[lens == 0][1]), call. = FALSE)
  }
  lapply(args, rep_len, length.out = n)
}

#' @rdname polyagamma
#' @export
rpg <- function(n, b, c = 0, method = c("exact", "normal"), threads = NULL) {
  if (length(n) > 1) n <- length(n)
  n <- check_count(n, "n")
  method <- match.arg(method)
  b <- check_positive(b, "b")
  c <- check_numeric(c, "c")
  if (length(b) == 0) stop("`b` must not be empty.", call. = FALSE)
  if (length(c) == 0) stop("`c` must not be empty.", call. = FALSE)
  threads <- resolve_threads(threads)
  res <- .rpg_cpp(n, b, c, if (method == "normal") 1L else 0L, new_seed(), threads)
  if (res$violations > 0) {
    warning(sprintf("rpg: the envelope bound was exceeded %d time(s); please report this.",
                    as.integer(res$violations)), call. = FALSE)
  }
  res$draws
}

pg_eval <- function(x, b, c, is_cdf, lower, log_p, xname) {
  x <- check_numeric(x, xname, allow_na = TRUE, finite = FALSE)
  b <- check_positive(b, "b")
  c <- check_numeric(c, "c")
  n <- max(length(x), length(b), length(c))
  if (length(x) == 0) return(numeric(0))
  v <- pg_recycle(n, x = x, b = b, c = c)
  na <- is.na(v$x)
  xx <- v$x
  xx[na] <- 1
  res <- .dpg_cpp(xx, v$b, v$c, is_cdf, lower, log_p, resolve_threads(NULL))
  out <- res$value
  out[na] <- NA_real_
  bad <- res$inaccurate == 1L & !na
  if (any(bad)) {
    warning(sprintf("%s: %d value(s) could not be computed to 1e-8 relative accuracy.",
                    if (is_cdf) "ppg" else "dpg", sum(bad)), call. = FALSE)
  }
  out
}

#' @rdname polyagamma
#' @export
dpg <- function(x, b, c = 0, log = FALSE) {
  check_flag(log, "log")
  pg_eval(x, b, c, FALSE, TRUE, log, "x")
}

#' @rdname polyagamma
#' @export
ppg <- function(q, b, c = 0, lower.tail = TRUE, log.p = FALSE) {
  check_flag(lower.tail, "lower.tail")
  check_flag(log.p, "log.p")
  pg_eval(q, b, c, TRUE, lower.tail, log.p, "q")
}

#' Exact moments of the Polya-Gamma distribution
#'
#' @inheritParams polyagamma
#' @return `pg_mean()` the mean \eqn{b \tanh(c/2)/(2c)}, `pg_var()` the variance
#'   \eqn{b (\tanh(c/2) - (c/2)\,\mathrm{sech}^2(c/2)) / (2c^3)}, both with their
#'   limits at `c = 0` (series near zero).
#' @examples
#' pg_mean(1, 0)   # 1/4
#' pg_var(1, 0)    # 1/24
#' @export
pg_mean <- function(b, c = 0) {
  b <- check_positive(b, "b")
  c <- check_numeric(c, "c")
  n <- max(length(b), length(c))
  v <- pg_recycle(n, b = b, c = c)
  .pg_moments_cpp(v$b, v$c)[, 1]
}

#' @rdname pg_mean
#' @export
pg_var <- function(b, c = 0) {
  b <- check_positive(b, "b")
  c <- check_numeric(c, "c")
  n <- max(length(b), length(c))
  v <- pg_recycle(n, b = b, c = c)
  .pg_moments_cpp(v$b, v$c)[, 2]
}
