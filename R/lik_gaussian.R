# Gaussian likelihood for GP regression: a numeric response y ~ N(f, sigma^2), one
# latent column, response mean f (identity link). Frequency weights are the engine's
# `trials` (t copies of a row). The noise scale sigma is learned by the ELBO (closed
# form, src/lik_gaussian.cpp) unless given. The constructor is gaussian_noise(), not
# gaussian(), so that stats::gaussian() (accepted by check_likelihood()) stays unmasked. student_t() objects (class
# c("augp_student_t", "augp_gaussian", ...)) inherit every method here except their
# constructor, engine specification, parameters and deviance (R/lik_student_t.R).

#' Gaussian likelihood for GP regression
#'
#' The observation model \eqn{y_i \mid f_i \sim N(f_i, \sigma^2)} for a numeric
#' response: GP regression. Conditionally on \eqn{f} the model is already
#' Gaussian, so the variational fit is the exact posterior and its ELBO the exact
#' log marginal likelihood at the given hyperparameters; the Gibbs sampler draws
#' from the exact posterior.
#'
#' `likelihood = gaussian()` (the stats family, identity link, as in
#' [stats::glm()]) is the same as `gaussian_noise()`; the constructor has its own
#' name so that attaching the package does not mask [stats::gaussian()].
#'
#' [augp()] picks this likelihood by itself for a numeric response with
#' non-integer values (whole numbers are read as classes or counts; give
#' `likelihood = gaussian_noise()` to regress on them). The prior mean of the latent
#' function is the (weighted) mean of `y`. Frequency `weights` count repeated
#' observations.
#'
#' A kernel's default variance (`variance = NULL`) is the variance of `y`
#' here, so the default kernels start on the scale of the response.
#' The default kernel (`kernel = NULL` in [augp()] and [augp_fit()]) is
#' `kernel_matern(nu = 2.5)`; give `kernel = kernel_se()` for the squared
#' exponential (the default of every other likelihood, [student_t()] and
#' [laplace()] included).
#'
#' On the exact GP the noise scale \eqn{\sigma} and the kernel hyperparameters
#' are learned together by maximising the exact log marginal likelihood
#' \eqn{\log N(y \mid m_0, K + \sigma^2 I)} (which the ELBO equals here), a
#' quasi-Newton search with its exact gradient starting from
#' \eqn{\sigma = } `sd(y) / 2`; with several inputs the squared exponential
#' or Matern kernel at its default lengthscale may get one lengthscale per
#' input (see `ard` in [augp_control()]; `print()` says what was chosen).
#' Sparse (`inducing`) fits learn \eqn{\sigma} by maximising the ELBO (closed
#' form \eqn{\sigma^2 = \mathrm{mean}((y - m)^2 + v)} given
#' \eqn{q(f) = N(m, v)}), alternating with the updates of \eqn{q(u)}. With `method = "gibbs"`
#' \eqn{\sigma} is learned by the variational fit and then held fixed, or, with
#' `augp_control(sample_hyper = TRUE)`, sampled from its conditional given
#' \eqn{f} under a half Student-t prior with 3 degrees of freedom and scale 2.5
#' standard deviations of `y` (as brms's default; set another with
#' `augp_prior(likelihood = list(sigma = ...))`, see [priors]).
#'
#' `predict(type = "response")` gives the mean of `y` (equal to \eqn{f});
#' `interval = "credible"` the interval for \eqn{f} and `interval =
#' "prediction"` the interval for a new observation, \eqn{N(m, v + \sigma^2)}.
#'
#' @param sigma `NULL` (learn the noise scale by the ELBO) or a positive number
#'   (fixed noise standard deviation).
#' @return An object of class `c("augp_gaussian", "augp_likelihood")`.
#' @seealso [student_t()] for a robust version, [augp()], [likelihoods]
#' @examples
#' gaussian_noise()
#' gaussian_noise(sigma = 0.1)
#' set.seed(1)
#' x <- seq(0, 1, length.out = 30)
#' fit <- augp_fit(x, sin(6 * x) + rnorm(30, sd = 0.2), likelihood = gaussian_noise())
#' sigma(fit)
#' @export
gaussian_noise <- function(sigma = NULL) {
  if (!is.null(sigma)) sigma <- check_positive_scalar(sigma, "sigma")
  new_likelihood("gaussian", family = "gaussian", link = "identity", sigma = sigma,
                 learn_sigma = is.null(sigma))
}

