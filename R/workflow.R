#' Posterior draws of predictions, expected values and log-likelihoods
#'
#' The rstantools generics as rstanarm and brms provide them, for fits from
#' [augp()] and [augp_fit()]. Each function works on draws of the latent
#' function(s) \eqn{f} and returns one row per draw and one column per
#' observation (an \eqn{S \times n}{S x n} matrix), or an \eqn{S \times n
#' \times K}{S x n x K} array when there is one value per category:
#'
#' * `posterior_linpred()`: the latent functions \eqn{f} themselves (the
#'   log-odds for Bernoulli and binomial fits; an array with one slice per latent
#'   function for multi-class fits); with `transform = TRUE` the same as
#'   `posterior_epred()`.
#' * `posterior_epred()`: the response mean per trial at each draw, from the
#'   likelihood's inverse link: the success probability \eqn{\sigma(f)}
#'   (matrix), or the \eqn{K} category probabilities (array, categories as the
#'   third dimension). Multiply by the number of trials for expected counts (see
#'   [predict_counts()]).
#' * `posterior_predict()`: one response drawn from the likelihood at each latent
#'   draw (the posterior predictive distribution). Bernoulli and binomial fits give
#'   the number of successes (0/1 for one trial per row), as rstanarm and brms do.
#'   Multi-class fits follow brms: with one trial per row (a factor response, as
#'   brms's `categorical()` family) the index of the category drawn, an integer
#'   matrix whose attribute `"levels"` holds the categories; with more trials per
#'   row (counts, as brms's `multinomial()` family) an \eqn{S \times n \times K}{S x
#'   n x K} array of counts.
#' * `log_lik()`: the log-likelihood of each observed response at each draw,
#'   \eqn{\log p(y_i \mid f^{(s)}_i)}{log p(y_i | f_i^(s))}, the input of
#'   [loo()][loo.augp] and `loo::waic()`.
#'
#' @section Which draws: Gibbs fits (`method = "gibbs"`) use the stored joint
#'   posterior draws of the latent functions (all of them in their order,
#'   chain after chain, unless `ndraws` or `draw_ids` picks some); at `newdata`
#'   each stored draw is extended by a joint draw from the GP conditional. Variational
#'   fits (`method = "vi"`) have no stored draws: their draws come from the Gaussian
#'   approximation \eqn{q(f)}, one independent normal per observation and latent
#'   function from its marginal (the engine gives the marginal means and variances;
#'   the correlation between rows is not reproduced). Every quantity at one
#'   observation, and every sum or average of pointwise quantities such as
#'   PSIS-LOO, is then correct in distribution under \eqn{q}; statistics that
#'   combine several rows of one draw (the mean of a replicated data set, as in
#'   `pp_check(fit, type = "stat")`) are not. All
#'   four functions called with the same `seed` (and `ndraws`, `draw_ids`,
#'   `newdata`) use the same latent draws, so `posterior_epred()` is the
#'   inverse link of `posterior_linpred()` draw by draw and `posterior_predict()`
#'   is drawn from it.
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param transform For `posterior_linpred()`: `TRUE` returns the response mean
#'   (as `posterior_epred()`), `FALSE` the latent functions.
#' @param newdata `NULL` (the training rows used in the fit) or new inputs as in
#'   [predict.augp()]; rows with missing predictors give `NA` columns. For
#'   `log_lik()`, `newdata` must also hold the observed response (fits from
#'   [augp()] with a formula).
#' @param ndraws `NULL` or the number of draws. Gibbs fits: `NULL` uses every
#'   stored draw, a number a random subset of them (without replacement, in
#'   their stored order). Variational fits: the number of draws from \eqn{q(f)};
#'   `NULL` means 1000.
#' @param draw_ids Indices of the draws to use instead of `ndraws`: of the stored
#'   draws of a Gibbs fit (numbered chain after chain), or of the sequence of draws
#'   from \eqn{q(f)} that `seed` determines for a variational fit.
#' @param seed `NULL` or a number seeding the draws (random subsets, draws from
#'   \eqn{q}, conditional draws at `newdata`, simulated responses). `NULL` uses
#'   the fit's `seed` (1 if it had none), so repeated calls agree. The random
#'   number state of the session is left as it was.
#' @param size For `posterior_predict()`: trials per row, a single whole number or one
#'   per row; by default the training totals for the training rows and 1 for
#'   `newdata`.
#' @param ... Unused.
#' @return A numeric matrix with one row per draw and one column per
#'   observation, or an array with categories (or latent functions) as the third
#'   dimension; see Description.
#' @seealso [loo.augp()], [pp_check.augp()], [simulate.augp()] (the same
#'   predictive draws in the layout of [stats::simulate()]).
#' @examples
#' set.seed(1)
#' d <- data.frame(x = rnorm(40))
#' d$y <- factor(d$x + rnorm(40, sd = 0.5) > 0, labels = c("no", "yes"))
#' fit <- augp(y ~ x, d)
#' ep <- posterior_epred(fit, ndraws = 200)
#' dim(ep)
#' head(cbind(draws = colMeans(ep), predict = predict(fit)))
#' yrep <- posterior_predict(fit, ndraws = 200)
#' ll <- log_lik(fit, ndraws = 200)
#' range(ll)
#' @name augp-posterior
NULL

