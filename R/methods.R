#' Methods for augmented GP fits
#'
#' Printing, summaries and the usual extractor functions for objects of
#' class `augp`, with their meaning for [stats::glm()] fits where a GP fit has
#' one.
#'
#' @param object,x,formula A fit from [augp()] or [augp_fit()] (`formula` is
#'   the fit for `model.frame()`, whose generic names its first argument so).
#' @param type For `fitted()`: `"response"` (probabilities) or `"link"`
#'   (posterior mean of the latent function). With several latent functions
#'   these are matrices (one column per category or latent function). For
#'   `weights()`: `"prior"` (the only type).
#' @param units For `coef()`: `"data"` (the default) gives lengthscales and
#'   periods in the units of the inputs; `"standardised"` the values on the
#'   internal scale of the standardised inputs (see [kernels]).
#' @param digits Number of significant digits to print.
#' @param ... Unused.
#' @return `print()` returns `x` invisibly; `summary()` an object of class
#'   `summary.augp`; `fitted()` a numeric vector (a matrix with several
#'   response columns); `nobs()` the number of observations used;
#'   `coef()` the kernel hyperparameters as a named vector, or, for fits with
#'   one kernel per latent function (`augp_control(shared_hyper = FALSE)`), a
#'   matrix with one row per latent function (class or stick) and one column
#'   per hyperparameter.
#'
#'   `formula()`, `terms()` and `model.frame()` give the model formula, its
#'   terms and the model frame of a formula fit (an error for fits from
#'   [augp_fit()], which have none); `model.matrix()` the design as the fit saw
#'   it before standardising, in the units of the data (factors dummy coded,
#'   rows used in the fit, no intercept column); `weights()` the frequency
#'   weights of the rows used (1 without weights), as glm's prior weights;
#'   `family()` the likelihood object (e.g. [bernoulli_logit()]; not a
#'   [stats::family()] object); `deviance()` the residual deviance at the fitted
#'   (posterior predictive mean) probabilities, twice the log-likelihood ratio
#'   of the saturated model to them, as for a binomial or multinomial glm.
#' @details Units: `coef()` and `print()` report lengthscales and periods in the
#'   units of the inputs: with standardised inputs (the default) a lengthscale
#'   \eqn{l} on the internal scale is \eqn{l s_d} for input \eqn{d} with
#'   standard deviation \eqn{s_d}. A single (isotropic) lengthscale on several
#'   inputs is then reported once per input (`se.lengthscale.<input>`): the
#'   kernel is isotropic on the standardised inputs, not on the data.
#'   Variances are on the scale of the latent function and need no conversion.
#'
#'   Not defined for GP fits, with an error that says what to use instead:
#'   `logLik()` (and so `AIC()`, `BIC()`): a variational fit maximises the
#'   ELBO, a lower bound on the log marginal likelihood, not a log-likelihood
#'   at estimated parameters; use [elbo()] for the bound. `vcov()`,
#'   `confint()`: the latent function has no finite parameter vector; use
#'   `predict(fit, se.fit = TRUE)` or `predict(fit, interval = "credible")`.
#'   `anova()`, `df.residual()`: a GP has no residual degrees of freedom or
#'   nested parameter tests. `sigma()`: the likelihoods of binary and
#'   categorical data have no scale parameter.
#'
#'   Sparse fits with minibatches (stochastic variational inference,
#'   see `batch_size` in [augp_control()]) run a fixed number of epochs rather
#'   than to a convergence tolerance, so `print()` and `summary()` report
#'   "SVI: E epochs" instead of converged / not converged, and [elbo()],
#'   `print()` and `summary()` use the full-data ELBO computed by one pass over
#'   all observations after the last minibatch step (cost O(n m^2) for m
#'   inducing points), not the noisy last minibatch estimate.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y)
#' summary(fit)
#' coef(fit)
#' coef(fit, units = "standardised")
#' elbo(fit)
#' deviance(fit)
#' head(residuals(fit, type = "pearson"))
#' family(fit)
#' @name augp-methods
NULL