# A single positive finite number, or an error naming `arg`.
check_positive_scalar <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) || x <= 0) {
    stop(sprintf("`%s` must be a single positive, finite number.", arg), call. = FALSE)
  }
  as.double(x)
}

#' @export
print.augp_gaussian <- function(x, ...) {
  cat(sprintf("<augp_likelihood> %s (link: identity; %s)\n", x$name, lik_params_text(x)))
  invisible(x)
}

lik_params_text <- function(likelihood) UseMethod("lik_params_text")

#' @export
lik_params_text.augp_gaussian <- function(likelihood) {
  sprintf("sigma %s", param_text(likelihood$sigma, likelihood$learn_sigma, "sigma" %in% likelihood$sampled,
                                 by = if (is.null(likelihood$learned_by)) "the ELBO" else likelihood$learned_by))
}

# A likelihood parameter as print() shows it: its value and how the fit got it (`by`: the
# objective that learned it).
param_text <- function(value, learned, sampled = FALSE, by = "the ELBO") {
  if (is.null(value)) return(paste("learned by", by))
  how <- if (isTRUE(sampled)) ", sampled (posterior median)" else if (isTRUE(learned))
    paste(", learned by", by) else ", fixed"
  sprintf("%s%s", format(value, digits = 4), how)
}

#' @export
encode_response.augp_gaussian <- function(likelihood, y, weights = NULL) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop(sprintf("`y` (the response) must be a numeric vector for %s().", likelihood$name),
         call. = FALSE)
  }
  if (is.factor(y) || is.character(y) || is.logical(y) || !is.numeric(y)) {
    stop(sprintf(paste0("`y` (the response) must be numeric for %s(), not %s; use ",
                        "bernoulli_logit() or logistic_softmax() for classes."),
                 likelihood$name, class(y)[1]), call. = FALSE)
  }
  if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
  if (any(!is.finite(y))) stop("`y` (the response) contains Inf or NaN.", call. = FALSE)
  w <- check_weights(weights, length(y))
  keep <- w > 0
  y <- as.double(y)
  if (sum(keep) >= 1L && diff(range(y[keep])) == 0) {
    stop("`y` (the response) is constant: there is nothing to regress.", call. = FALSE)
  }
  list(y = y, trials = w, levels = character(0), keep = keep)
}

#' @export
response_data.augp_gaussian <- function(likelihood, resp) resp$y

# The starting noise scale: the fixed value, or half the (weighted) sd of y.
lik_sigma_start <- function(likelihood, resp) {
  if (!is.null(likelihood$sigma)) return(likelihood$sigma)
  w <- resp$trials
  mu <- sum(w * resp$y) / sum(w)
  0.5 * sqrt(sum(w * (resp$y - mu)^2) / sum(w))
}

#' @export
engine_lik_spec.augp_gaussian <- function(likelihood, resp) {
  list(type = "gaussian", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials),
       sigma = lik_sigma_start(likelihood, resp))
}

# Full Bayes: sigma under a half-t(3) prior with scale 2.5 sd(y) when it is learned.
#' @export
lik_param_priors.augp_gaussian <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_sigma)) return(list())
  list(sigma = list(prior = new_prior_dist("half_t", 3, 2.5 * lik_latent_scale(likelihood, resp)),
                    n = 1L, positive = TRUE))
}

# The weighted mean of y.
# The kernel's default variance is var(y) (weighted by the frequency weights).
#' @export
lik_latent_scale.augp_gaussian <- function(likelihood, resp) {
  w <- resp$trials / sum(resp$trials)
  mu <- sum(w * resp$y)
  s <- sqrt(sum(w * (resp$y - mu)^2))
  if (s > 0) s else 1
}

# Gaussian-noise regression defaults to the Matern 5/2 kernel (the held-out comparison
# with the squared exponential is in bench/regression/results.md, section A7).
#' @export
lik_default_kernel.augp_gaussian <- function(likelihood) kernel_matern(nu = 2.5)

