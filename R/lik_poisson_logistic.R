# Poisson counts with a scaled-logistic rate: y ~ Poisson(lambda sigmoid(f)), lambda the
# maximal rate, augmented by a Poisson count of "rejected" points and a Polya-Gamma
# variable (src/lik_poisson_logistic.cpp). One latent column on the logit scale of
# rate / lambda; the response mean is the rate. Frequency weights are the engine's
# `trials` (t copies of a row). lambda is learned by the ELBO (closed form) unless given.

#' Poisson likelihood with a scaled-logistic rate
#'
#' The observation model \eqn{y_i \mid f_i \sim \mathrm{Poisson}(\lambda\,
#' \sigma(f_i))} for a count response, \eqn{\sigma} the logistic function and
#' \eqn{\lambda > 0} the largest rate the model can reach. Writing
#' \eqn{e^{-\lambda \sigma(f)} = e^{-\lambda} e^{\lambda \sigma(-f)}} as a Poisson
#' series introduces a latent count \eqn{n} (the points a Poisson process of rate
#' \eqn{\lambda} loses to thinning) and, through the Polya-Gamma identity, a
#' variable \eqn{\omega}: given \eqn{(n, \omega)} the model is Gaussian in \eqn{f}.
#' The Gibbs sampler draws \eqn{n \mid f \sim \mathrm{Poisson}(\lambda
#' \sigma(-f))} and \eqn{\omega \mid n, f \sim \mathrm{PG}(y + n, f)}; the
#' variational fit uses the structured family \eqn{q(n)\, \mathrm{PG}(\omega \mid
#' y + n, c)} (Galy-Fajou et al. 2020).
#'
#' With `lambda = NULL`, \eqn{\lambda} is learned by the ELBO (given \eqn{q(f)} the
#' optimum is a closed form), alternating with CAVI as for [gaussian_noise()]; the
#' kernel hyperparameters are learned first at the starting value, twice the
#' largest observed count. Gibbs fits hold the learned \eqn{\lambda} fixed or,
#' with `augp_control(sample_hyper = TRUE)`, sample it given \eqn{f} under a
#' log-normal prior centred on that starting value with `sdlog` 1 (see [priors]). Sparse
#' (`inducing`) fits learn \eqn{\lambda} too (see `inducing` in [augp_fit()]). A large fixed \eqn{\lambda} (far
#' above the observed counts) makes the model a Poisson model with a log link,
#' \eqn{\lambda \sigma(f) \approx e^{f + \log \lambda}}.
#'
#' The latent function, and so an `offset`, is on the logit scale of
#' rate / \eqn{\lambda}: an offset \eqn{o} gives the rate \eqn{\lambda \sigma(f +
#' o)}. It acts as a log exposure (multiplying the rate by \eqn{e^o}) only where
#' the rate is far below \eqn{\lambda}; to model exposure otherwise give it as a
#' covariate. [augp()] picks this likelihood only when asked: integer responses
#' are read as classes or counts of other models.
#'
#' `predict(type = "response")` gives the rate \eqn{E[y] = \lambda \sigma(f)},
#' `interval = "credible"` its credible interval and `interval = "prediction"`
#' the interval of a new count (Monte Carlo quantiles). Pearson residuals divide
#' by the square root of the rate.
#'
#' @param lambda `NULL` (learn the maximal rate by the ELBO) or a positive number
#'   (fixed).
#' @return An object of class `c("augp_poisson_logistic", "augp_likelihood")`.
#' @seealso [augp()], [bernoulli_logit()]
#' @references Galy-Fajou, T., Wenzel, F. and Opper, M. (2020). Automated
#'   augmented conjugate inference for non-conjugate Gaussian process models.
#'   AISTATS.
#' @examples
#' poisson_logistic()
#' poisson_logistic(lambda = 20)
#' set.seed(1)
#' x <- seq(0, 1, length.out = 40)
#' y <- rpois(40, 10 * plogis(4 * sin(6 * x)))
#' fit <- augp_fit(x, y, likelihood = poisson_logistic())
#' fit$lambda
#' head(predict(fit, type = "response", interval = "prediction"))
#' @export
poisson_logistic <- function(lambda = NULL) {
  if (!is.null(lambda)) lambda <- check_positive_scalar(lambda, "lambda")
  new_likelihood("poisson_logistic", family = "poisson_logistic", link = "logit",
                 lambda = lambda, learn_lambda = is.null(lambda))
}

#' @export
print.augp_poisson_logistic <- function(x, ...) {
  cat(sprintf("<augp_likelihood> %s (rate lambda * plogis(f); %s)\n", x$name, lik_params_text(x)))
  invisible(x)
}

#' @export
lik_params_text.augp_poisson_logistic <- function(likelihood) {
  sprintf("lambda %s", param_text(likelihood$lambda, likelihood$learn_lambda, "lambda" %in% likelihood$sampled))
}

