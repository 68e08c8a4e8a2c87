#' Methods for augmented GP fits
#'
#' Printing, summaries and the usual extractor functions for objects of
#' class `augp`.
#'
#' @param object,x A fit from [augp()] or [augp_fit()].
#' @param type For `fitted()`: `"response"` (probabilities) or `"link"`
#'   (posterior mean of the latent function). With several latent functions
#'   these are matrices (one column per category or latent function).
#' @param digits Number of significant digits to print.
#' @param ... Unused.
#' @return `print()` returns `x` invisibly; `summary()` an object of class
#'   `summary.augp`; `fitted()` a numeric vector; `nobs()` the number of
#'   observations used; `logLik()` an object of class `logLik` holding the
#'   final ELBO (variational fits; `NA` for Gibbs fits) with attributes `df`
#'   (number of kernel hyperparameters) and `nobs`; `coef()` the kernel
#'   hyperparameters as a named vector, or, for fits with one kernel per
#'   latent function (`augp_control(shared_hyper = FALSE)`), a matrix with one
#'   row per latent function (class or stick) and one column per
#'   hyperparameter.
#' @details Sparse fits with minibatches (stochastic variational inference,
#'   see `batch_size` in [augp_control()]) run a fixed number of epochs rather
#'   than to a convergence tolerance, so `print()` and `summary()` report
#'   "SVI: E epochs" instead of converged / not converged, and `logLik()`,
#'   `print()` and `summary()` use the full-data ELBO computed by one pass over
#'   all observations after the last minibatch step (cost O(n m^2) for m
#'   inducing points), not the noisy last minibatch estimate.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, control = augp_control(hyper_maxit = 3))
#' summary(fit)
#' coef(fit)
#' logLik(fit)
#' @name augp-methods
NULL

#' @rdname augp-methods
#' @export
print.augp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Augmented GP classifier\n")
  if (!is.null(x$call)) {
    cat("Call: ", paste(deparse(x$call, width.cutoff = 70L), collapse = "\n"), "\n",
        sep = "")
  }
  cat(sprintf("Likelihood: %s | method: %s | n = %d, inputs = %d\n",
              x$likelihood$name, method_label(x$method), x$n, ncol(x$x)))
  print_lik_params(x$likelihood, digits)
  cat(if (is_kernel_list(x$kernel)) "Kernel hyperparameters (one row per latent function):\n"
      else "Kernel hyperparameters:\n")
  print(coef(x), digits = digits)
  print_convergence(x, digits)
  invisible(x)
}

#' @rdname augp-methods
#' @export
summary.augp <- function(object, ...) {
  st <- lik_fit_stats(object$likelihood, object)
  out <- list(call = object$call, likelihood = object$likelihood$name,
              method = object$method, n = object$n, trials = sum(object$trials),
              inputs = colnames(object$x), dropped = object$dropped,
              kernel = object$kernel, coef = coef(object),
              stats = st, time = object$time,
              levels = object$levels, q = object$q,
              lik = object$likelihood, param_rounds = object$engine$param_rounds)
  out <- c(out, st, lik_param_values(object$likelihood), summary_convergence(object))
  class(out) <- "summary.augp"
  out
}

#' @rdname augp-methods
#' @export
print.summary.augp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Augmented GP classifier:", x$likelihood, "with", method_label(x$method), "\n")
  if (!is.null(x$call)) {
    cat("Call: ", paste(deparse(x$call, width.cutoff = 70L), collapse = "\n"), "\n",
        sep = "")
  }
  cat(sprintf("Data: n = %d observations (%s trials), %d input(s): %s\n", x$n,
              format(x$trials), length(x$inputs), paste(x$inputs, collapse = ", ")))
  if (length(x$dropped)) {
    cat("Dropped (zero variance):", paste(x$dropped, collapse = ", "), "\n")
  }
  if (length(x$levels) > 2L || x$q > 1L) {
    cat(sprintf("Categories (%d): %s | latent functions: %d (%s)\n",
                length(x$levels), paste(x$levels, collapse = ", "), x$q,
                if (is_kernel_list(x$kernel)) "one kernel each" else "shared kernel"))
  }
  print_lik_params(x$lik, digits, x$param_rounds)
  cat("Kernel:", kernel_label(x$kernel), "\n")
  cat(if (is.matrix(x$coef)) "Hyperparameters (one row per latent function):\n" else
    "Hyperparameters:\n")
  print(x$coef, digits = digits)
  print_summary_convergence(x, digits)
  lab <- attr(x$stats, "labels")
  cat(paste(c(vapply(names(lab), function(nm) sprintf(lab[[nm]], x$stats[[nm]]), ""),
              sprintf("fit time: %.2f s", x$time)), collapse = " | "), "\n", sep = "")
  invisible(x)
}