#' @importFrom rstantools posterior_predict posterior_epred posterior_linpred log_lik
#' @export
rstantools::posterior_predict

#' @export
rstantools::posterior_epred

#' @export
rstantools::posterior_linpred

#' @export
rstantools::log_lik

#' @rdname augp-posterior
#' @export
posterior_linpred.augp <- function(object, transform = FALSE, newdata = NULL, ndraws = NULL,
                                   draw_ids = NULL, seed = NULL, ...) {
  check_flag(transform, "transform")
  if (transform) {
    return(posterior_epred.augp(object, newdata = newdata, ndraws = ndraws,
                                draw_ids = draw_ids, seed = seed))
  }
  wd <- workflow_draws(object, newdata, ndraws, draw_ids, seed)
  workflow_layout(wd$F, wd$ok, latent_names(object$likelihood, object$levels, object$q))
}

#' @rdname augp-posterior
#' @export
posterior_epred.augp <- function(object, newdata = NULL, ndraws = NULL, draw_ids = NULL,
                                 seed = NULL, ...) {
  wd <- workflow_draws(object, newdata, ndraws, draw_ids, seed)
  workflow_layout(draws_response_mean(object, wd$F, wd$ids), wd$ok,
                  response_names(object$likelihood, object$levels))
}

#' @rdname augp-posterior
#' @export
posterior_predict.augp <- function(object, newdata = NULL, ndraws = NULL, draw_ids = NULL,
                                   seed = NULL, size = NULL, ...) {
  lik <- object$likelihood
  wd <- workflow_draws(object, newdata, ndraws, draw_ids, seed, simulate = TRUE)
  n <- length(wd$ok)
  if (is.null(size)) {
    size <- if (is.null(newdata)) simulation_trials(object$likelihood, object$trials) else rep(1, n)
  } else {
    if (!is.numeric(size) || !(length(size) %in% c(1L, n)) || anyNA(size) ||
        any(!is.finite(size)) || any(size < 0) || any(size != round(size))) {
      stop(sprintf("`size` must be whole numbers >= 0: a single number or one per row (%d).", n),
           call. = FALSE)
    }
    size <- rep_len(as.numeric(size), n)
  }
  counts <- .lik_simulate_cpp(lik_with_draws(object$engine, wd$ids), wd$F, size[wd$ok], wd$sim_seed)
  out <- present_predictive(lik, counts, size[wd$ok], object$levels)
  workflow_pad(out, wd$ok)
}

#' @rdname augp-posterior
#' @export
log_lik.augp <- function(object, newdata = NULL, ndraws = NULL, draw_ids = NULL, seed = NULL,
                         ...) {
  log_lik_draws(object, newdata, ndraws, draw_ids, seed)$ll
}

# log_lik() with the chains of the draws: list(ll = S x n matrix, chain, all = whether
# these are all the stored draws of a Gibbs fit in their order).
log_lik_draws <- function(object, newdata = NULL, ndraws = NULL, draw_ids = NULL, seed = NULL) {
  resp <- if (!is.null(newdata)) new_response(object, newdata)
  wd <- workflow_draws(object, newdata, ndraws, draw_ids, seed)
  spec <- if (is.null(resp)) object$engine$lik else
    engine_lik_spec(object$likelihood, response_rows(resp, wd$ok))
  ll <- .lik_loglik_obs_cpp(lik_with_draws(object$engine, wd$ids, spec), wd$F)
  out <- matrix(NA_real_, nrow(ll), length(wd$ok))
  out[, wd$ok] <- ll
  list(ll = out, chain = wd$chain, all = identical(wd$ids, seq_along(wd$chain)) &&
         object$method == "gibbs" && length(wd$ids) == prod(dim(object$engine$draws)[1:2]))
}