#' @rdname augp-methods
#' @export
print.augp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Augmented GP %s\n", lik_model_label(x$likelihood)))
  if (!is.null(x$call)) {
    cat("Call: ", paste(deparse(x$call, width.cutoff = 70L), collapse = "\n"), "\n",
        sep = "")
  }
  cat(sprintf("Likelihood: %s | method: %s | n = %d, inputs = %d\n",
              x$likelihood$name, method_label(x$method, x$engine), x$n, ncol(x$x)))
  inf <- inference_label(x)
  if (!is.null(inf)) cat(inf, "\n", sep = "")
  sp <- sparse_label(x)
  if (!is.null(sp)) cat(sp, "\n", sep = "")
  print_lik_params(x$likelihood, digits)
  ks <- kernel_search_label(x)
  if (!is.null(ks)) cat(ks, "\n", sep = "")
  ml <- mixture_label(x)
  if (!is.null(ml)) cat(ml, "\n", sep = "")
  cat(hyper_heading(x, "Kernel hyperparameters"))
  print(coef(x), digits = digits)
  print_convergence(x, digits)
  invisible(x)
}

#' @rdname augp-methods
#' @export
summary.augp <- function(object, ...) {
  st <- lik_fit_stats(object$likelihood, object)
  out <- list(call = object$call, likelihood = object$likelihood$name,
              model = lik_model_label(object$likelihood),
              method = object$method, n = object$n, trials = sum(object$trials),
              inputs = colnames(object$x), dropped = object$dropped,
              kernel = object$kernel, kernel_data = kernel_to_data(object$kernel, object$scale),
              coef = coef(object), hyper_heading = hyper_heading(object, "Hyperparameters"),
              sparse = sparse_label(object), inference = inference_label(object),
              stats = st, time = object$time,
              levels = object$levels, q = object$q,
              lik = object$likelihood, param_rounds = object$engine$param_rounds,
              kernel_search = kernel_search_label(object),
              kernel_search_table = object$kernel_search, mixture = mixture_label(object),
              mixture_hyper = mixture_hyper_summary(object),
              exact_gaussian = isTRUE(object$engine$exact_gaussian))
  out <- c(out, st, lik_param_values(object$likelihood), summary_convergence(object))
  class(out) <- "summary.augp"
  out
}

#' @rdname augp-methods
#' @export
print.summary.augp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Augmented GP %s: %s with %s\n", if (is.null(x$model)) "model" else x$model,
              x$likelihood, method_label(x$method, exact = x$exact_gaussian)))
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
    cat(sprintf("%s: %d (%s)\n",
                if (length(x$levels)) sprintf("Categories (%d): %s | latent functions", length(x$levels),
                                              paste(x$levels, collapse = ", ")) else "Latent functions",
                x$q, if (is_kernel_list(x$kernel)) "one kernel each" else "shared kernel"))
  }
  if (!is.null(x$inference)) cat(x$inference, "\n", sep = "")
  if (!is.null(x$sparse)) cat(x$sparse, "\n", sep = "")
  print_lik_params(x$lik, digits, x$param_rounds)
  if (!is.null(x$kernel_search)) cat(x$kernel_search, "\n", sep = "")
  print_kernel_search_table(x$kernel_search_table, digits)
  cat("Kernel (data units):", kernel_label(if (is.null(x$kernel_data)) x$kernel else x$kernel_data),
      "\n")
  cat(if (is.null(x$hyper_heading)) "Hyperparameters:\n" else x$hyper_heading)
  print(x$coef, digits = digits)
  if (!is.null(x$mixture)) cat(x$mixture, "\n", sep = "")
  print_mixture_hyper_summary(x$mixture_hyper, digits)
  print_summary_convergence(x, digits)
  lab <- attr(x$stats, "labels")
  cat(paste(c(vapply(names(lab), function(nm) sprintf(lab[[nm]], x$stats[[nm]]), ""),
              sprintf("fit time: %.2f s", x$time)), collapse = " | "), "\n", sep = "")
  invisible(x)
}

# The heading of the hyperparameter table: the units, one row per latent function for
# per-latent kernels, and a note when one lengthscale (or period) serves several inputs
# of different scales (reported once per input).
hyper_heading <- function(object, what) {
  k <- if (is_kernel_list(object$kernel)) object$kernel[[1]] else object$kernel
  notes <- c(if (isTRUE(object$kernel_default)) sprintf("%s, the likelihood's default kernel", kernel_form(k))
             else if (!is.null(object$kernel_search)) sprintf("%s, chosen by the kernel search", kernel_form(k)),
             "data units", if (is_kernel_list(object$kernel)) "one row per latent function")
  head <- sprintf("%s (%s):\n", what, paste(notes, collapse = "; "))
  if (kernel_shared_scale(k, object$scale)) {
    head <- paste0(head, "  (isotropic on the standardised inputs: one lengthscale l is ",
                   "l x sd of each input, listed per input)\n")
  }
  head
}

