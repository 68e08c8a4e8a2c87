# The kernel hyperparameters of full-Bayes Gibbs fits (augp_control(sample_hyper =
# TRUE)): their draws in data units, their diagnostics and posterior summary, together
# with the draws of the likelihood's sampled parameters (engine$lik_draws).

#' Posterior draws of the kernel hyperparameters
#'
#' For a Gibbs fit with sampled hyperparameters (`method = "gibbs"`,
#' `augp_control(sample_hyper = TRUE)`), the draws of every kernel
#' hyperparameter, named as [coef()][augp-methods] names them (for example
#' `se.variance`, `se.lengthscale`; per-latent kernels add `[class]`). For a
#' variational fit averaged over its hyperparameters
#' (`augp_control(integrate_hyper)`), the values it averages over, as one
#' chain: draws from the Laplace approximation of their posterior (those
#' the approximation moves; a hyperparameter learned at the edge of its
#' search range stays there).
#' Parameters held fixed by the prior (see [augp_prior()]) are left out. The
#' likelihood's sampled parameters (such as `sigma` of [gaussian_noise()]) follow
#' under their own names. The same draws are part of [as_draws()][augp-draws]
#' and of the trace plot.
#'
#' @param x A fit from [augp()] or [augp_fit()].
#' @param units `"data"` (default: lengthscales and periods in the units of
#'   the inputs, listed per input for isotropic kernels on several inputs) or
#'   `"standardised"` (the scale the sampler and the priors use).
#' @return A `draws_array` (posterior package) with the fit's chains.
#' @seealso [augp_prior()], [augp_control()].
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(40), 20)
#' y <- factor(x[, 1] > 0)
#' fit <- augp_fit(x, y, method = "gibbs",
#'                 control = augp_control(sample_hyper = TRUE, iter = 200, chains = 2,
#'                                        threads = 1))
#' posterior::summarise_draws(hyper_draws(fit))
#' @export
hyper_draws <- function(x, units = c("data", "standardised")) {
  if (!inherits(x, "augp")) stop("`x` must be a fit from augp() or augp_fit().", call. = FALSE)
  units <- check_choice(if (identical(units, "standardized")) "standardised" else units,
                        "units", c("data", "standardised"))
  if (is.null(x$engine$theta) && is.null(x$engine$mixture)) {
    stop(paste0("`x` has no hyperparameter draws: its kernel hyperparameters are point ",
                "estimates. Refit with method = \"gibbs\" and ",
                "control = augp_control(sample_hyper = TRUE), or (a variational fit on the exact GP) ",
                "with control = augp_control(integrate_hyper = TRUE)."), call. = FALSE)
  }
  posterior::as_draws_array(hyper_draws_raw(x, units))
}

# The hyperparameter draws of a full-Bayes fit as an [iteration, chain, variable] array
# (free parameters only), in data or standardised units; for a fit averaged over its
# hyperparameters, its points as one chain (the parameters the Laplace approximation
# moves); NULL for other fits.
hyper_draws_raw <- function(x, units = "data") {
  mx <- x$engine$mixture
  if (!is.null(mx)) {
    nk <- ncol(mx$theta)
    th <- array(mx$theta, c(mx$J, 1L, nk))
    free <- mx$sd[seq_len(nk)] > 0
    # the likelihood parameters the approximation moves
    lk <- which(mx$sd[nk + seq_along(mx$lik_names)] > 0)
    ld <- if (length(lk)) array(mx$lik_values[, lk], c(mx$J, 1L, length(lk)),
                                dimnames = list(NULL, NULL, mx$lik_names[lk]))
  } else {
    th <- x$engine$theta
    if (is.null(th)) return(NULL)
    free <- x$engine$prior_table$code != PRIOR_CODES[["fixed"]]
    ld <- x$engine$lik_draws
  }
  d <- dim(th)
  flat <- matrix(th, d[1] * d[2], d[3])
  conv <- function(theta) {
    k <- engine_set_params(x$kernel, theta)
    hyper_values(x, k, units)
  }
  # draws share values where the Metropolis step rejected: convert each value once
  key <- theta_key(flat)
  first <- !duplicated(key)
  vals <- t(vapply(which(first), function(i) conv(flat[i, ]), conv(flat[1, ])))
  if (length(conv(flat[1, ])) == 1L) vals <- t(vals)
  all_vals <- vals[match(key, key[first]), , drop = FALSE]
  keep <- hyper_free_columns(x, free, units)
  vals <- all_vals[, keep, drop = FALSE]
  names <- colnames(vals)
  # the sampled likelihood parameters (their own units) after the kernel's
  if (!is.null(ld)) {
    vals <- cbind(vals, matrix(ld, d[1] * d[2], dim(ld)[3]))
    names <- c(names, dimnames(ld)[[3]])
  }
  out <- array(vals, c(d[1], d[2], length(names)))
  dimnames(out) <- list(iteration = NULL, chain = NULL, variable = names)
  out
}

