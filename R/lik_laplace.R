# Laplace likelihood for robust (median) GP regression: y ~ Laplace(f, b), augmented as
# a normal scale mixture with exponential mixing on the variance (src/lik_laplace.cpp).
# Class c("augp_laplace", "augp_gaussian", ...): response handling, predictions, plots
# and simulation come from the Gaussian methods (R/lik_gaussian.R). This file holds what
# depends on the scale b instead of sigma: the constructor, the engine specification,
# the parameter, sigma() (the noise sd sqrt(2) b), Pearson residuals and the deviance.

#' Laplace likelihood for robust GP regression
#'
#' The observation model \eqn{p(y_i \mid f_i) = \exp(-|y_i - f_i| / b) / (2b)}:
#' double-exponential noise of scale \eqn{b} (standard deviation
#' \eqn{\sqrt{2}\, b}), whose posterior mean tracks a conditional median rather
#' than a mean and is little moved by gross outliers. It is written as a normal
#' scale mixture, \eqn{y \mid f, w \sim N(f, w)},
#' \eqn{w \sim \mathrm{Exponential}(1 / (2 b^2))}: given \eqn{w} the model is
#' Gaussian, and \eqn{1/w} given \eqn{f} is inverse Gaussian, so the Gibbs
#' sampler and CAVI have closed-form steps.
#'
#' With `scale = NULL` the scale is learned by the ELBO: given \eqn{q(f) = N(m, v)}
#' the optimum is the closed form \eqn{b = \mathrm{mean}(\sqrt{(y - m)^2 + v})},
#' alternating with CAVI as for [gaussian_noise()]. The kernel hyperparameters
#' are learned first at the starting value (`sd(y) / (2 sqrt(2))`, the scale of
#' a noise sd of half that of `y`), then searched again at the learned scale while
#' the ELBO rises. Gibbs fits hold the learned scale fixed or, with
#' `augp_control(sample_hyper = TRUE)`, sample it given \eqn{f} under a half
#' Student-t(3) prior of scale 2.5 standard deviations of `y` over
#' \eqn{\sqrt 2} (see [priors]). Sparse
#' (`inducing`) fits learn the scale too (see `inducing` in [augp_fit()]).
#'
#' `sigma(fit)` gives the noise standard deviation \eqn{\sqrt{2}\, b} (Pearson
#' residuals divide by it); `fit$noise_scale` the scale \eqn{b}. Prediction intervals of
#' a new observation (`predict(interval = "prediction")`) are Monte Carlo
#' quantiles.
#'
#' @param scale `NULL` (learn the scale \eqn{b} by the ELBO) or a positive number
#'   (fixed).
#' @return An object of class `c("augp_laplace", "augp_gaussian",
#'   "augp_likelihood")`.
#' @seealso [student_t()] for another robust likelihood, [gaussian_noise()],
#'   [augp()]
#' @examples
#' laplace()
#' laplace(scale = 0.2)
#' set.seed(1)
#' x <- seq(0, 1, length.out = 30)
#' y <- sin(6 * x) + rnorm(30, sd = 0.1)
#' y[10] <- 4
#' fit <- augp_fit(x, y, likelihood = laplace())
#' fit$noise_scale
#' @export
laplace <- function(scale = NULL) {
  if (!is.null(scale)) scale <- check_positive_scalar(scale, "scale")
  new_likelihood("laplace", family = c("laplace", "gaussian"), link = "identity",
                 scale = scale, learn_scale = is.null(scale))
}

#' @export
lik_params_text.augp_laplace <- function(likelihood) {
  sprintf("scale %s", param_text(likelihood$scale, likelihood$learn_scale, "scale" %in% likelihood$sampled))
}

# The starting scale: the fixed value, or that of a Laplace noise whose sd is the
# Gaussian starting sigma (half the weighted sd of y).
lik_scale_start <- function(likelihood, resp) {
  if (!is.null(likelihood$scale)) return(likelihood$scale)
  lik_sigma_start(gaussian_noise(), resp) / sqrt(2)
}

#' @export
engine_lik_spec.augp_laplace <- function(likelihood, resp) {
  list(type = "laplace", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials),
       scale = lik_scale_start(likelihood, resp), learn_scale = isTRUE(likelihood$learn_scale))
}

#' @export
lik_param_spec.augp_laplace <- function(likelihood) {
  scalar_param_spec(likelihood, "laplace", 1L, list(scale = 1), learn = "scale")
}

#' @export
lik_fitted.augp_laplace <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, "scale")
}

# Twice the log-likelihood ratio of the saturated model (f = y) to the fit.
#' @export
lik_unit_deviance.augp_laplace <- function(likelihood, y, trials, mu) {
  2 * trials * abs(y - mu) / likelihood$scale
}

# Observed y, the noise variance 2 b^2 / weight, and the unit deviance.
#' @export
lik_residual_parts.augp_laplace <- function(likelihood, y, trials, levels, mean) {
  mu <- mean[, 1]
  list(observed = matrix(y, ncol = 1L), var = matrix(2 * likelihood$scale^2 / trials, ncol = 1L),
       unit_deviance = matrix(lik_unit_deviance(likelihood, y, trials, mu), ncol = 1L))
}

# The noise standard deviation sqrt(2) b.
#' @export
lik_sigma.augp_laplace <- function(likelihood, object) sqrt(2) * likelihood$scale

#' @export
lik_noise_sd_values.augp_laplace <- function(likelihood, object) sqrt(2) * fit_param_values(object, "scale")

#' @export
lik_model_label.augp_laplace <- function(likelihood) "regression (robust, Laplace)"

#' @export
lik_learns_params.augp_laplace <- function(likelihood) isTRUE(likelihood$learn_scale)

# Named `noise_scale` in the fit (fit$scale is the input standardisation).
#' @export
lik_param_values.augp_laplace <- function(likelihood) list(noise_scale = likelihood$scale)

#' @export
lik_params_label.augp_laplace <- function(likelihood) "the scale `scale`"

#' @export
print_lik_params.augp_laplace <- function(likelihood, digits, rounds = NULL) {
  print_scalar_params(likelihood, "scale", "Noise: %s\n")
}

# Full Bayes: the scale b under a half-t(3) prior of scale 2.5 sd(y) / sqrt(2) (the
# noise sd is sqrt(2) b), when learned.
#' @export
lik_param_priors.augp_laplace <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_scale)) return(list())
  list(scale = list(prior = new_prior_dist("half_t", 3, 2.5 * lik_latent_scale(likelihood, resp) / sqrt(2)),
                    n = 1L, positive = TRUE))
}

# Not Gaussian in f alone (a scale mixture: Gaussian only given the auxiliary variances).
#' @export
lik_exact_marginal.augp_laplace <- function(likelihood) FALSE

# The squared exponential kernel, as for the likelihoods outside augp_gaussian (the Matern
# 5/2 default of gaussian_noise() rests on the exact Gaussian fit, see R/lik_gaussian.R).
#' @export
lik_default_kernel.augp_laplace <- function(likelihood) kernel_se()