#' Approximate leave-one-out cross-validation
#'
#' PSIS-LOO (Pareto-smoothed importance sampling, Vehtari, Gelman and Gabry,
#' 2017) from the pointwise log-likelihood of [log_lik()][augp-posterior], with
#' the loo package: `loo(fit)` gives the expected log pointwise predictive density
#' (`elpd_loo`) and its standard error, and `loo::loo_compare(loo(fit1),
#' loo(fit2))` compares fits, for instance with different kernels, on the same
#' data.
#'
#' For Gibbs fits the relative efficiencies (`r_eff`) come from the chains of the
#' stored draws (`loo::relative_eff()`); with a subset of draws (`ndraws`,
#' `draw_ids`) they are taken as 1 unless given. For variational fits the
#' draws are independent draws from the Gaussian approximation \eqn{q(f)} (its
#' marginals; `r_eff = 1`) rather than from the posterior: the result is an
#' approximation of the LOO of the exact posterior, and large Pareto \eqn{k}
#' values there also flag where \eqn{q} and the leave-one-out posteriors differ.
#'
#' The method is registered for `loo::loo()`; load loo (or call `loo::loo(fit)`).
#'
#' @param x A fit from [augp()] or [augp_fit()].
#' @param ... Unused; to compare fits call `loo()` on each and pass the results to
#'   `loo::loo_compare()`.
#' @inheritParams augp-posterior
#' @param r_eff `NULL` (see Details) or relative efficiencies passed to
#'   `loo::loo()`.
#' @param cores Number of cores used by loo.
#' @param save_psis Keep the PSIS object (as `loo::loo()`), for example for
#'   `loo::E_loo()` or LOO-PIT plots.
#' @return An object of class `psis_loo` (see `loo::loo()`), with attribute
#'   `"model_name"` when `x` is a name.
#' @references Vehtari, A., Gelman, A. and Gabry, J. (2017). Practical Bayesian
#'   model evaluation using leave-one-out cross-validation and WAIC. Statistics
#'   and Computing 27, 1413-1432.
#' @examplesIf requireNamespace("loo", quietly = TRUE)
#' set.seed(1)
#' d <- data.frame(x = rnorm(40))
#' d$y <- factor(sin(2 * d$x) + rnorm(40, sd = 0.5) > 0, labels = c("no", "yes"))
#' ctl <- augp_control()
#' f_se <- augp(y ~ x, d, kernel = kernel_se(), control = ctl)
#' f_lin <- augp(y ~ x, d, kernel = kernel_linear() + kernel_constant(),
#'               control = ctl)
#' loo::loo_compare(loo::loo(f_se), loo::loo(f_lin))
#' @exportS3Method loo::loo
loo.augp <- function(x, ..., newdata = NULL, ndraws = NULL, draw_ids = NULL, seed = NULL,
                     r_eff = NULL, cores = getOption("mc.cores", 1), save_psis = FALSE) {
  if (!requireNamespace("loo", quietly = TRUE)) {
    stop("loo() needs the loo package: install.packages(\"loo\").", call. = FALSE)
  }
  if (any(vapply(list(...), inherits, logical(1), "augp"))) {
    stop("`...`: loo() takes one fit; compare fits with loo::loo_compare(loo(fit1), loo(fit2)).",
         call. = FALSE)
  }
  name <- substitute(x)
  ld <- log_lik_draws(x, newdata, ndraws, draw_ids, seed)
  ll <- ld$ll
  if (anyNA(ll)) {
    stop("`newdata` has rows with missing predictors: drop them before loo().", call. = FALSE)
  }
  if (is.null(r_eff)) {
    r_eff <- if (ld$all) {
      loo::relative_eff(exp(ll), chain_id = ld$chain, cores = cores)
    } else {
      rep(1, ncol(ll))
    }
  }
  out <- loo::loo(ll, r_eff = r_eff, cores = cores, save_psis = save_psis)
  if (is.name(name)) attr(out, "model_name") <- as.character(name)
  out
}

