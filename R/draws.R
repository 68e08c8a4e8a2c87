#' Posterior draws of a fit in posterior and coda formats
#'
#' Convert the draws of the latent functions of a fit to the formats of the
#' posterior package, for its summaries and diagnostics
#' (`posterior::summarise_draws(fit)` works directly), and of coda. The variables
#' are named `f[1]`, ..., `f[n]`, one per training observation, or
#' `f[i,name]` for likelihoods with several latent functions (`name`: the class
#' or stick of the latent function).
#'
#' Gibbs fits (`method = "gibbs"`) give their stored posterior draws, with their
#' chains. Variational fits (`method = "vi"`) give `ndraws` draws from the Gaussian
#' approximation \eqn{q(f)} as one chain: independent draws from the marginal of
#' each latent value (the correlation between observations is not reproduced),
#' seeded from the fit's `seed` (or `seed`), so repeated calls agree and the
#' session's random number state is left alone. Their R-hat and effective sample
#' sizes describe Monte Carlo draws, not a Markov chain. The kernel hyperparameters
#' are point estimates (learned by the ELBO, fixed in the sampler) and not part of
#' the draws; see [tidy()][augp-tidiers] or [coef()][augp-methods]. Gibbs fits
#' with sampled hyperparameters (`augp_control(sample_hyper = TRUE)`) list their
#' draws first, named as [hyper_draws()] names them; so do variational fits
#' averaged over their hyperparameters (`augp_control(integrate_hyper = TRUE)`),
#' each draw with the hyperparameter values it was drawn at.
#'
#' The posterior methods are registered when posterior is loaded; `as.mcmc.list()`
#' (Gibbs fits only) when coda is.
#'
#' @param x,.x A fit from [augp()] or [augp_fit()].
#' @param ndraws Variational fits: the number of draws from \eqn{q(f)} (default
#'   1000). Must be `NULL` for Gibbs fits, which give all their stored draws.
#' @param seed `NULL` (the fit's seed, or 1) or a number seeding the draws of a
#'   variational fit.
#' @param ... For `summarise_draws()`: summary functions passed to
#'   `posterior::summarise_draws()`; otherwise unused.
#' @return `as_draws()` and `as_draws_array()`: a `draws_array`;
#'   `as_draws_df()`, `as_draws_matrix()`, `as_draws_list()`,
#'   `as_draws_rvars()`: the corresponding posterior objects;
#'   `summarise_draws()`: a `draws_summary` data frame, one row per variable;
#'   `as.mcmc.list()`: an `mcmc.list` with one `mcmc` per chain.
#' @examplesIf requireNamespace("posterior", quietly = TRUE)
#' set.seed(1)
#' x <- matrix(rnorm(40), 20)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, method = "gibbs",
#'                 control = augp_control(iter = 600, chains = 2))
#' posterior::summarise_draws(fit)[1:3, ]
#' vi <- augp_fit(x, y)
#' posterior::summarise_draws(vi, "mean", "sd", ndraws = 200)[1:3, ]
#' @name augp-draws
NULL

# Variable names of the latent draws: f[i] for one latent column, f[i,name] with the
# column names of the likelihood for several.
latent_var_names <- function(object, n = object$n) {
  if (object$q == 1L) return(sprintf("f[%d]", seq_len(n)))
  nm <- latent_names(object$likelihood, object$levels, object$q)
  sprintf("f[%d,%s]", rep(seq_len(n), length(nm)), rep(nm, each = n))
}

gibbs_latent_draws <- function(x) {
  d <- x$engine$draws
  if (x$method != "gibbs" || is.null(d)) {
    stop("`x` has no posterior draws: refit with method = \"gibbs\".", call. = FALSE)
  }
  dimnames(d) <- list(NULL, NULL, latent_var_names(x, x$n))
  d
}

# The latent draws at the training inputs as an [iterations, chains, variables] array:
# the stored draws of a Gibbs fit, or one chain of draws from q(f) for a variational
# fit (workflow_draws(), seeded from the fit).
latent_draws_array <- function(x, ndraws = NULL, seed = NULL) {
  if (!inherits(x, "augp")) stop("`x` must be a fit from augp() or augp_fit().", call. = FALSE)
  if (x$method == "gibbs") {
    if (!is.null(ndraws)) {
      stop("`ndraws`: Gibbs fits give all their stored draws; leave it NULL.", call. = FALSE)
    }
    d <- gibbs_latent_draws(x)
  } else {
    wd <- workflow_draws(x, ndraws = ndraws, seed = seed)
    F <- wd$F
    d <- array(F, c(dim(F)[1], 1L, dim(F)[2] * dim(F)[3]))
  }
  dimnames(d) <- list(iteration = NULL, chain = NULL, variable = latent_var_names(x, x$n))
  h <- hyper_draws_raw(x, "data")
  if (!is.null(h) && x$method == "vi") {
    # a fit averaged over its hyperparameters: each draw's point of the mixture
    h <- h[mixture_component(wd$ids, dim(h)[1]), , , drop = FALSE]
  }
  if (!is.null(h) && dim(h)[3] > 0) {
    # sampled kernel hyperparameters first, as brms lists its parameters
    out <- array(c(h, d), c(dim(d)[1:2], dim(h)[3] + dim(d)[3]))
    dimnames(out) <- list(iteration = NULL, chain = NULL,
                          variable = c(dimnames(h)[[3]], dimnames(d)[[3]]))
    d <- out
  }
  d
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws
as_draws.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  as_draws_array.augp(x, ndraws = ndraws, seed = seed)
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_array
as_draws_array.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  posterior::as_draws_array(latent_draws_array(x, ndraws, seed))
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_df
as_draws_df.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  posterior::as_draws_df(as_draws_array.augp(x, ndraws = ndraws, seed = seed))
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_matrix
as_draws_matrix.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  posterior::as_draws_matrix(as_draws_array.augp(x, ndraws = ndraws, seed = seed))
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_list
as_draws_list.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  posterior::as_draws_list(as_draws_array.augp(x, ndraws = ndraws, seed = seed))
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_rvars
as_draws_rvars.augp <- function(x, ndraws = NULL, seed = NULL, ...) {
  posterior::as_draws_rvars(as_draws_array.augp(x, ndraws = ndraws, seed = seed))
}

#' @rdname augp-draws
#' @exportS3Method posterior::summarise_draws
summarise_draws.augp <- function(.x, ..., ndraws = NULL, seed = NULL) {
  posterior::summarise_draws(as_draws_array.augp(.x, ndraws = ndraws, seed = seed), ...)
}

#' @rdname augp-draws
#' @exportS3Method coda::as.mcmc.list
as.mcmc.list.augp <- function(x, ...) {
  d <- gibbs_latent_draws(x)
  thin <- if (!is.null(x$control$thin)) x$control$thin else 1L
  start <- if (!is.null(x$control$warmup)) x$control$warmup + 1L else 1L
  chains <- lapply(seq_len(dim(d)[2]), function(c) {
    m <- matrix(d[, c, ], nrow = dim(d)[1], dimnames = list(NULL, dimnames(d)[[3]]))
    coda::mcmc(m, start = start, thin = thin)
  })
  coda::mcmc.list(chains)
}
