# Student-t likelihood for robust GP regression: y ~ t_nu(f, sigma), a normal scale
# mixture (src/lik_student_t.cpp). Class c("augp_student_t", "augp_gaussian", ...):
# the response handling, residuals, predictions and plots are the Gaussian ones
# (R/lik_gaussian.R); here the constructor, the engine specification, the parameters
# (sigma and nu) and the deviance.

#' Student-t likelihood for robust GP regression
#'
#' The observation model \eqn{y_i \mid f_i \sim t_\nu(f_i, \sigma)}, written as
#' the scale mixture \eqn{y \mid f, w \sim N(f, \sigma^2 / w)},
#' \eqn{w \sim \mathrm{Gamma}(\nu/2, \nu/2)}: conditionally on the auxiliary
#' \eqn{w} the model is Gaussian, so both the Gibbs sampler and CAVI have
#' closed-form steps. Heavy tails make the fit robust to outliers; as
#' \eqn{\nu \to \infty} it becomes [gaussian_noise()].
#'
#' The scale \eqn{\sigma} is learned by the ELBO (an EM fixed point given
#' \eqn{q(f)} and \eqn{q(w)}), and so is \eqn{\nu} when `nu = NULL` (a
#' one-dimensional search over \eqn{\log\nu \in [\log 0.2, \log 1000]},
#' starting at 4), alternating with CAVI as for [gaussian_noise()]; the kernel
#' hyperparameters are learned first at the starting values (`sd(y) / 2`,
#' `nu = 4`), then searched again at the learned values while the ELBO rises. Gibbs fits hold the learned values fixed, or, with
#' `augp_control(sample_hyper = TRUE)`, sample them given \eqn{f}: `sigma`
#' under a half Student-t(3) prior of scale 2.5 standard deviations of `y`,
#' `nu` under a gamma(2, 0.1) prior (brms's defaults; see [priors]). Sparse (`inducing`)
#' fits learn them too (see `inducing` in [augp_fit()]). Prediction intervals of a new observation
#' (`predict(interval = "prediction")`) are Monte Carlo quantiles.
#'
#' @param nu `NULL` (learn the degrees of freedom by the ELBO) or a positive
#'   number (fixed).
#' @param sigma `NULL` (learn the scale by the ELBO) or a positive number (fixed).
#' @return An object of class `c("augp_student_t", "augp_gaussian",
#'   "augp_likelihood")`.
#' @seealso [gaussian_noise()], [augp()]
#' @examples
#' student_t()
#' student_t(nu = 3, sigma = 0.5)
#' set.seed(1)
#' x <- seq(0, 1, length.out = 30)
#' y <- sin(6 * x) + rnorm(30, sd = 0.1)
#' y[10] <- 4
#' fit <- augp_fit(x, y, likelihood = student_t(nu = 3))
#' sigma(fit)
#' @export
student_t <- function(nu = NULL, sigma = NULL) {
  if (!is.null(nu)) nu <- check_positive_scalar(nu, "nu")
  if (!is.null(sigma)) sigma <- check_positive_scalar(sigma, "sigma")
  new_likelihood("student_t", family = c("student_t", "gaussian"), link = "identity",
                 sigma = sigma, nu = nu, learn_sigma = is.null(sigma), learn_nu = is.null(nu))
}

#' @export
lik_params_text.augp_student_t <- function(likelihood) {
  sprintf("sigma %s; nu %s", param_text(likelihood$sigma, likelihood$learn_sigma, "sigma" %in% likelihood$sampled),
          param_text(likelihood$nu, likelihood$learn_nu, "nu" %in% likelihood$sampled))
}

#' @export
engine_lik_spec.augp_student_t <- function(likelihood, resp) {
  list(type = "student_t", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials),
       sigma = lik_sigma_start(likelihood, resp),
       nu = if (is.null(likelihood$nu)) 4 else likelihood$nu,
       learn_sigma = isTRUE(likelihood$learn_sigma), learn_nu = isTRUE(likelihood$learn_nu))
}

#' @export
lik_param_spec.augp_student_t <- function(likelihood) {
  scalar_param_spec(likelihood, "student_t", 1L, list(sigma = 1, nu = 4), learn = "nu")
}

#' @export
lik_fitted.augp_student_t <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, c("sigma", "nu"))
}

# Twice the log-likelihood ratio of the saturated model (f = y) to the fit.
#' @export
lik_unit_deviance.augp_student_t <- function(likelihood, y, trials, mu) {
  trials * (likelihood$nu + 1) * log1p((y - mu)^2 / (likelihood$nu * likelihood$sigma^2))
}

#' @export
lik_model_label.augp_student_t <- function(likelihood) "regression (robust, Student-t)"

#' @export
lik_learns_params.augp_student_t <- function(likelihood) {
  isTRUE(likelihood$learn_sigma) || isTRUE(likelihood$learn_nu)
}

#' @export
lik_param_values.augp_student_t <- function(likelihood) {
  list(sigma = likelihood$sigma, nu = likelihood$nu)
}

#' @export
lik_params_label.augp_student_t <- function(likelihood) "the scale `sigma` and `nu`"

# Full Bayes: sigma as for the Gaussian, nu under gamma(2, 0.1), each when learned.
#' @export
lik_param_priors.augp_student_t <- function(likelihood, resp) {
  out <- list()
  if (isTRUE(likelihood$learn_sigma)) {
    out$sigma <- list(prior = new_prior_dist("half_t", 3, 2.5 * lik_latent_scale(likelihood, resp)),
                      n = 1L, positive = TRUE)
  }
  if (isTRUE(likelihood$learn_nu)) out$nu <- list(prior = new_prior_dist("gamma", 2, 0.1), n = 1L, positive = TRUE)
  out
}

# Not Gaussian in f alone (a scale mixture: Gaussian only given the auxiliary precisions).
#' @export
lik_exact_marginal.augp_student_t <- function(likelihood) FALSE

# The squared exponential kernel, as for the likelihoods outside augp_gaussian (the Matern
# 5/2 default of gaussian_noise() rests on the exact Gaussian fit, see R/lik_gaussian.R).
#' @export
lik_default_kernel.augp_student_t <- function(likelihood) kernel_se()