#' @export
lik_prior_mean.augp_gaussian <- function(likelihood, resp) sum(resp$trials * resp$y) / sum(resp$trials)

# The weighted response mean is the least-squares intercept on centred inputs.
#' @export
lik_prior_mean_is_level.augp_gaussian <- function(likelihood) TRUE

#' @export
lik_param_spec.augp_gaussian <- function(likelihood) {
  scalar_param_spec(likelihood, "gaussian", 1L, list(sigma = 1))
}

#' @export
lik_fitted.augp_gaussian <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, "sigma")
}

#' @export
response_names.augp_gaussian <- function(likelihood, levels) "mean"

#' @export
lik_accepts_offset.augp_gaussian <- function(likelihood) TRUE

# y | f ~ N(f, sigma^2): the marginal likelihood is closed-form.
#' @export
lik_exact_marginal.augp_gaussian <- function(likelihood) TRUE

#' @export
lik_model_label.augp_gaussian <- function(likelihood) "regression"

# The observed y, its variance sigma^2 / weight (Pearson residuals divide by sigma)
# and the unit deviance weight (y - mu)^2, as glm(family = gaussian).
#' @export
lik_residual_parts.augp_gaussian <- function(likelihood, y, trials, levels, mean) {
  mu <- mean[, 1]
  list(observed = matrix(y, ncol = 1L), var = matrix(likelihood$sigma^2 / trials, ncol = 1L),
       unit_deviance = matrix(lik_unit_deviance(likelihood, y, trials, mu), ncol = 1L))
}

lik_unit_deviance <- function(likelihood, y, trials, mu) UseMethod("lik_unit_deviance")

#' @export
lik_unit_deviance.augp_gaussian <- function(likelihood, y, trials, mu) trials * (y - mu)^2

#' @export
lik_deviance.augp_gaussian <- function(likelihood, y, trials, levels, mean) {
  sum(lik_unit_deviance(likelihood, y, trials, mean[, 1]))
}

#' @export
lik_sigma.augp_gaussian <- function(likelihood, object) likelihood$sigma

# The noise sd of predict(type = "noise"): the same at every input, summarised over the
# values the fit holds for it (lik_noise_sd_values()): the posterior draws of a
# full-Bayes fit, the points of a fit averaged over its hyperparameters, or the one
# fitted value (sd 0, an interval of width 0).
#' @export
lik_noise_summary.augp_gaussian <- function(likelihood, object, lp, level) {
  s <- lik_noise_sd_values(likelihood, object)
  r <- nrow(lp$mean)
  const <- function(v) matrix(v, r, 1L)
  out <- list(mean = const(mean(s)), sd = const(if (length(s) > 1L) stats::sd(s) else 0))
  if (level > 0) {
    q <- stats::quantile(s, c((1 - level) / 2, 1 - (1 - level) / 2), names = FALSE)
    out$lwr <- const(q[1])
    out$upr <- const(q[2])
  }
  out
}

#' The noise standard deviation over the fit's posterior (internal generic)
#'
#' A vector of values of the (constant) noise sd, one per posterior draw or mixture
#' point of the fit, or the one fitted value (fit_param_values()). gaussian_noise()
#' and student_t(): sigma; laplace(): sqrt(2) times its scale.
#' @noRd
lik_noise_sd_values <- function(likelihood, object) UseMethod("lik_noise_sd_values")

#' @export
lik_noise_sd_values.augp_gaussian <- function(likelihood, object) fit_param_values(object, "sigma")

#' @export
present_response.augp_gaussian <- function(likelihood, parts) {
  if (length(parts) == 1L) return(parts[[1]][, 1])
  as.data.frame(lapply(parts, function(p) unname(p[, 1])))
}

#' @export
category_prob.augp_gaussian <- function(likelihood, mean, levels) {
  stop(sprintf(paste0("`type = \"class\"` is not available for the %s likelihood ",
                      "(a continuous response); use type = \"response\"."), likelihood$name),
       call. = FALSE)
}

#' @export
observed_response.augp_gaussian <- function(likelihood, y, trials, levels) y

