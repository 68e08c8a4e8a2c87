# Heteroscedastic Gaussian likelihood: GP regression with input-dependent noise,
# y ~ N(f, 1 / (lambda sigmoid(g))), two latent GPs f (the mean) and g (the noise
# precision), augmented with Poisson and Polya-Gamma variables (src/lik_heteroscedastic.cpp).
# Class c("augp_heteroscedastic", "augp_gaussian", ...): response handling, the
# response mean, prediction intervals, plots and simulation come from the Gaussian
# methods (R/lik_gaussian.R). This file holds what depends on the second latent
# function and on lambda: the constructor, the engine specification, one kernel per
# latent function, the parameter, the noise standard deviation and residuals.

#' Heteroscedastic Gaussian likelihood: GP regression with input-dependent noise
#'
#' The observation model
#' \deqn{y_i \mid f_i, g_i \sim N\big(f_i,\ 1 / \tau_i\big), \quad
#'   \tau_i = \lambda\, \sigma(g_i - \log \lambda),}
#' with two latent Gaussian processes: \eqn{f} the mean of the response and
#' \eqn{g} the noise precision \eqn{\tau} (\eqn{\sigma} the logistic function).
#' \eqn{\lambda > 0} is the largest precision; below it
#' \eqn{\tau \approx e^{g}}, so \eqn{g} is about the log precision and the
#' noise standard deviation \eqn{1 / \sqrt{\tau(x)}} varies with the inputs.
#'
#' The model is made conditionally conjugate as in Galy-Fajou, Wenzel and Opper
#' (2020): with \eqn{h = g - \log\lambda} and \eqn{a = \lambda (y - f)^2 / 2},
#' \eqn{\exp(-a \sigma(h)) = \sum_n \mathrm{Poisson}(n \mid a)\, \sigma(-h)^n}, and
#' \eqn{\sigma(h)^{1/2} \sigma(-h)^n} is Polya-Gamma conjugate in \eqn{h}. Given
#' \eqn{g} the model is Gaussian in \eqn{f}; given the Poisson and Polya-Gamma
#' variables it is Gaussian in \eqn{g}. The Gibbs sampler updates \eqn{f} given
#' \eqn{g}, then the auxiliary variables, then \eqn{g}; CAVI updates \eqn{q(f)},
#' then \eqn{q(g)}, each in closed form, with a non-decreasing ELBO.
#'
#' Each latent function has its own kernel (the kernel given to [augp()] is used
#' for both, with its own hyperparameters, learned by the ELBO): a default
#' variance (`variance = NULL`) is the variance of `y` for \eqn{f} and 1 for
#' \eqn{g}. The prior mean of \eqn{f} is the (weighted) mean of `y`, that of
#' \eqn{g} the log precision of a noise sd of half the sd of `y`. With
#' `lambda = NULL`, \eqn{\lambda} is learned by the ELBO (a one-dimensional
#' search given \eqn{q(f), q(g)}, alternating with CAVI), starting from the
#' precision of a noise sd of a twentieth of the sd of `y`. Gibbs fits hold the
#' learned value fixed or, with `augp_control(sample_hyper = TRUE)`, sample it
#' given \eqn{(f, g)} under a log-normal prior centred at its starting value (sd 3
#' on the log scale; see [priors]), together with both kernels' hyperparameters
#' (the default kernel-variance prior of \eqn{g} is on the scale 1). Sparse
#' (`inducing`) fits and offsets are not available.
#'
#' `predict(type = "response")` gives the mean of `y` (\eqn{f}); `interval =
#' "credible"` the interval for \eqn{f}, `interval = "prediction"` the interval
#' for a new observation, whose noise depends on the inputs (for variational fits,
#' exact quantiles of the predictive distribution by quadrature over \eqn{g}).
#' `predict(type = "noise")` gives the noise standard deviation
#' \eqn{1 / \sqrt{\tau(x)}} at the inputs (posterior mean, with `se.fit` and
#' `interval = "credible"`); `type = "link"` both latent functions.
#' `sigma(fit)` is the noise sd at the training inputs (one value per row);
#' Pearson residuals divide by it. `autoplot(fit, type = "noise")` draws the noise
#' sd along one numeric input.
#'
#' @param lambda `NULL` (learn \eqn{\lambda} by the ELBO) or a positive number
#'   (fixed).
#' @return An object of class `c("augp_heteroscedastic", "augp_gaussian",
#'   "augp_likelihood")`.
#' @references Galy-Fajou T., Wenzel F., Opper M. (2020). Automated augmented
#'   conjugate inference for non-conjugate Gaussian process models. AISTATS.
#' @seealso [gaussian_noise()] for constant noise, [augp()]
#' @examples
#' heteroscedastic_gaussian()
#' set.seed(1)
#' x <- seq(0, 1, length.out = 80)
#' y <- sin(6 * x) + rnorm(80, sd = 0.05 + 0.4 * x)
#' fit <- augp_fit(x, y, likelihood = heteroscedastic_gaussian())
#' head(predict(fit, matrix(c(0.1, 0.9)), type = "noise"))
#' @export
heteroscedastic_gaussian <- function(lambda = NULL) {
  if (!is.null(lambda)) lambda <- check_positive_scalar(lambda, "lambda")
  new_likelihood("heteroscedastic_gaussian", family = c("heteroscedastic", "gaussian"),
                 link = "identity", lambda = lambda, learn_lambda = is.null(lambda))
}