#' Posterior predictive checks with bayesplot
#'
#' Compares the observed response with responses replicated from the posterior
#' predictive distribution ([posterior_predict()][augp-posterior]) through one
#' of bayesplot's `ppc_*()` functions. The method is registered for
#' `bayesplot::pp_check()`; load bayesplot (or call `bayesplot::pp_check(fit)`).
#'
#' `y` is the observed response and `yrep` the replicated responses, in the layout
#' of `posterior_predict()`: the number of successes for Bernoulli and binomial
#' fits (0/1 for binary data), the category index for multi-class fits with one
#' trial per row; for counts over several categories the rows and categories are
#' flattened, one value per (row, category) cell. For a variational fit the
#' replicated rows are drawn independently from the marginals of \eqn{q(f)} (see
#' [posterior_predict()][augp-posterior]): checks of one observation at a time
#' (`"bars"`, `"intervals"`, `"loo_pit_*"`) are sound, checks of statistics over
#' rows (`"stat"`) understate the spread. For `type = "error_binned"` (binned
#' residuals of binary data) `yrep` holds the expected values of
#' [posterior_epred()][augp-posterior], as brms does.
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param type The bayesplot check: the name of a `ppc_*()` function without the
#'   prefix, such as `"bars"`, `"stat"`, `"intervals"`, `"error_binned"`,
#'   `"bars_grouped"`, `"stat_grouped"` (see `bayesplot::available_ppc()`).
#'   The default is `"bars"` (counts of each outcome against their predictive
#'   intervals: the natural check of binary and categorical data) when every row
#'   has one trial, else `"intervals"`.
#' @param ndraws Number of replicated data sets. The default is 9 for the checks
#'   that draw one panel per replicate (`"hist"`, `"dens"`, `"error_binned"`,
#'   ...) and 100 otherwise (or all stored draws of a Gibbs fit when fewer).
#' @param seed As in [posterior_predict()][augp-posterior].
#' @param group For the `*_grouped` types: a vector with one value per
#'   observation, or the name of a variable of the model frame (formula fits).
#' @param ... Further arguments of the `ppc_*()` function, e.g. `stat = "mean"`
#'   for `type = "stat"` or `prob` for `"intervals"`.
#' @return A ggplot object.
#' @examplesIf requireNamespace("bayesplot", quietly = TRUE)
#' set.seed(1)
#' d <- data.frame(x = rnorm(40))
#' d$y <- factor(d$x + rnorm(40, sd = 0.5) > 0, labels = c("no", "yes"))
#' fit <- augp(y ~ x, d)
#' bayesplot::pp_check(fit)
#' bayesplot::pp_check(fit, type = "stat", stat = "mean", binwidth = 0.01)
#' @exportS3Method bayesplot::pp_check
pp_check.augp <- function(object, type = NULL, ndraws = NULL, seed = NULL, group = NULL, ...) {
  if (!requireNamespace("bayesplot", quietly = TRUE)) {
    stop("pp_check() needs the bayesplot package: install.packages(\"bayesplot\").",
         call. = FALSE)
  }
  if (is.null(type)) type <- pp_check_type(object$likelihood, object$trials)
  if (!is.character(type) || length(type) != 1L || is.na(type)) {
    stop("`type` must be the name of a bayesplot ppc_*() function, such as \"bars\".",
         call. = FALSE)
  }
  type <- sub("^ppc_", "", type)
  fun <- get0(paste0("ppc_", type), envir = asNamespace("bayesplot"), mode = "function")
  if (is.null(fun)) {
    stop(sprintf("`type` = \"%s\" is not a bayesplot check; see bayesplot::available_ppc().",
                 type), call. = FALSE)
  }
  if (is.null(ndraws)) {
    # checks that draw one panel per replicate show a few; the others summarise many
    ndraws <- if (grepl("^(hist|dens|freqpoly|boxplot|violin|error_.*|scatter)(_grouped)?$",
                        type)) 9 else 100
    if (object$method == "gibbs") ndraws <- min(ndraws, prod(dim(object$engine$draws)[1:2]))
  }
  # the binned error plot compares the data with their expected values, not replicates
  yrep <- if (type == "error_binned") {
    posterior_epred.augp(object, ndraws = ndraws, seed = seed)
  } else {
    posterior_predict.augp(object, ndraws = ndraws, seed = seed)
  }
  y <- observed_predictive(object$likelihood, object$y, object$trials, object$levels)
  if (is.matrix(y)) {
    # counts over categories: one value per (row, category) cell, rows within categories
    y <- as.vector(y)
    yrep <- matrix(yrep, dim(yrep)[1])
  }
  attr(yrep, "levels") <- NULL
  args <- list(y = y, yrep = yrep, ...)
  if (grepl("_grouped$", type)) {
    if (is.null(group)) {
      stop(sprintf("`group` is needed for type = \"%s\".", type), call. = FALSE)
    }
    if (is.character(group) && length(group) == 1L) {
      if (is.null(object$model) || !group %in% names(object$model)) {
        stop(sprintf("`group`: no variable '%s' in the model frame.", group), call. = FALSE)
      }
      group <- object$model[[group]][object$kept]
    }
    if (length(group) != object$n) {
      stop(sprintf("`group` must have one value per observation (%d).", object$n), call. = FALSE)
    }
    args$group <- rep_len(group, length(y))
  }
  do.call(fun, args)
}