# The observed totals of the response column (trials x y, as for counts), so that
# totals / trials is the observed mean augment() and the binned checks compare with.
#' @export
observed_counts.augp_gaussian <- function(likelihood, y, trials, levels) {
  matrix(y * trials, ncol = 1L, dimnames = list(NULL, "mean"))
}

# simulate(): a data frame of simulated responses (the mean of `size` replicates).
# A continuous response: overlaid densities of the data and of replicated data sets.
#' @export
pp_check_type.augp_gaussian <- function(likelihood, trials) "dens_overlay"

#' @export
present_simulation.augp_gaussian <- function(likelihood, counts, size, ok, levels, rownames) {
  scalar_simulation_frame(counts, ok, rownames, size[ok])
}

#' @export
present_predictive.augp_gaussian <- function(likelihood, counts, size, levels) {
  scalar_predictive(counts, size)
}

#' @export
observed_predictive.augp_gaussian <- function(likelihood, y, trials, levels) as.numeric(y)

#' @export
encode_new_response.augp_gaussian <- function(likelihood, y, levels) {
  if (!is.numeric(y) || is.matrix(y) || anyNA(y) || any(!is.finite(y))) {
    stop(sprintf("`newdata`: the response must be a finite numeric vector for %s().",
                 likelihood$name), call. = FALSE)
  }
  n <- length(y)
  list(y = as.double(y), trials = rep(1, n), levels = levels, keep = rep(TRUE, n))
}

#' @export
plot_predictive_lik.augp_gaussian <- function(likelihood, object, inp, dat, grid, level) {
  plot_predictive_regression(object, inp, dat, grid, level)
}

# simulate() and posterior_predict() for a response with one column: a data frame with
# one column per simulation and an S x r matrix, each response divided by `per` (the
# number of replicates of its row, for a mean of them; 1 for their total).
scalar_simulation_frame <- function(counts, ok, rownames, per) {
  nsim <- dim(counts)[1]
  out <- matrix(NA_real_, length(ok), nsim,
                dimnames = list(rownames, paste0("sim_", seq_len(nsim))))
  out[ok, ] <- t(matrix(counts[, , 1], nsim)) / per
  as.data.frame(out)
}

scalar_predictive <- function(counts, per) {
  matrix(counts[, , 1], dim(counts)[1], dim(counts)[2]) / rep(per, each = dim(counts)[1])
}

# The plotted frames of a response with one column (a mean, a count or a rate), in the
# category `label`.
scalar_response_frame <- function(pred, label) {
  r <- nrow(pred)
  data.frame(.row = seq_len(r), category = factor(rep(label, r)),
             estimate = pred$fit, lower = pred$lwr, upper = pred$upr)
}

scalar_observed_frame <- function(y, label) {
  data.frame(.row = seq_along(y), category = factor(rep(label, length(y))),
             proportion = y, observed = factor(rep("observed", length(y))))
}

#' @export
plot_response_frame.augp_gaussian <- function(likelihood, pred, levels) scalar_response_frame(pred, "mean")

#' @export
plot_observed_frame.augp_gaussian <- function(likelihood, y, trials, levels) scalar_observed_frame(y, "mean")

#' @export
plot_response_label.augp_gaussian <- function(likelihood, levels) "E[y]"

#' @export
plot_response_scale.augp_gaussian <- function(likelihood) ggplot2::scale_y_continuous()

# Training root mean squared error and mean absolute error of the fitted mean.
#' @export
lik_fit_stats.augp_gaussian <- function(likelihood, object) {
  fitted_mean_stats(object$y, object$fitted[, 1], object$trials)
}

#' @export
lik_learns_params.augp_gaussian <- function(likelihood) isTRUE(likelihood$learn_sigma)

#' @export
lik_param_values.augp_gaussian <- function(likelihood) list(sigma = likelihood$sigma)

#' @export
lik_params_label.augp_gaussian <- function(likelihood) "the noise scale `sigma`"

#' @export
print_lik_params.augp_gaussian <- function(likelihood, digits, rounds = NULL) {
  print_scalar_params(likelihood, "sigma", "Noise: %s\n")
}