#' @export
lik_params_text.augp_heteroscedastic <- function(likelihood) {
  sprintf("lambda %s", param_text(likelihood$lambda, likelihood$learn_lambda,
                                   "lambda" %in% likelihood$sampled))
}

# The starting lambda (the precision cap): the fixed value, or the precision of a noise
# sd of a twentieth of the sd of y.
het_lambda_start <- function(likelihood, resp) {
  if (!is.null(likelihood$lambda)) return(likelihood$lambda)
  100 / lik_sigma_start(gaussian_noise(), resp)^2
}

#' @export
engine_lik_spec.augp_heteroscedastic <- function(likelihood, resp) {
  list(type = "heteroscedastic_gaussian", q = 2L, y = as.double(resp$y),
       trials = as.double(resp$trials), lambda = het_lambda_start(likelihood, resp),
       learn_lambda = isTRUE(likelihood$learn_lambda))
}

#' @export
lik_param_spec.augp_heteroscedastic <- function(likelihood) {
  scalar_param_spec(likelihood, "heteroscedastic_gaussian", 2L, list(lambda = 1), learn = "lambda")
}

#' @export
lik_fitted.augp_heteroscedastic <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, "lambda")
}

# f: the mean of y; g (about the log precision): that of a noise sd of half the sd of y.
#' @export
lik_prior_mean.augp_heteroscedastic <- function(likelihood, resp) {
  c(sum(resp$trials * resp$y) / sum(resp$trials), -2 * log(lik_sigma_start(gaussian_noise(), resp)))
}

# One kernel per latent function: f on the scale of y, g on the logit scale.
#' @export
lik_column_scales.augp_heteroscedastic <- function(likelihood, resp) {
  c(lik_latent_scale(likelihood, resp), 1)
}

#' @export
latent_names.augp_heteroscedastic <- function(likelihood, levels, q) c("f", "g")

#' @export
lik_accepts_offset.augp_heteroscedastic <- function(likelihood) FALSE

#' @export
lik_model_label.augp_heteroscedastic <- function(likelihood) "regression (heteroscedastic)"

# Both latent functions for type = "link" (two columns); one response column otherwise.
#' @export
present_response.augp_heteroscedastic <- function(likelihood, parts) {
  if (ncol(parts[[1]]) == 1L) return(NextMethod())
  if (length(parts) == 1L) parts[[1]] else parts
}

# Pearson residuals need the noise variance at each training row, which depends on the
# fit (sigma(fit)); residuals() asks for it through lik_sigma().
#' @export
lik_residual_parts.augp_heteroscedastic <- function(likelihood, y, trials, levels, mean) {
  mu <- mean[, 1]
  list(observed = matrix(y, ncol = 1L), var = NULL,
       unit_deviance = matrix(lik_unit_deviance(likelihood, y, trials, mu), ncol = 1L))
}