# ---- the latent draws behind the workflow functions --------------------------------

# S draws of the latent functions at the training rows (newdata NULL) or at the rows of
# newdata with complete inputs, under R's generator seeded from `seed` (the fit's seed
# when NULL), the session's stream left alone: list(F = S x r x q array, ok = which
# rows of newdata have complete inputs, ids = the draws' indices, chain = their chains,
# sim_seed = a seed for the C++ simulation stream when `simulate`).
workflow_draws <- function(object, newdata = NULL, ndraws = NULL, draw_ids = NULL,
                           seed = NULL, simulate = FALSE) {
  if (!inherits(object, "augp")) {
    stop("`object` must be a fit from augp() or augp_fit().", call. = FALSE)
  }
  if (!is.null(seed)) check_number(seed, "seed")
  ndraws <- check_count_or_null(ndraws, "ndraws", min = 1)
  if (!is.null(draw_ids)) {
    if (!is.numeric(draw_ids) || !length(draw_ids) || anyNA(draw_ids) ||
        any(draw_ids < 1) || any(draw_ids != round(draw_ids))) {
      stop("`draw_ids` must be whole numbers >= 1.", call. = FALSE)
    }
    draw_ids <- as.integer(draw_ids)
  }
  if (is.null(seed)) seed <- pred_seed(object)
  withr::with_seed(seed, {
    out <- if (object$method == "gibbs") {
      gibbs_workflow_draws(object, newdata, ndraws, draw_ids)
    } else {
      vi_workflow_draws(object, newdata, ndraws, draw_ids)
    }
    if (simulate) out$sim_seed <- new_seed()
    out
  })
}

# The rows of the design at which to draw: the standardised training inputs, or those
# of newdata, with which rows have complete inputs (and offsets); `full`: the whole new
# design with its attributes (the offsets of its rows), for engine_predict_new().
workflow_inputs <- function(object, newdata) {
  if (is.null(newdata)) return(list(X = design_matrix(object$x), ok = rep(TRUE, object$n), new = FALSE))
  X <- new_design(object, newdata)
  ok <- stats::complete.cases(X) & (if (is.null(attr(X, "ok"))) TRUE else attr(X, "ok"))
  list(X = X[ok, , drop = FALSE], ok = ok, new = TRUE, full = X)
}

# Gibbs fits: the stored draws [iterations, chains, n * q] as an S x n x q array (draw
# s = iteration + iterations * (chain - 1)), or their joint extension to new inputs.
gibbs_workflow_draws <- function(object, newdata, ndraws, draw_ids) {
  eng <- object$engine
  d <- dim(eng$draws)
  total <- d[1] * d[2]
  chain <- rep(seq_len(d[2]), each = d[1])
  if (!is.null(draw_ids)) {
    if (any(draw_ids > total)) {
      stop(sprintf("`draw_ids` must be at most %d, the number of stored draws.", total),
           call. = FALSE)
    }
    ids <- draw_ids
  } else if (!is.null(ndraws)) {
    if (ndraws > total) {
      stop(sprintf("`ndraws` (%d) is more than the %d stored draws.", as.integer(ndraws), total),
           call. = FALSE)
    }
    ids <- sort(sample.int(total, ndraws))
  } else {
    ids <- seq_len(total)
  }
  inp <- workflow_inputs(object, newdata)
  q <- object$q
  m <- nrow(inp$X)
  # at new inputs only the draws `ids` are predicted
  F <- if (!inp$new) {
    latent_draw_array(eng$draws, m, q)[ids, , , drop = FALSE]
  } else if (m == 0) {
    array(0, c(length(ids), 0, q))
  } else {
    sub <- if (length(ids) < total || any(ids != seq_len(total))) ids
    latent_draw_array(engine_predict_new(object, inp$full, inp$ok, draws = TRUE, ids = sub)$draws,
                      m, q)
  }
  list(F = F, ok = inp$ok, ids = ids, chain = chain[ids])
}

