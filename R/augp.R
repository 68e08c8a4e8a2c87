#' Fit a Gaussian-process model with an augmented likelihood
#'
#' `augp()` fits a Gaussian-process model with a logistic link to a binary
#' or binomial response (or, with the likelihoods that take them, to
#' categories and counts over categories). The likelihood is made conditionally conjugate by
#' Polya-Gamma augmentation, which gives closed-form coordinate-ascent
#' variational inference (`method = "vi"`, with an ELBO and optional
#' learning of the kernel hyperparameters) and an exact Gibbs sampler
#' (`method = "gibbs"`).
#'
#' The formula is handled as in [stats::glm()]: factor predictors are
#' dummy-coded (treatment contrasts unless set otherwise), and the terms,
#' factor levels and contrasts are stored so that [predict.augp()] rebuilds
#' the design for new data exactly. The intercept column is not used: the
#' GP has a constant prior mean, set to the empirical log-odds of the
#' response. A predictor column with zero variance is dropped with a warning.
#'
#' Units: numeric inputs are centred and scaled internally when
#' `control$standardise` is `TRUE` (the default), but the kernel is given and
#' reported in the units of the data: lengthscales and periods of `kernel` are
#' read in the units of the predictors, and `coef()`, `print()` and
#' `summary()` report them in those units (see the Units section of
#' [kernels] for the conversion, and for one lengthscale shared by several
#' inputs, which is read in units of each input's standard deviation).
#' `coef(fit, units = "standardised")` gives the values on the internal scale.
#'
#' Offsets: `offset()` terms in the formula and the `offset` argument are
#' added to the latent function, as in [stats::glm()] (for a logit link, on the
#' log-odds scale). The GP's constant prior mean plays the part of glm's
#' intercept: the offset enters the prior mean of each observation centred at
#' its mean over the rows fitted, so a constant offset changes nothing.
#' [predict.augp()] evaluates the offsets on `newdata`. Likelihoods with
#' several latent functions take no offset.
#'
#' Missing values: with `na.action = na.exclude`, [fitted.augp()],
#' [residuals.augp()] and [predict.augp()] without `newdata` return `NA` for
#' the rows with missing values, so that their results line up with `data`.
#'
#' @param formula A model formula, e.g. `type ~ glu + bmi`, or
#'   `cbind(successes, failures) ~ x` for binomial counts; [gp()] terms,
#'   `y ~ gp(x1) + gp(x2) + z`, make an additive GP; `offset()` terms
#'   are allowed.
#' @param data A data frame holding the variables of `formula`.
#' @param likelihood `NULL` (choose from the response), `bernoulli_logit()`
#'   or `binomial_logit()`.
#' @param kernel A kernel, e.g. `kernel_se()`, with lengthscales in the units
#'   of the predictors; see [kernels]. `NULL` (the default) takes the
#'   likelihood's default kernel: `kernel_matern(nu = 2.5)` for
#'   `gaussian_noise()` (see [gaussian_noise()]), `kernel_se()` for every other
#'   likelihood; `print()` and `summary()` name it.
#' @param method `"vi"` (variational inference) or `"gibbs"` (sampling).
#' @param inducing Which GP to fit. `"auto"` (the default) chooses by the
#'   cost of the exact GP: the exact GP while \eqn{q n^3 \le 2000^3} for
#'   n observations and q latent functions (the number the likelihood has: 1
#'   for binary, binomial and regression likelihoods, K for
#'   [logistic_softmax()] with K classes, K - 1 for [stick_breaking()]), i.e.
#'   up to n = 2000 with one latent function, 1101 with 6, 675 with 26;
#'   above that a sparse variational GP with
#'   \eqn{m = 3 \sqrt{n}} inducing points, at most \eqn{400 / q^{1/4}} and
#'   at most \eqn{\sqrt{10^{10} / (q n)}} (a pass over the data costs about
#'   \eqn{q n m^2} flops), but at least 100 (m = 200 for n = 4435 with 6
#'   classes, 100 for a million rows). `print()` and
#'   `summary()` say which was chosen. Fits the sparse GP cannot do stay exact
#'   above the limit, with a message: Gibbs sampling (`method = "gibbs"`) and
#'   one kernel per latent function (`shared_hyper = FALSE`, or
#'   [heteroscedastic_gaussian()]).
#'   `"exact"` (or `NULL`) always fits the exact GP. A number m fits a sparse
#'   variational GP with m inducing points (placed by k-means or at random,
#'   see `inducing_method` in [augp_control()]); an m x p matrix gives their
#'   locations on the scale of the predictors (after dummy coding). Memory of
#'   a sparse fit is O(n m + m^2); large data use minibatch natural-gradient
#'   updates (`batch_size`). Sparse GPs: variational inference only.
#'   Likelihood parameters that are learned (the noise scale of
#'   [gaussian_noise()], `nu` of [student_t()], `r` of [negative_binomial()],
#'   cut points, ...) are learned by sparse fits as by exact ones: the
#'   parameter step at the marginals of \eqn{q(f)} at the data alternates with
#'   the updates of \eqn{q(u)}. Minibatch fits learn them, with the kernel, on
#'   the subsample that starts them (`hyper_subsample` in [augp_control()]) and
#'   take one more parameter step at the end on all the data.
#' @param subset An optional vector selecting rows of `data`.
#' @param weights Optional frequency weights: non-negative whole numbers that
#'   multiply the number of trials (and successes) of each row; rows with
#'   weight 0 are dropped. Non-integer weights are an error.
#' @param na.action How to handle missing values (default
#'   `getOption("na.action")`, normally [stats::na.omit()]; [stats::na.exclude()]
#'   pads fitted values, residuals and predictions with `NA`).
#' @param offset `NULL` or a numeric vector of one value per row of `data`
#'   (evaluated in `data`, as `weights`), added to the latent function; see
#'   Offsets.
#' @param prior Priors on the kernel hyperparameters for full-Bayes Gibbs fits
#'   (`augp_control(sample_hyper = TRUE)`): `NULL` for the defaults or
#'   [augp_prior()]. Ignored by fits that do not sample the hyperparameters.
#' @param control Settings from [augp_control()].
#' @param seed `NULL` or a whole number within R's integer range (as for
#'   [set.seed()]); with a number the fit is reproducible without touching the
#'   global random-number stream.
#' @return An object of class `augp`; see [predict.augp()],
#'   [summary.augp()], [autoplot.augp()].
#' @seealso [augp_fit()] for the matrix interface.
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   fit <- augp(type ~ glu + bmi, data = MASS::Pima.tr[1:60, ])
#'   fit
#'   head(predict(fit, MASS::Pima.te[1:5, ]))
#' }
#' @export
augp <- function(formula, data, likelihood = NULL, kernel = NULL,
                 method = c("vi", "gibbs"), inducing = "auto", subset, weights,
                 na.action, offset, prior = NULL, control = augp_control(), seed = NULL) {
  cl <- match.call()
  method <- match.arg(method)
  if (missing(formula) || !inherits(formula, "formula")) {
    stop("`formula` must be a model formula such as y ~ x1 + x2.", call. = FALSE)
  }
  if (!missing(data) && !is.data.frame(data) && !is.list(data) && !is.environment(data)) {
    stop("`data` must be a data frame.", call. = FALSE)
  }
  if (length(formula) != 3L) {
    stop("`formula` needs a response on its left-hand side.", call. = FALSE)
  }
  if (!missing(data) && is.data.frame(data) && nrow(data) == 0L) {
    stop("`data` has no rows.", call. = FALSE)
  }
  # gp() terms: the formula rewritten without them, the kernel built from them below
  formula_user <- formula
  gpt <- formula_gp_terms(formula, if (!missing(data) && is.data.frame(data)) data)
  if (!is.null(gpt)) {
    if (!is.null(kernel)) {
      stop(paste0("`kernel`: the formula's gp() terms set the kernel; give a term its own ",
                  "kernel as gp(x, kernel = ...) instead."), call. = FALSE)
    }
    formula <- gpt$formula
  }
  mf <- match.call(expand.dots = FALSE)
  keep <- match(c("formula", "data", "subset", "weights", "na.action", "offset"), names(mf), 0L)
  mf <- mf[c(1L, keep)]
  mf$formula <- formula
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  if (nrow(mf) == 0L) {
    stop(if (!missing(subset)) "`subset` selects no rows of `data` (with complete values)."
         else "`data` has no rows without missing values (see `na.action`).", call. = FALSE)
  }
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf)
  warn_empty_response_levels(formula, data, y)
  w <- stats::model.weights(mf)
  if (length(attr(mt, "term.labels")) == 0L) {
    stop("`formula` needs at least one predictor on its right-hand side.", call. = FALSE)
  }
  attr(mt, "intercept") <- 1L
  x <- stats::model.matrix(mt, mf)
  contr <- attr(x, "contrasts")
  not_icpt <- colnames(x) != "(Intercept)"
  # the design columns of each variable of the formula, for kernels on some of them
  term_cols <- split(seq_len(sum(not_icpt)),
                     factor(attr(mt, "term.labels")[attr(x, "assign")[not_icpt]]))
  x <- x[, not_icpt, drop = FALSE]
  check_design(x, "data")
  if (!is.null(gpt)) {
    likelihood <- check_likelihood(likelihood, y)
    kernel <- formula_gp_kernel(gpt, likelihood)
  }
  kernel <- kernel_resolve_dims(kernel, colnames(x), ncol(x), term_cols)

  off <- stats::model.offset(mf)
  fit <- augp_fit(x, y, likelihood = likelihood, kernel = kernel, method = method,
                  inducing = inducing, weights = w, offset = off, prior = prior,
                  control = control, seed = seed)
  fit$call <- cl
  fit$formula <- formula_user
  # (a formula with gp() terms is the model's own description: formula() returns it)
  fit$gp_terms <- !is.null(gpt)
  fit$terms <- mt
  fit$xlevels <- stats::.getXlevels(mt, mf)
  fit$contrasts <- contr
  fit$na.action <- attr(mf, "na.action")
  fit$model <- mf
  fit
}