# Does a kernel have a lengthscale or period shared by several input columns of
# different scales?
kernel_shared_scale <- function(k, scale) {
  if (k$type %in% c("sum", "prod")) {
    return(kernel_shared_scale(k$k1, scale) || kernel_shared_scale(k$k2, scale))
  }
  (k$type == "periodic" || length(k$lengthscale) == 1L) &&
    !scales_equal(scale[kernel_leaf_cols(k, length(scale))])
}

# A line on the inducing points of a sparse fit (NULL for exact GPs): m, how they were
# placed, whether their locations were learned, and full-batch CAVI or the minibatch
# size and epochs of stochastic VI.
sparse_label <- function(object) {
  eng <- object$engine
  if (!inherits(eng, "augp_sparse_engine")) return(NULL)
  info <- object$inducing_info
  placement <- if (is.null(info)) "unknown" else
    switch(info$placement, kmeans = "k-means", random = "random", user = "user-given",
           info$placement)
  learned <- if (is.null(info)) "" else if (isTRUE(info$learned)) ", locations learned" else
    ", locations fixed"
  sp <- eng$sparse
  how <- if (isTRUE(sp$full_batch)) "full-batch CAVI" else
    sprintf("stochastic VI: batch size %d, %s epoch%s", as.integer(sp$batch_size),
            format(signif(sp$epochs, 3)), if (isTRUE(sp$epochs == 1)) "" else "s")
  sprintf("Sparse GP: m = %d inducing points (%s placement%s), %s", nrow(eng$Z), placement,
          learned, how)
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
  present_response(object$likelihood, list(fit = pad_excluded(object, fit)))
}

#' Residuals of an augmented GP fit
#'
#' Residuals of the observed response against the fitted values (the
#' posterior predictive mean of the response at the training inputs, as
#' [fitted.augp()]), with the meanings of [stats::residuals.glm()].
#'
#' With \eqn{y_i} the observed mean response (the proportion of successes
#' out of the \eqn{N_i} trials of a binomial row; 0 or 1 for a Bernoulli row)
#' and \eqn{\hat p_i} the fitted probability:
#' * `"response"`: \eqn{y_i - \hat p_i}.
#' * `"pearson"`: \eqn{(y_i - \hat p_i) / \sqrt{\hat p_i (1 - \hat p_i) / N_i}},
#'   the response residual over the likelihood's standard deviation of
#'   \eqn{y_i} at \eqn{\hat p_i}.
#' * `"deviance"` (the default, as for glm): the sign of the response residual
#'   times the square root of the observation's contribution to the binomial
#'   deviance; their squares sum to [deviance()][augp-methods].
#'
#' Frequency weights multiply the trials, as glm's prior weights do.
#'
#' For likelihoods with several categories ([logistic_softmax()],
#' [stick_breaking()]) the residuals are a matrix with one column per
#' category: \eqn{y_{ik}} is the proportion of row \eqn{i}'s counts in
#' category \eqn{k}, the Pearson residual divides by the multinomial standard
#' deviation \eqn{\sqrt{\hat p_{ik}(1 - \hat p_{ik}) / N_i}}, and the deviance
#' residual is that of category \eqn{k} against all the others (a binomial
#' deviance residual). The residual deviance, [deviance()][augp-methods], is the
#' multinomial one, which does not split into signed per-category terms, so
#' the squares of these deviance residuals do not sum to it.
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param type `"deviance"`, `"pearson"` or `"response"`.
#' @param ... Unused.
#' @return A numeric vector with one value per observation used in the fit (a
#'   matrix with one column per category for several categories). With
#'   `na.action = na.exclude` in [augp()], rows with missing values (and rows
#'   dropped for zero weight) are `NA`, so the result lines up with the data.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y)
#' r <- residuals(fit)
#' all.equal(sum(r^2), deviance(fit))
#' head(residuals(fit, type = "pearson"))
#' @export
residuals.augp <- function(object, type = c("deviance", "pearson", "response"), ...) {
  type <- match.arg(type)
  lik <- object$likelihood
  mu <- object$fitted
  parts <- lik_residual_parts(lik, object$y, object$trials, object$levels, mu)
  # a variance that depends on the fit (input-dependent noise): sigma(fit)^2 per copy
  if (is.null(parts$var)) parts$var <- matrix(lik_sigma(lik, object)^2 / object$trials, ncol = 1L)
  r <- parts$observed - mu
  out <- switch(type,
    response = r,
    pearson = r / sqrt(parts$var),
    deviance = sign(r) * sqrt(pmax(parts$unit_deviance, 0)))
  out <- matrix(out, nrow(mu), dimnames = dimnames(mu))
  present_response(lik, list(fit = pad_excluded(object, out)))
}