# The predictive plot of a fit whose response mean is one latent function's: over one
# input, the posterior mean of the response with its credible band, the prediction band
# of a new observation and the data; over two inputs, the posterior mean surface.
# `response`: what the mean is ("mean", "rate"), for the y label of a formula fit;
# `labels_2d`, `labels_1d`: further labs() arguments (title, subtitle) of either plot;
# `inducing_y`: the height at which the 1-D plot marks the inducing inputs.
plot_predictive_mean <- function(object, inp, dat, grid, level, response, labels_2d, labels_1d,
                                 inducing_y) {
  v <- inp$vars
  g <- predictive_grid(inp, dat, grid)
  nd <- grid_newdata(object, g, inp)
  cr <- predict(object, nd, type = "response", interval = "credible", level = level)
  ylab <- plot_response_label(object$likelihood, object$levels)
  if (!is.null(object$terms)) {
    ylab <- sprintf("%s (%s)", deparse(attr(object$terms, "variables")[[2]]), response)
  }
  if (length(v) == 2L) {
    g$mean <- cr$fit
    pts <- data.frame(x1 = dat[[v[1]]], x2 = dat[[v[2]]])
    p <- ggplot(g, aes(x = .data[[v[1]]], y = .data[[v[2]]])) +
      geom_raster(aes(fill = .data$mean), interpolate = TRUE) +
      ggplot2::scale_fill_viridis_c(name = ylab) +
      geom_point(data = pts, aes(x = .data$x1, y = .data$x2), inherit.aes = FALSE,
                 shape = 21, fill = "white", colour = "grey10", size = 1.4) +
      do.call(labs, c(list(x = v[1], y = v[2]), labels_2d))
    return(add_inducing_2d(p, object, v) + ggplot2::coord_cartesian(expand = FALSE) + theme_augp())
  }
  pr <- predict(object, nd, type = "response", interval = "prediction", level = level)
  curve <- data.frame(x = g[[v]], fit = cr$fit, clwr = cr$lwr, cupr = cr$upr,
                      plwr = pr$lwr, pupr = pr$upr)
  pts <- data.frame(x = dat[[v]], y = object$y)
  bands <- c(sprintf("%g%% prediction", 100 * level), band_label(level))
  p <- ggplot(curve, aes(x = .data$x)) +
    ggplot2::geom_ribbon(aes(ymin = .data$plwr, ymax = .data$pupr, fill = bands[1]), alpha = 0.35) +
    ggplot2::geom_ribbon(aes(ymin = .data$clwr, ymax = .data$cupr, fill = bands[2]), alpha = 0.6) +
    geom_point(data = pts, aes(x = .data$x, y = .data$y), inherit.aes = FALSE,
               shape = 21, fill = "white", colour = "grey20", size = 1.4) +
    ggplot2::geom_line(aes(y = .data$fit), colour = "#08306b", linewidth = 0.8) +
    scale_fill_manual(values = stats::setNames(c("#c6dbef", "#4292c6"), bands), breaks = bands,
                      name = NULL) +
    do.call(labs, c(list(x = v, y = ylab), labels_1d))
  if (!is.null(Zd <- plot_inducing(object, v))) {
    Zd$y <- inducing_y
    Zd$what <- inducing_label(nrow(Zd))
    p <- p + inducing_layer(Zd, aes(x = .data[[v]], y = .data$y, shape = .data$what))
  }
  p + theme_augp()
}

# The predictive plot of a regression fit (plot_predictive_mean), the inducing inputs
# marked at the lowest observation. `title`: the plot's title stem; `band`: what the
# credible band is of.
plot_predictive_regression <- function(object, inp, dat, grid, level, title = "GP regression",
                                       band = "f") {
  plot_predictive_mean(
    object, inp, dat, grid, level, "mean",
    labels_2d = list(title = sprintf("%s: posterior mean surface", title)),
    labels_1d = list(title = sprintf("%s (%s)", title, object$likelihood$name),
                     subtitle = sprintf("Line: posterior mean; bands: %s interval of %s and of a new observation",
                                        band_label(level), band)),
    inducing_y = min(object$y))
}

# The noise scale starts at a guess (half the response sd), and a kernel learned at a
# noise level far from the learned one is poor (a short lengthscale absorbs outliers or
# noise): the kernel is searched again at the learned scale while the ELBO rises.
#' @export
lik_hyper_passes.augp_gaussian <- function(likelihood) 3L