# One string per row of a draws x parameters matrix of log hyperparameters, equal for
# equal rows (to the last bit): the draws a Metropolis rejection left at one value.
theta_key <- function(th) apply(th, 1, function(r) paste(format(r, digits = 17), collapse = " "))

# A kernel's hyperparameters as a named vector (coef() names): per-latent kernels give
# name[latent] for every latent function.
hyper_values <- function(x, kernel, units) {
  one <- function(k) if (units == "data") kernel_hyper_data(k, x$scale) else kernel_hyper(k)
  if (!is_kernel_list(kernel)) return(one(kernel))
  nm <- latent_names(x$likelihood, x$levels, x$q)
  unlist(lapply(seq_along(kernel), function(j) {
    v <- one(kernel[[j]])
    stats::setNames(v, sprintf("%s[%s]", names(v), nm[j]))
  }))
}

# Which entries of hyper_values() come from sampled log parameters: with every log
# parameter at 0 and then the free ones at 1, exactly the entries of the free ones
# change (by the factor e; a data-unit lengthscale listed per input repeats its
# parameter's entry).
hyper_free_columns <- function(x, free, units) {
  v1 <- hyper_values(x, engine_set_params(x$kernel, rep(0, length(free))), units)
  v2 <- hyper_values(x, engine_set_params(x$kernel, as.numeric(free)), units)
  abs(v2 / v1 - 1) > 1e-12
}

# Split R-hat and bulk ESS of the sampled log parameters (NULL for other fits).
hyper_diagnostics <- function(eng) {
  th <- eng$theta
  if (is.null(th)) return(NULL)
  free <- which(eng$prior_table$code != PRIOR_CODES[["fixed"]])
  d <- dim(th)
  if (d[1] < MCMC_MIN_DRAWS || !length(free)) return(NULL)
  out <- lapply(free, function(k) {
    m <- matrix(th[, , k], d[1], d[2])
    if (!(diff(range(m)) > 0)) return(c(rhat = NA_real_, ess_bulk = NA_real_))
    suppressWarnings(c(rhat = posterior::rhat(m), ess_bulk = posterior::ess_bulk(m)))
  })
  ld <- eng$lik_draws
  lik_out <- if (!is.null(ld)) lapply(seq_len(dim(ld)[3]), function(k) {
    m <- matrix(ld[, , k], d[1], d[2])
    if (!(diff(range(m)) > 0)) return(c(rhat = NA_real_, ess_bulk = NA_real_))
    suppressWarnings(c(rhat = posterior::rhat(m), ess_bulk = posterior::ess_bulk(m)))
  })
  out <- c(out, lik_out)
  data.frame(variable = c(dimnames(th)[[3]][free], dimnames(ld)[[3]]),
             rhat = vapply(out, `[[`, 0, "rhat"),
             ess_bulk = vapply(out, `[[`, 0, "ess_bulk"), stringsAsFactors = FALSE)
}

# Posterior summary of the hyperparameters (data units) for summary(): median, 5% and
# 95% quantiles, split R-hat and bulk ESS; NULL for other fits.
hyper_summary <- function(x) {
  h <- hyper_draws_raw(x, "data")
  if (is.null(h) || !dim(h)[3]) return(NULL)
  s <- posterior::summarise_draws(posterior::as_draws_array(h), "median",
                                  ~stats::quantile(.x, c(0.05, 0.95), names = FALSE),
                                  "rhat", "ess_bulk")
  out <- data.frame(median = s$median, q5 = s[[3]], q95 = s[[4]], rhat = s$rhat,
                    ess_bulk = s$ess_bulk, row.names = s$variable)
  attr(out, "accept") <- mean(x$engine$accept, na.rm = TRUE)
  out
}

print_hyper_summary <- function(hs, digits) {
  if (is.null(hs)) return(invisible())
  cat(sprintf(paste0("Hyperparameter posterior (sampled; data units; Metropolis acceptance ",
                     "%.2f):\n"), attr(hs, "accept")))
  out <- hs
  out$rhat <- sprintf("%.3f", out$rhat)
  out$ess_bulk <- round(out$ess_bulk)
  print(format(out, digits = digits), quote = FALSE)
  invisible()
}