# Variational fits: independent draws from the Gaussian marginals of q(f) (of its
# mixture over hyperparameter values, vi_marginal_draws()).
vi_workflow_draws <- function(object, newdata, ndraws, draw_ids) {
  S <- if (!is.null(draw_ids)) max(draw_ids) else if (!is.null(ndraws)) ndraws else 1000L
  inp <- workflow_inputs(object, newdata)
  q <- object$q
  m <- nrow(inp$X)
  S <- as.integer(S)
  F <- if (m > 0) {
    vi_marginal_draws(vi_marginals(object, if (inp$new) inp$full, inp$ok), S, q)
  } else {
    array(0, c(S, 0, q))
  }
  ids <- if (!is.null(draw_ids)) draw_ids else seq_len(S)
  list(F = F[ids, , , drop = FALSE], ok = inp$ok, ids = ids, chain = rep(1L, length(ids)))
}

# The response mean per trial at every draw: S x r x q latent draws -> S x r x R, in
# one call of the likelihood's inverse link (with the likelihood parameters of the stored
# draws `ids` in full-Bayes Gibbs fits, lik_with_draws()).
draws_response_mean <- function(object, F, ids = NULL) {
  d <- dim(F)
  if (d[2] == 0) return(array(0, c(d[1], 0, length(response_names(object$likelihood, object$levels)))))
  .lik_response_mean_draws_cpp(lik_with_draws(object$engine, ids), F)
}

# An S x r x C array as the workflow functions return it: an S x n matrix for one
# column, else an S x n x C array with the column names; NA for the rows of newdata
# with incomplete inputs.
workflow_layout <- function(A, ok, names) {
  out <- if (dim(A)[3] == 1L) {
    matrix(A[, , 1], dim(A)[1], dim(A)[2])
  } else {
    array(A, dim(A), dimnames = list(NULL, NULL, names))
  }
  workflow_pad(out, ok)
}

# Insert NA columns (second dimension) for the rows that are not `ok`.
workflow_pad <- function(x, ok) {
  if (all(ok)) return(x)
  lev <- attr(x, "levels")
  d <- dim(x)
  if (length(d) == 2L) {
    out <- matrix(NA, d[1], length(ok))
    storage.mode(out) <- storage.mode(x)
    out[, ok] <- x
  } else {
    out <- array(NA, c(d[1], length(ok), d[3]), dimnames = list(NULL, NULL, dimnames(x)[[3]]))
    storage.mode(out) <- storage.mode(x)
    out[, ok, ] <- x
  }
  attr(out, "levels") <- lev
  out
}

# The observed response in newdata (formula fits), encoded for engine_lik_spec()
# against the fit's levels, one entry per row of newdata.
new_response <- function(object, newdata) {
  if (is.null(object$terms)) {
    stop(paste0("`newdata`: log_lik() at new data needs a fit from augp() with a formula ",
                "and the response in `newdata`."), call. = FALSE)
  }
  if (!is.data.frame(newdata)) newdata <- as.data.frame(newdata)
  resp <- all.vars(object$terms[[2L]])
  miss <- setdiff(resp, names(newdata))
  if (length(miss)) {
    stop(sprintf("`newdata` must hold the response for log_lik(): missing %s.",
                 paste(sQuote(miss, FALSE), collapse = ", ")), call. = FALSE)
  }
  y <- eval(object$terms[[2L]], newdata, environment(object$terms))
  if (anyNA(y)) stop("`newdata`: the response contains NA.", call. = FALSE)
  encode_new_response(object$likelihood, y, object$levels)
}

# The rows `ok` of an encoded response.
response_rows <- function(resp, ok) {
  for (nm in c("y", "trials", "keep")) if (!is.null(resp[[nm]])) resp[[nm]] <- resp[[nm]][ok]
  if (!is.null(resp$Y)) resp$Y <- resp$Y[ok, , drop = FALSE]
  resp
}