# Counts: a numeric (or integer) vector of whole numbers >= 0.
check_count_response <- function(y, name, what = "`y` (the response)") {
  if (is.matrix(y) || is.data.frame(y)) {
    stop(sprintf("%s must be a vector of counts for %s().", what, name), call. = FALSE)
  }
  if (!is.numeric(y)) {
    stop(sprintf("%s must be counts (whole numbers >= 0) for %s(), not %s.", what, name,
                 class(y)[1]), call. = FALSE)
  }
  if (anyNA(y)) stop(sprintf("%s contains NA.", what), call. = FALSE)
  if (any(!is.finite(y))) stop(sprintf("%s contains Inf or NaN.", what), call. = FALSE)
  if (any(y < 0)) stop(sprintf("%s has negative values: counts must be >= 0.", what), call. = FALSE)
  if (any(abs(y - round(y)) > 1e-8)) {
    stop(sprintf("%s has non-integer values: counts must be whole numbers.", what), call. = FALSE)
  }
  round(as.double(y))
}

#' @export
encode_response.augp_poisson_logistic <- function(likelihood, y, weights = NULL) {
  y <- check_count_response(y, likelihood$name)
  w <- check_weights(weights, length(y))
  keep <- w > 0
  if (isTRUE(likelihood$learn_lambda) && sum(y[keep]) == 0) {
    stop(paste0("`y` (the response) is 0 everywhere: the maximal rate `lambda` cannot be ",
                "learned; give a fixed `lambda`."), call. = FALSE)
  }
  list(y = y, trials = w, levels = character(0), keep = keep)
}

#' @export
response_data.augp_poisson_logistic <- function(likelihood, resp) resp$y

# The starting lambda: the fixed value, or twice the largest count.
lik_lambda_start <- function(likelihood, resp) {
  if (!is.null(likelihood$lambda)) return(likelihood$lambda)
  2 * max(1, resp$y[resp$trials > 0])
}

# A second start of a learned lambda: the largest count itself (the kernel learned at a
# rate ceiling close to the counts, where plogis(f) must use its upper range; from the
# first start, twice that, the kernel and lambda can settle at a lower ELBO).
#' @export
lik_restarts.augp_poisson_logistic <- function(likelihood, spec) {
  if (!isTRUE(spec$learn_lambda)) return(list())
  spec$lambda <- spec$lambda / 2
  list(spec)
}

#' @export
engine_lik_spec.augp_poisson_logistic <- function(likelihood, resp) {
  list(type = "poisson_logistic", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials),
       lambda = lik_lambda_start(likelihood, resp), learn_lambda = isTRUE(likelihood$learn_lambda))
}

# The logit of the (weighted) mean count over the starting lambda, kept in
# [1e-8, 0.98].
#' @export
lik_prior_mean.augp_poisson_logistic <- function(likelihood, resp) {
  rate <- (sum(resp$trials * resp$y) + 0.5) / sum(resp$trials)
  stats::qlogis(min(max(rate / lik_lambda_start(likelihood, resp), 1e-8), 0.98))
}

#' @export
lik_param_spec.augp_poisson_logistic <- function(likelihood) {
  scalar_param_spec(likelihood, "poisson_logistic", 1L, list(lambda = 1), learn = "lambda")
}

#' @export
lik_fitted.augp_poisson_logistic <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, "lambda")
}

#' @export
response_names.augp_poisson_logistic <- function(likelihood, levels) "rate"

# The offset adds to f, the logit of rate / lambda (see ?poisson_logistic).
#' @export
lik_accepts_offset.augp_poisson_logistic <- function(likelihood) TRUE

#' @export
lik_model_label.augp_poisson_logistic <- function(likelihood) "count regression (Poisson, logistic rate)"

# integrate_hyper = "auto": averaging over the kernel hyperparameters raised the held-out
# log predictive density on every count set of bench/counts/results_integrate.md.
#' @export
lik_integrate_auto_n.augp_poisson_logistic <- function(likelihood) IH_AUTO_N

# kernel_search = "auto" chooses the kernel of this likelihood's fits up to
# KERNEL_SEARCH_AUTO_N observations (R/kernel_search.R; the measurement behind it is in
# bench/counts/results_kernel_choice.md).
#' @export
lik_kernel_search_auto_n.augp_poisson_logistic <- function(likelihood) KERNEL_SEARCH_AUTO_N

# Poisson unit deviance 2 t (y log(y / mu) - (y - mu)).
#' @export
lik_unit_deviance.augp_poisson_logistic <- function(likelihood, y, trials, mu) {
  2 * trials * (ylogy_ratio(y, mu) - (y - mu))
}

# As glm(family = poisson): the observed count, its variance mu / weight, the unit
# deviance.
#' @export
lik_residual_parts.augp_poisson_logistic <- function(likelihood, y, trials, levels, mean) {
  mu <- mean[, 1]
  list(observed = matrix(y, ncol = 1L), var = matrix(mu / trials, ncol = 1L),
       unit_deviance = matrix(lik_unit_deviance(likelihood, y, trials, mu), ncol = 1L))
}