# Results at the rows used in the fit (a vector or matrix with one row each) padded
# with NA to the rows of the data when augp() had na.action = na.exclude: rows dropped
# for zero weight or trials (not in `kept`) first, then those naresid() restores.
pad_excluded <- function(object, M) {
  na <- object$na.action
  if (!inherits(na, "exclude") || is.null(object$model)) return(M)
  n_mf <- nrow(object$model)
  if (length(object$kept) != n_mf) {
    if (is.null(dim(M))) {
      full <- rep(NA_real_, n_mf)
      full[object$kept] <- M
    } else {
      full <- matrix(NA_real_, n_mf, ncol(M), dimnames = list(NULL, colnames(M)))
      full[object$kept, ] <- M
    }
    M <- full
  }
  stats::naresid(na, M)
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
#' @importFrom stats nobs coef predict residuals fitted formula terms model.frame
#'   model.matrix weights family deviance df.residual sigma vcov confint anova logLik
#' @export
nobs.augp <- function(object, ...) object$n

#' @rdname augp-methods
#' @export
coef.augp <- function(object, units = c("data", "standardised"), ...) {
  units <- check_choice(if (identical(units, "standardized")) "standardised" else units,
                        "units", c("data", "standardised"))
  hyper <- if (units == "data") function(k) kernel_hyper_data(k, object$scale) else kernel_hyper
  if (!is_kernel_list(object$kernel)) return(hyper(object$kernel))
  M <- do.call(rbind, lapply(object$kernel, hyper))
  rownames(M) <- latent_names(object$likelihood, object$levels, object$q)
  M
}

#' @rdname augp-methods
#' @export
formula.augp <- function(x, ...) {
  if (is.null(x$terms)) stop_no_formula("formula")
  if (isTRUE(x$gp_terms)) return(x$formula)
  f <- stats::formula(x$terms)
  if (!is.null(x$formula)) environment(f) <- environment(x$formula)
  f
}

#' @rdname augp-methods
#' @export
terms.augp <- function(x, ...) {
  if (is.null(x$terms)) stop_no_formula("terms")
  x$terms
}

#' @rdname augp-methods
#' @export
model.frame.augp <- function(formula, ...) {
  if (is.null(formula$model)) stop_no_formula("model.frame")
  formula$model
}

#' @rdname augp-methods
#' @export
model.matrix.augp <- function(object, ...) {
  X <- object$x_raw
  if (is.null(colnames(X))) colnames(X) <- object$x_names
  if (!is.null(object$contrasts)) attr(X, "contrasts") <- object$contrasts
  X
}

#' @rdname augp-methods
#' @export
weights.augp <- function(object, type = "prior", ...) {
  check_choice(type, "type", "prior")
  w <- object$prior_weights
  if (is.null(w)) w <- rep(1, object$n)
  pad_excluded(object, w)
}

#' @rdname augp-methods
#' @export
family.augp <- function(object, ...) object$likelihood

#' @rdname augp-methods
#' @export
deviance.augp <- function(object, ...) {
  lik_deviance(object$likelihood, object$y, object$trials, object$levels, object$fitted)
}

#' @rdname augp-methods
#' @export
logLik.augp <- function(object, ...) {
  stop(paste0("logLik() is not defined for augp fits: a variational fit maximises the ELBO, ",
              "a lower bound on the log marginal likelihood, not a log-likelihood at ",
              "estimated parameters (and AIC()/BIC() would need one). Use elbo(fit) for the ",
              "bound of a variational fit; compare models on held-out data or by ",
              "leave-one-out cross-validation."), call. = FALSE)
}

#' @rdname augp-methods
#' @export
vcov.augp <- function(object, ...) {
  stop(paste0("vcov() is not defined for a GP fit: the latent function has no finite ",
              "parameter vector. Use predict(fit, se.fit = TRUE) for posterior standard ",
              "deviations of the latent function or the probabilities."), call. = FALSE)
}

#' @rdname augp-methods
#' @param parm,level Unused: `confint()` is not defined for a GP fit.
#' @export
confint.augp <- function(object, parm, level = 0.95, ...) {
  stop(paste0("confint() is not defined for a GP fit: it has no finite parameter vector. ",
              "Use predict(fit, interval = \"credible\", level = ...) for pointwise ",
              "credible intervals of the latent function or the probabilities."), call. = FALSE)
}

#' @rdname augp-methods
#' @export
anova.augp <- function(object, ...) {
  stop(paste0("anova() is not defined for GP fits: a GP has no nested parameter tests or ",
              "residual degrees of freedom. Compare models on held-out data or by ",
              "leave-one-out cross-validation (or by elbo() for variational fits of the same ",
              "data)."), call. = FALSE)
}

#' @rdname augp-methods
#' @export
df.residual.augp <- function(object, ...) {
  stop(paste0("df.residual() is not defined for a GP fit: the latent function is ",
              "nonparametric and uses no fixed number of degrees of freedom."), call. = FALSE)
}

#' @rdname augp-methods
#' @export
sigma.augp <- function(object, ...) lik_sigma(object$likelihood, object)

stop_no_formula <- function(what) {
  stop(sprintf(paste0("%s(): the fit was made by augp_fit() from a matrix and has no ",
                      "formula; fit with augp() for one (model.matrix(fit) gives the ",
                      "design)."), what), call. = FALSE)
}

#' The evidence lower bound of a variational fit
#'
#' `elbo()` returns the final ELBO of a variational fit (`method = "vi"`): the
#' lower bound on the log marginal likelihood \eqn{\log p(y)} that the fit
#' maximises, at the fitted kernel hyperparameters (and likelihood
#' parameters). Larger is better for fits of the same data; it is not a
#' log-likelihood, and `logLik()` is not defined for `augp` fits. For sparse
#' fits on minibatches (SVI) it is the full-data ELBO computed after the last
#' step. For fits refined by `augp_control(refine = )` it is the direct ELBO
#' \eqn{E_q[\log p(y \mid f)] - KL(q(f) \| p(f))} of the refined \eqn{q(f)}
#' (the bound the refinement maximises; also a lower bound on \eqn{\log p(y)}).
#'
#' @param object A variational fit from [augp()] or [augp_fit()].
#' @param ... Unused.
#' @return A single number. Gibbs fits have no ELBO (an error).
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y)
#' elbo(fit)
#' @export
elbo <- function(object, ...) UseMethod("elbo")

