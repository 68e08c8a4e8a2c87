#' Fit a Gaussian-process classifier with an augmented likelihood
#'
#' `augp()` fits a Gaussian-process model with a logistic link to a binary
#' or binomial response. The likelihood is made conditionally conjugate by
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
#' response. Numeric inputs are centred and scaled when
#' `control$standardise` is `TRUE`; a predictor column with zero variance is
#' dropped with a warning.
#'
#' @param formula A model formula, e.g. `type ~ glu + bmi`, or
#'   `cbind(successes, failures) ~ x` for binomial counts.
#' @param data A data frame holding the variables of `formula`.
#' @param likelihood `NULL` (choose from the response), `bernoulli_logit()`
#'   or `binomial_logit()`.
#' @param kernel A kernel, e.g. `kernel_se()`; see the kernel constructors.
#' @param method `"vi"` (variational inference) or `"gibbs"` (sampling).
#' @param inducing Must be `NULL`: sparse (inducing-point) GPs are not
#'   available yet.
#' @param subset An optional vector selecting rows of `data`.
#' @param weights Optional frequency weights: non-negative whole numbers that
#'   multiply the number of trials (and successes) of each row; rows with
#'   weight 0 are dropped. Non-integer weights are an error.
#' @param na.action How to handle missing values (default
#'   `getOption("na.action")`, normally [stats::na.omit()]).
#' @param control Settings from [augp_control()].
#' @param seed `NULL` or a number; with a number the fit is reproducible
#'   without touching the global random-number stream.
#' @return An object of class `augp`; see [predict.augp()],
#'   [summary.augp()], [autoplot.augp()].
#' @seealso [augp_fit()] for the matrix interface.
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   fit <- augp(type ~ glu + bmi, data = MASS::Pima.tr[1:60, ],
#'               control = augp_control(hyper_maxit = 3))
#'   fit
#'   head(predict(fit, MASS::Pima.te[1:5, ]))
#' }
#' @export
augp <- function(formula, data, likelihood = NULL, kernel = kernel_se(),
                 method = c("vi", "gibbs"), inducing = NULL, subset, weights,
                 na.action, control = augp_control(), seed = NULL) {
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
  mf <- match.call(expand.dots = FALSE)
  keep <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, keep)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf)
  w <- stats::model.weights(mf)
  if (length(attr(mt, "term.labels")) == 0L) {
    stop("`formula` needs at least one predictor on its right-hand side.", call. = FALSE)
  }
  attr(mt, "intercept") <- 1L
  x <- stats::model.matrix(mt, mf)
  contr <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  check_design(x, "data")

  fit <- augp_fit(x, y, likelihood = likelihood, kernel = kernel, method = method,
                  inducing = inducing, weights = w, control = control, seed = seed)
  fit$call <- cl
  fit$terms <- mt
  fit$xlevels <- stats::.getXlevels(mt, mf)
  fit$contrasts <- contr
  fit$na.action <- attr(mf, "na.action")
  fit$model <- mf
  fit
}

# Predictor matrix checks shared by augp() and augp_fit(); `arg` names the
# argument the user should look at.
check_design <- function(x, arg) {
  if (!is.numeric(x)) {
    stop(sprintf("`%s`: predictors must be numeric (or factors in a formula).", arg),
         call. = FALSE)
  }
  if (nrow(x) < 2L) {
    stop(sprintf("`%s` has %d usable row(s): need at least 2 observations.", arg,
                 nrow(x)), call. = FALSE)
  }
  bad <- colnames(x)[colSums(!is.finite(x)) > 0]
  if (length(bad)) {
    stop(sprintf("`%s`: predictor(s) %s contain NA, NaN or Inf (after na.action).",
                 arg, paste(sQuote(bad, FALSE), collapse = ", ")), call. = FALSE)
  }
  invisible(x)
}