#' @export
lik_deviance.augp_poisson_logistic <- function(likelihood, y, trials, levels, mean) {
  sum(lik_unit_deviance(likelihood, y, trials, mean[, 1]))
}

#' @export
present_response.augp_poisson_logistic <- function(likelihood, parts) {
  if (length(parts) == 1L) return(parts[[1]][, 1])
  as.data.frame(lapply(parts, function(p) unname(p[, 1])))
}

#' @export
category_prob.augp_poisson_logistic <- function(likelihood, mean, levels) {
  stop(sprintf(paste0("`type = \"class\"` is not available for the %s likelihood ",
                      "(a count response); use type = \"response\"."), likelihood$name),
       call. = FALSE)
}

# augment(): the observed count per copy (divided by the weights there).
#' @export
observed_counts.augp_poisson_logistic <- function(likelihood, y, trials, levels) {
  matrix(y * trials, ncol = 1L, dimnames = list(NULL, "rate"))
}

#' @export
observed_response.augp_poisson_logistic <- function(likelihood, y, trials, levels) y

# simulate(): a data frame of simulated counts, one column per simulation (the total
# of `size` replicates of a row; one count per row unless the user asks for more).
#' @export
present_simulation.augp_poisson_logistic <- function(likelihood, counts, size, ok, levels, rownames) {
  scalar_simulation_frame(counts, ok, rownames, 1)
}

#' @export
present_predictive.augp_poisson_logistic <- function(likelihood, counts, size, levels) {
  scalar_predictive(counts, 1)
}

# The weights are frequency weights: one simulated count per row, as glm's simulate().
#' @export
simulation_trials.augp_poisson_logistic <- function(likelihood, trials) rep(1, length(trials))

#' @export
pp_check_type.augp_poisson_logistic <- function(likelihood, trials) "rootogram"

#' @export
observed_predictive.augp_poisson_logistic <- function(likelihood, y, trials, levels) as.numeric(y)

#' @export
encode_new_response.augp_poisson_logistic <- function(likelihood, y, levels) {
  y <- check_count_response(y, likelihood$name, "`newdata`: the response")
  n <- length(y)
  list(y = y, trials = rep(1, n), levels = levels, keep = rep(TRUE, n))
}

#' @export
plot_predictive_lik.augp_poisson_logistic <- function(likelihood, object, inp, dat, grid, level) {
  plot_predictive_counts(object, inp, dat, grid, level)
}

#' @export
plot_response_frame.augp_poisson_logistic <- function(likelihood, pred, levels) scalar_response_frame(pred, "rate")

#' @export
plot_observed_frame.augp_poisson_logistic <- function(likelihood, y, trials, levels) scalar_observed_frame(y, "rate")

#' @export
plot_response_label.augp_poisson_logistic <- function(likelihood, levels) "Rate E[y]"

#' @export
plot_response_scale.augp_poisson_logistic <- function(likelihood) ggplot2::scale_y_continuous()

# Training root mean squared error of the fitted rate and the mean Poisson deviance.
#' @export
lik_fit_stats.augp_poisson_logistic <- function(likelihood, object) {
  mu <- object$fitted[, 1]
  fitted_mean_stats(object$y, mu, object$trials, mae = FALSE,
                    unit_deviance = lik_unit_deviance(likelihood, object$y, object$trials, mu))
}

#' @export
lik_learns_params.augp_poisson_logistic <- function(likelihood) isTRUE(likelihood$learn_lambda)

#' @export
lik_param_values.augp_poisson_logistic <- function(likelihood) list(lambda = likelihood$lambda)

#' @export
lik_params_label.augp_poisson_logistic <- function(likelihood) "the maximal rate `lambda`"

#' @export
print_lik_params.augp_poisson_logistic <- function(likelihood, digits, rounds = NULL) {
  print_scalar_params(likelihood, "lambda", "Maximal rate: %s\n")
}

# The predictive plot of a count fit (plot_predictive_mean): the mean rate, the
# inducing inputs marked at 0.
plot_predictive_counts <- function(object, inp, dat, grid, level) {
  title <- sprintf("Count regression (%s, lambda = %s)", object$likelihood$name,
                   format(object$likelihood$lambda, digits = 3))
  plot_predictive_mean(
    object, inp, dat, grid, level, "rate",
    labels_2d = list(title = title, subtitle = "Posterior mean rate"),
    labels_1d = list(title = title,
                     subtitle = sprintf("Line: posterior mean rate\nBands: %s interval of the rate (dark) and of a new count (light)",
                                        band_label(level))),
    inducing_y = 0)
}

# Full Bayes: lambda under a log-normal prior centred on its starting value (twice the
# largest observed rate), sdlog 1, when learned.
#' @export
lik_param_priors.augp_poisson_logistic <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_lambda)) return(list())
  list(lambda = list(prior = new_prior_dist("lognormal", log(lik_lambda_start(likelihood, resp)), 1),
                     n = 1L, positive = TRUE))
}