#' @rdname elbo
#' @export
elbo.augp <- function(object, ...) {
  if (object$method != "vi") {
    stop(paste0("`object` is a Gibbs fit (method = \"gibbs\"), which has no ELBO: its ",
                "posterior is the sampler's draws. Compare Gibbs fits on held-out data or ",
                "by leave-one-out cross-validation."), call. = FALSE)
  }
  e <- final_elbo(object)
  if (!is.finite(e)) {
    stop(paste0("`object`: the full-data ELBO of this minibatch fit was not computed ",
                "(augp_control(final_elbo = FALSE)); refit with final_elbo = TRUE."),
         call. = FALSE)
  }
  e
}

# How print() and summary() name the inference. A conjugate Gaussian fit's "variational"
# posterior is the exact posterior (the ELBO is tight there), so it is named as such.
method_label <- function(method, engine = NULL, exact = isTRUE(engine$exact_gaussian)) {
  if (method != "vi") return("Gibbs sampling")
  if (isTRUE(exact)) "exact posterior (conjugate Gaussian)" else "variational inference"
}

# Final ELBO of a VI fit. Sparse SVI fits (minibatches) report the full-data ELBO
# from one pass at the end (`elbo_full`; NA with control final_elbo = FALSE), never
# the noisy last minibatch estimate.
final_elbo <- function(object) {
  if (!is.null(object$engine$elbo_direct)) return(object$engine$elbo_direct)
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
    return(svi_label(engine))
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
