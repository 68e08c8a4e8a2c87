#' Posterior draws of a Gibbs fit in posterior and coda formats
#'
#' Convert the latent-function draws of a Gibbs fit (`method = "gibbs"`) to
#' the formats of the posterior and coda packages, for their diagnostics
#' and summaries. The variables are named `f[1]`, ..., `f[n]`, one per
#' training observation, or `f[i,category]` for likelihoods with several
#' latent functions. Variational fits have no draws and give an error.
#'
#' These methods are registered when posterior or coda is loaded.
#'
#' @param x A Gibbs fit from [augp()] or [augp_fit()].
#' @param ... Unused.
#' @return `as_draws_array()`: a `draws_array`; `as_draws_df()`: a
#'   `draws_df`; `as.mcmc.list()`: an `mcmc.list` with one `mcmc` per chain.
#' @examplesIf requireNamespace("posterior", quietly = TRUE)
#' set.seed(1)
#' x <- matrix(rnorm(40), 20)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, method = "gibbs",
#'                 control = augp_control(iter = 60, chains = 2))
#' posterior::summarise_draws(posterior::as_draws_array(fit))[1:3, ]
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

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_array
as_draws_array.augp <- function(x, ...) {
  d <- gibbs_latent_draws(x)
  dimnames(d) <- list(iteration = NULL, chain = NULL, variable = dimnames(d)[[3]])
  posterior::as_draws_array(d)
}

#' @rdname augp-draws
#' @exportS3Method posterior::as_draws_df
as_draws_df.augp <- function(x, ...) {
  posterior::as_draws_df(as_draws_array.augp(x))
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