#' @rdname augp-methods
#' @export
fitted.augp <- function(object, type = c("response", "link"), ...) {
  type <- match.arg(type)
  fit <- if (type == "link") {
    matrix(object$engine$mean, ncol = object$q,
           dimnames = list(NULL, latent_names(object$likelihood, object$levels, object$q)))
  } else {
    object$fitted
  }
  present_response(object$likelihood, list(fit = fit))
}

# Training accuracy (share of the counts in the most probable level) and log loss per
# count (trial), from the fitted response mean: the training statistics of likelihoods
# whose response is counts over levels (their lik_fit_stats() methods).
classification_stats <- function(object) {
  lik <- object$likelihood
  P <- pmax(category_prob(lik, object$fitted, object$levels), 1e-12)
  Y <- observed_counts(lik, object$y, object$trials, object$levels)
  top <- max.col(P, ties.method = "first")
  structure(list(accuracy = sum(Y[cbind(seq_len(nrow(Y)), top)]) / sum(Y),
                 logloss = -sum(Y * log(P)) / sum(Y)),
            labels = c(accuracy = "Training accuracy: %.3f", logloss = "log loss: %.4f"))
}

#' @rdname augp-methods
#' @importFrom stats nobs coef predict
#' @export
nobs.augp <- function(object, ...) object$n

#' @rdname augp-methods
#' @export
logLik.augp <- function(object, ...) {
  val <- if (object$method == "vi") final_elbo(object) else NA_real_
  structure(val, df = length(coef(object)), nobs = object$n, class = "logLik")
}

#' @rdname augp-methods
#' @export
coef.augp <- function(object, ...) {
  if (!is_kernel_list(object$kernel)) return(kernel_hyper(object$kernel))
  M <- do.call(rbind, lapply(object$kernel, kernel_hyper))
  rownames(M) <- latent_names(object$likelihood, object$levels, object$q)
  M
}

method_label <- function(method) {
  if (method == "vi") "variational inference" else "Gibbs sampling"
}

# Final ELBO of a VI fit. Sparse SVI fits (minibatches) report the full-data ELBO
# from one pass at the end (`elbo_full`; NA with control final_elbo = FALSE), never
# the noisy last minibatch estimate.
final_elbo <- function(object) {
  if (is_svi_engine(object$engine)) return(object$engine$elbo_full)
  e <- object$engine$elbo
  if (length(e)) e[length(e)] else NA_real_
}

is_svi_engine <- function(engine) {
  inherits(engine, "augp_sparse_engine") && isFALSE(engine$sparse$full_batch)
}

# Convergence label of a VI fit. SVI runs a fixed number of epochs (no
# convergence test), so it reports "SVI: E epochs" instead.
vi_status <- function(engine) {
  if (is_svi_engine(engine)) {
    ep <- engine$sparse$epochs
    return(sprintf("SVI: %s epoch%s, batch %d", format(signif(ep, 3)), if (isTRUE(ep == 1)) "" else "s",
                   as.integer(engine$sparse$batch_size)))
  }
  if (isTRUE(engine$converged)) "converged" else "not converged"
}

# Kernel hyperparameters (natural scale) as a named numeric vector.
kernel_hyper <- function(kernel) exp(kernel_get_params(kernel))

kernel_label <- function(kernel) {
  if (is_kernel_list(kernel)) {
    return(sprintf("%s, one per latent function (%d)", kernel_form(kernel[[1]]),
                   length(kernel)))
  }
  lab <- tryCatch(format(kernel), error = function(e) class(kernel)[1])
  paste(lab, collapse = " ")
}

# The form of a kernel without its values, e.g. "kernel_se() + kernel_linear()".
kernel_form <- function(kernel) {
  switch(kernel$type,
    sum = sprintf("%s + %s", kernel_form(kernel$k1), kernel_form(kernel$k2)),
    prod = {
      wrap <- function(k) if (k$type == "sum") paste0("(", kernel_form(k), ")") else kernel_form(k)
      sprintf("%s * %s", wrap(kernel$k1), wrap(kernel$k2))
    },
    matern = sprintf("kernel_matern(nu = %s)", format(kernel$nu)),
    sprintf("kernel_%s()", kernel$type))
}
