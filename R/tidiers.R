#' Tidy summaries of augmented GP fits (broom style)
#'
#' Methods for the generics of the generics package, as broom provides them for
#' other models, returning data frames:
#'
#' * `tidy()`: the fitted parameters, one row each: the kernel hyperparameters
#'   (on their natural scale; with one kernel per latent function,
#'   `augp_control(shared_hyper = FALSE)`, the term names carry the latent function
#'   in brackets) and the likelihood's parameters (e.g. the class weights `theta` of
#'   [logistic_softmax()]). These are point estimates (maximising the ELBO, or
#'   fixed), so there is no standard error.
#' * `glance()`: one row about the whole fit: number of observations, method,
#'   likelihood, kernel, the final ELBO (variational fits), convergence (of CAVI and the hyperparameter search), the number
#'   of draws and chains with the largest split R-hat and smallest bulk effective
#'   sample size of the fitted response means (Gibbs fits, as in `summary()`), the training statistics of
#'   `summary()` (accuracy and log loss per trial) and the fitting time in seconds.
#' * `augment()`: the data with the fitted response mean (`.fitted`, the success
#'   probability, as `predict(type = "response")`), optionally its posterior
#'   standard deviation (`.se.fit`) and credible interval (`.lower`, `.upper`),
#'   and, at the training data, the response residual `.resid`: the observed
#'   proportion of successes minus `.fitted`. For likelihoods with several
#'   categories there is one column of each per category, `.fitted_<category>`
#'   etc. (observed share of the row's trials in the category minus its fitted
#'   probability).
#'
#' @param x A fit from [augp()] or [augp_fit()].
#' @param data For `augment()`: the data to augment, one row per observation used
#'   in the fit. The default is the model frame of a formula fit (rows used), or the
#'   predictors of a matrix fit.
#' @param newdata For `augment()`: new data (as for [predict.augp()]) to augment
#'   with predictions instead; `.resid` is then not computed.
#' @param se_fit Add `.se.fit`, the posterior standard deviation of the response
#'   mean.
#' @param interval `"none"` or `"credible"`: add `.lower` and `.upper`, the
#'   pointwise credible interval of the response mean.
#' @param level Probability of the credible interval.
#' @param ... Unused.
#' @return A data frame: `tidy()` with columns `term`, `estimate` and
#'   `component` (`"kernel"` or `"likelihood"`); `glance()` with one row;
#'   `augment()` with the columns of `data` (or `newdata`) and those described
#'   above.
#' @examples
#' set.seed(1)
#' d <- data.frame(x = rnorm(40))
#' d$y <- factor(d$x + rnorm(40, sd = 0.5) > 0, labels = c("no", "yes"))
#' fit <- augp(y ~ x, d)
#' tidy(fit)
#' glance(fit)
#' head(augment(fit, se_fit = TRUE))
#' @name augp-tidiers
NULL

#' @importFrom generics tidy glance augment
#' @export
generics::tidy

#' @export
generics::glance

#' @export
generics::augment

#' @rdname augp-tidiers
#' @export
tidy.augp <- function(x, ...) {
  cf <- coef(x)
  if (is.matrix(cf)) {
    term <- sprintf("%s[%s]", rep(colnames(cf), each = nrow(cf)), rep(rownames(cf), ncol(cf)))
    est <- as.vector(cf)
  } else {
    term <- names(cf)
    est <- unname(cf)
  }
  kern <- data.frame(term = term, estimate = as.numeric(est), component = "kernel",
                     stringsAsFactors = FALSE)
  pv <- lik_param_values(x$likelihood)
  pv <- pv[!vapply(pv, is.null, logical(1))]
  lik <- do.call(rbind, lapply(names(pv), function(nm) {
    v <- pv[[nm]]
    lab <- if (length(v) == 1L) nm else
      sprintf("%s[%s]", nm, if (is.null(names(v))) seq_along(v) else names(v))
    data.frame(term = lab, estimate = as.numeric(v), component = "likelihood",
               stringsAsFactors = FALSE)
  }))
  out <- rbind(kern, lik)
  rownames(out) <- NULL
  out
}

#' @rdname augp-tidiers
#' @export
glance.augp <- function(x, ...) {
  vi <- x$method == "vi"
  d <- x$engine$draws
  # diagnostics of the identified quantities (the fitted response means), as summary()
  diag <- if (!vi) mcmc_extremes(mcmc_diagnostics(x, tail = FALSE))
  st <- lik_fit_stats(x$likelihood, x)
  out <- data.frame(
    nobs = x$n, method = x$method, likelihood = x$likelihood$name,
    kernel = kernel_label(x$kernel),
    elbo = if (vi) final_elbo(x) else NA_real_,
    converged = if (vi) isTRUE(x$engine$converged) && !isFALSE(x$engine$hyper_converged) else NA,
    ndraws = if (vi) NA_integer_ else as.integer(prod(dim(d)[1:2])),
    chains = if (vi) NA_integer_ else as.integer(dim(d)[2]),
    rhat_max = if (vi) NA_real_ else diag$rhat,
    ess_bulk_min = if (vi) NA_real_ else diag$ess_bulk,
    stringsAsFactors = FALSE)
  for (nm in names(st)) out[[nm]] <- as.numeric(st[[nm]])
  out$time <- as.numeric(x$time)
  out
}

#' @rdname augp-tidiers
#' @export
augment.augp <- function(x, data = NULL, newdata = NULL, se_fit = FALSE,
                         interval = c("none", "credible"), level = 0.95, ...) {
  check_flag(se_fit, "se_fit")
  interval <- match.arg(interval)
  check_number(level, "level", min = 0, max = 1, min_open = TRUE)
  if (level >= 1) stop("`level` must be a single number between 0 and 1.", call. = FALSE)
  lik <- x$likelihood
  training <- is.null(newdata)
  if (training) {
    if (is.null(data)) {
      data <- if (!is.null(x$model)) x$model[x$kept, , drop = FALSE] else
        stats::setNames(as.data.frame(x$x_raw), x$x_names)
    }
    data <- as.data.frame(data)
    if (nrow(data) != x$n) {
      stop(sprintf("`data` must have one row per observation used in the fit (%d).", x$n),
           call. = FALSE)
    }
  } else {
    data <- as.data.frame(newdata)
  }
  parts <- predict_parts(x, newdata, "response", se_fit, interval != "none", level)
  one <- ncol(parts$fit) == 1L
  col <- function(stem, M) {
    if (one) return(stats::setNames(list(unname(M[, 1])), stem))
    stats::setNames(lapply(seq_len(ncol(M)), function(k) unname(M[, k])),
                    paste0(stem, "_", colnames(M)))
  }
  add <- col(".fitted", parts$fit)
  if (se_fit) add <- c(add, col(".se.fit", parts$se.fit))
  if (interval != "none") add <- c(add, col(".lower", parts$lwr), col(".upper", parts$upr))
  if (training) {
    # observed share of each response column (the success, or each category) of the
    # row's trials, minus the fitted probability
    obs <- observed_counts(lik, x$y, x$trials, x$levels) / x$trials
    obs <- obs[, colnames(parts$fit), drop = FALSE]
    add <- c(add, col(".resid", obs - parts$fit))
  }
  rownames(data) <- NULL
  for (nm in names(add)) data[[nm]] <- add[[nm]]
  data
}