# Predictor matrix checks shared by augp() and augp_fit(); `arg` names the
# argument the user should look at.
check_design <- function(x, arg, names = colnames(x)) {
  if (!is.numeric(x)) {
    stop(sprintf("`%s`: predictors must be numeric (or factors in a formula).", arg),
         call. = FALSE)
  }
  if (nrow(x) < 2L) {
    stop(sprintf("`%s` has %d usable row(s): need at least 2 observations.", arg,
                 nrow(x)), call. = FALSE)
  }
  # column by column in C++ (no n x p logical matrix, no column copies)
  finite <- if (is.double(x)) .design_col_stats_cpp(x)$finite else
    vapply(seq_len(ncol(x)), function(j) all(is.finite(x[, j])), TRUE)
  bad <- names[!finite]
  if (length(bad)) {
    stop(sprintf("`%s`: predictor(s) %s contain NA, NaN or Inf (after na.action).",
                 arg, paste(sQuote(bad, FALSE), collapse = ", ")), call. = FALSE)
  }
  invisible(x)
}

# model.frame() drops unused factor levels, the response's included; say so when
# a level of a factor response has no observations left (it is not modelled).
warn_empty_response_levels <- function(formula, data, y) {
  if (!is.factor(y) || nlevels(droplevels(y)) < 2L) return(invisible())
  env <- environment(formula)
  if (is.null(env)) env <- parent.frame()
  orig <- tryCatch(eval(formula[[2L]], if (missing(data)) env else data, env),
                   error = function(e) NULL)
  if (!is.factor(orig)) return(invisible())
  empty <- setdiff(levels(orig), levels(droplevels(y)))
  if (length(empty)) {
    warning(sprintf("`y` (the response): level(s) %s have no observations and were dropped.",
                    paste(sQuote(empty, FALSE), collapse = ", ")), call. = FALSE)
  }
  invisible()
}