# The noise sd at the training rows used in the fit (posterior mean of 1 / sqrt(tau)).
#' @export
lik_sigma.augp_heteroscedastic <- function(likelihood, object) {
  as.numeric(lik_noise_summary(likelihood, object, latent_posterior(object), 0)$mean)
}

#' @export
lik_learns_params.augp_heteroscedastic <- function(likelihood) isTRUE(likelihood$learn_lambda)

#' @export
lik_param_values.augp_heteroscedastic <- function(likelihood) list(lambda = likelihood$lambda)

#' @export
lik_params_label.augp_heteroscedastic <- function(likelihood) "the precision `lambda`"

#' @export
print_lik_params.augp_heteroscedastic <- function(likelihood, digits, rounds = NULL) {
  print_scalar_params(likelihood, "lambda",
                      "Noise: sd 1 / sqrt(lambda sigmoid(g(x) - log(lambda))), %s\n")
}

# Full Bayes: lambda (the precision cap) under a wide log-normal prior around its
# starting value (sd 3 on the log scale), when it is learned.
#' @export
lik_param_priors.augp_heteroscedastic <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_lambda)) return(list())
  lam0 <- het_lambda_start(heteroscedastic_gaussian(), resp)
  list(lambda = list(prior = new_prior_dist("lognormal", log(lam0), 3), n = 1L, positive = TRUE))
}

# The noise sd s(g) = 1 / sqrt(lambda sigmoid(g - log lambda)) at the rows of the latent
# posterior `lp`: posterior mean, sd and (level > 0) interval, r x 1 each. Variational
# fits: Gauss-Hermite quadrature under q(g) = N(m, v), the interval the image of g's (s
# is decreasing in g); Gibbs fits: over the posterior draws of g (with each draw's lambda
# when lambda was sampled).
#' @export
lik_noise_summary.augp_heteroscedastic <- function(likelihood, object, lp, level) {
  sfun <- function(g, lam) 1 / sqrt(lam * stats::plogis(g - log(lam)))
  if (!is.null(lp$draws)) {
    G <- matrix(lp$draws[, , 2], dim(lp$draws)[1], dim(lp$draws)[2])
    lam <- fit_param_values(object, "lambda")
    S <- sfun(G, lam)
    out <- list(mean = colMeans(S), sd = apply(S, 2, stats::sd))
    if (level > 0) {
      out$lwr <- apply(S, 2, stats::quantile, probs = (1 - level) / 2, names = FALSE)
      out$upr <- apply(S, 2, stats::quantile, probs = 1 - (1 - level) / 2, names = FALSE)
    }
  } else {
    lam <- likelihood$lambda
    gh <- gauss_hermite_rule(40)
    m <- lp$mean[, 2]
    s <- sqrt(lp$var[, 2])
    G <- outer(s, gh$x) + m
    V <- sfun(G, lam)
    e1 <- drop(V %*% gh$w)
    e2 <- drop(V^2 %*% gh$w)
    out <- list(mean = e1, sd = sqrt(pmax(e2 - e1^2, 0)))
    if (level > 0) {
      z <- stats::qnorm(1 - (1 - level) / 2)
      out$lwr <- sfun(m + z * s, lam)
      out$upr <- sfun(m - z * s, lam)
    }
  }
  lapply(out, function(x) matrix(x, ncol = 1L))
}

# Nodes and weights of the n-point Gauss-Hermite rule for a standard normal weight.
gauss_hermite_rule <- function(n) {
  i <- seq_len(n - 1L)
  J <- matrix(0, n, n)
  J[cbind(i, i + 1L)] <- J[cbind(i + 1L, i)] <- sqrt(i)
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = e$vectors[1, ]^2)
}

# Not Gaussian in f alone (the noise is a second latent function).
#' @export
lik_exact_marginal.augp_heteroscedastic <- function(likelihood) FALSE

# The squared exponential kernel, as for the likelihoods outside augp_gaussian (the Matern
# 5/2 default of gaussian_noise() rests on the exact Gaussian fit, see R/lik_gaussian.R).
#' @export
lik_default_kernel.augp_heteroscedastic <- function(likelihood) kernel_se()
