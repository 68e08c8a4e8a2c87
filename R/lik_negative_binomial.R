# Negative-binomial likelihood for overdispersed counts: y ~ NB(mean exp(f), dispersion
# r), Polya-Gamma augmented (src/lik_negative_binomial.cpp). One latent column, the log
# mean (log link; an offset is the log exposure). Frequency weights are the engine's
# `trials` (t copies of a row). The dispersion r is learned by the ELBO unless given.

#' Negative-binomial likelihood for count regression
#'
#' The observation model for counts \eqn{y_i \in \{0, 1, 2, \dots\}}:
#' \deqn{p(y \mid f) = \frac{\Gamma(y + r)}{\Gamma(r)\, y!}\, p^y (1 - p)^r,
#'   \quad p = \sigma(f - \log r),}
#' with mean \eqn{\mu = e^{f}} and variance \eqn{\mu + \mu^2 / r}: the latent
#' function is the log mean (log link), and the dispersion \eqn{r > 0} sets the
#' overdispersion relative to the Poisson law, which is the limit
#' \eqn{r \to \infty}. Given a Polya-Gamma variable
#' \eqn{\omega \sim PG(y + r, f - \log r)} the model is Gaussian in \eqn{f}, so the
#' Gibbs sampler and CAVI have closed-form steps (the package's exact Polya-Gamma
#' sampler, whose cost does not grow with the count).
#'
#' [augp()] picks this likelihood by itself for a numeric response of
#' non-negative whole numbers that are not all 0/1. An `offset` (e.g. the log of
#' an exposure, `offset(log(time))` in a formula) adds to the log mean, as in
#' [stats::glm()] with a log link. The prior mean of the latent function is the
#' log of the (weighted) mean count (at the geometric-mean exposure with an
#' offset). Frequency `weights` count repeated observations.
#'
#' With `negative_binomial(r = NULL)` the dispersion is learned by maximising the ELBO over
#' \eqn{\log r} (a one-dimensional search in \eqn{[10^{-3}, 10^5]} with
#' \eqn{q(f)} fixed, alternating with CAVI as for [gaussian_noise()]'s
#' \eqn{\sigma}); the kernel hyperparameters are learned at the starting
#' value, a moment estimate from the counts and their exposures (each row's
#' mean taken as a common rate times its exposure, half of the excess
#' variance left to the latent function), and kept while \eqn{r} is learned.
#' An exact GP whose kernel is learned is fitted a second time from
#' \eqn{r = 100} (nearly Poisson: the latent function carries the variation
#' of the counts) and keeps the fit with the higher ELBO; the two can differ
#' when the kernel can explain grouped counts, such as a random effect
#' (`kernel_linear(dims = "group")`) or an input that identifies the groups.
#' The augmented ELBO is looser for
#' large \eqn{r} when the latent function is uncertain, so the learned value
#' leans towards more overdispersion in that case. With `method = "gibbs"` the
#' dispersion is learned by the variational fit and then held fixed or, with
#' `augp_control(sample_hyper = TRUE)`, sampled under a gamma(0.01, 0.01) prior
#' (brms's default for the shape; see [priors]): given \eqn{f}, and jointly with
#' \eqn{f} by a Hamiltonian Monte Carlo move of the un-augmented posterior at the
#' current kernel. Sparse
#' (`inducing`) fits learn \eqn{r} too (see `inducing` in [augp_fit()]).
#'
#' `predict(type = "response")` gives the mean count \eqn{E[e^f]} (closed form
#' under the Gaussian \eqn{q(f)}), `type = "link"` the log mean \eqn{f};
#' `interval = "prediction"` gives Monte Carlo quantiles of a new count.
#' `fit$r` holds the dispersion. `residuals(type = "pearson")` divides by
#' \eqn{\sqrt{\mu + \mu^2 / r}}; the deviance is that of
#' [MASS::negative.binomial()] at the fitted \eqn{r}.
#'
#' `likelihood = poisson()` is not accepted (there is no Polya-Gamma
#' augmentation of the Poisson log link): use `negative_binomial()`, which with
#' a large fixed `r` is close to it, or the Poisson likelihood with a logistic
#' rate when available.
#'
#' @param r `NULL` (learn the dispersion by the ELBO) or a positive number
#'   (fixed dispersion; the variance is \eqn{\mu + \mu^2 / r}).
#' @return An object of class `c("augp_negative_binomial", "augp_likelihood")`.
#' @seealso [augp()], [likelihoods], [gaussian_noise()]
#' @examples
#' negative_binomial()
#' negative_binomial(r = 5)
#' set.seed(1)
#' x <- seq(0, 1, length.out = 60)
#' y <- rnbinom(60, mu = exp(1 + sin(6 * x)), size = 4)
#' fit <- augp_fit(x, y, likelihood = negative_binomial())
#' fit$r
#' head(predict(fit, type = "response"))
#' @export
negative_binomial <- function(r = NULL) {
  if (!is.null(r)) r <- check_positive_scalar(r, "r")
  new_likelihood("negative_binomial", family = "negative_binomial", link = "log", r = r,
                 learn_r = is.null(r))
}

#' @export
print.augp_negative_binomial <- function(x, ...) {
  cat(sprintf("<augp_likelihood> %s (link: log; %s)\n", x$name, lik_params_text(x)))
  invisible(x)
}

#' @export
lik_params_text.augp_negative_binomial <- function(likelihood) {
  sprintf("dispersion r %s", param_text(likelihood$r, likelihood$learn_r, "r" %in% likelihood$sampled))
}

# Counts: a numeric vector of non-negative whole numbers, not all zero.
check_counts <- function(y, name, arg = "`y` (the response)") {
  if (is.matrix(y) || is.data.frame(y)) {
    stop(sprintf("%s must be a vector of counts for %s().", arg, name), call. = FALSE)
  }
  if (is.factor(y) || is.character(y) || is.logical(y) || !is.numeric(y)) {
    stop(sprintf("%s must be numeric counts for %s(), not %s.", arg, name, class(y)[1]),
         call. = FALSE)
  }
  if (anyNA(y)) stop(sprintf("%s contains NA.", arg), call. = FALSE)
  if (any(!is.finite(y))) stop(sprintf("%s contains Inf or NaN.", arg), call. = FALSE)
  if (any(y < 0)) stop(sprintf("%s must be non-negative counts for %s().", arg, name), call. = FALSE)
  if (any(abs(y - round(y)) > 1e-8)) {
    stop(sprintf("%s must be whole numbers (counts) for %s().", arg, name), call. = FALSE)
  }
  round(as.double(y))
}

#' @export
encode_response.augp_negative_binomial <- function(likelihood, y, weights = NULL) {
  y <- check_counts(y, likelihood$name)
  w <- check_weights(weights, length(y))
  keep <- w > 0
  if (!any(y[keep] > 0)) {
    stop("`y` (the response) is zero everywhere: there is no count to model.", call. = FALSE)
  }
  list(y = y, trials = w, levels = character(0), keep = keep)
}

#' @export
response_data.augp_negative_binomial <- function(likelihood, resp) resp$y

# Exposures of the rows relative to their geometric mean: exp(offset - mean(offset)), or
# all 1 without an offset (resp$offset, set by augp_fit() for the starting values).
nb_exposure <- function(resp) {
  if (is.null(resp$offset)) rep(1, length(resp$y)) else exp(resp$offset - mean(resp$offset))
}

# The starting dispersion: the fixed value, or a moment estimate. With exposures e_i the
# rows have means m_i = m e_i (m = sum(w y) / sum(w e)) and NB variances
# m_i + m_i^2 / r, so r = sum(w m_i^2) / sum(w ((y - m_i)^2 - m_i)); half of the excess
# variance is left to the latent function. Clamped to [0.1, 1000].
lik_r_start <- function(likelihood, resp) {
  if (!is.null(likelihood$r)) return(likelihood$r)
  w <- resp$trials / sum(resp$trials)
  e <- nb_exposure(resp)
  m <- sum(w * resp$y) / sum(w * e) * e
  excess <- 0.5 * sum(w * ((resp$y - m)^2 - m))
  if (!(excess > 0)) return(1000)
  min(max(sum(w * m^2) / excess, 0.1), 1000)
}

# A second start of a learned dispersion: counts nearly Poisson given f, so that the
# kernel is first learned with the latent function carrying the variation of the counts
# (a moment start leaves half of it to the dispersion; with grouped or clustered counts
# the kernel learned there can miss structure that a larger r would show).
NB_RESTART_R <- 100

#' @export
lik_restarts.augp_negative_binomial <- function(likelihood, spec) {
  if (!isTRUE(spec$learn_r) || !(spec$r < NB_RESTART_R)) return(list())
  spec$r <- NB_RESTART_R
  list(spec)
}

#' @export
engine_lik_spec.augp_negative_binomial <- function(likelihood, resp) {
  list(type = "negative_binomial", q = 1L, y = as.double(resp$y),
       trials = as.double(resp$trials), r = lik_r_start(likelihood, resp),
       learn_r = isTRUE(likelihood$learn_r))
}

#' @export
lik_param_spec.augp_negative_binomial <- function(likelihood) {
  scalar_param_spec(likelihood, "negative_binomial", 1L, list(r = 1), learn = "r")
}

# The log of the (weighted) mean count at the geometric-mean exposure (the offset enters
# the prior mean centred).
#' @export
lik_prior_mean.augp_negative_binomial <- function(likelihood, resp) {
  log(sum(resp$trials * resp$y) / sum(resp$trials * nb_exposure(resp)))
}

#' @export
lik_fitted.augp_negative_binomial <- function(likelihood, spec, levels) {
  fitted_scalar_params(likelihood, spec, "r")
}

#' @export
response_names.augp_negative_binomial <- function(likelihood, levels) "mean"

# The offset adds to the log mean (log exposure), as in glm(family = poisson).
#' @export
lik_accepts_offset.augp_negative_binomial <- function(likelihood) TRUE

# kernel_search = "auto" chooses the kernel of this likelihood's fits up to
# KERNEL_SEARCH_AUTO_N observations (R/kernel_search.R; the measurement behind it is in
# bench/counts/results_kernel_choice.md).
#' @export
lik_kernel_search_auto_n.augp_negative_binomial <- function(likelihood) KERNEL_SEARCH_AUTO_N

#' @export
lik_model_label.augp_negative_binomial <- function(likelihood) "count regression (negative binomial)"

# Unit deviance of the negative binomial with dispersion r, as MASS::negative.binomial():
# 2 [y log(y / mu) - (y + r) log((y + r) / (mu + r))], times the weight.
lik_nb_unit_deviance <- function(y, trials, mu, r) {
  2 * trials * (ylogy_ratio(y, mu) - (y + r) * log((y + r) / (mu + r)))
}

#' @export
lik_residual_parts.augp_negative_binomial <- function(likelihood, y, trials, levels, mean) {
  mu <- mean[, 1]
  r <- likelihood$r
  list(observed = matrix(y, ncol = 1L), var = matrix((mu + mu^2 / r) / trials, ncol = 1L),
       unit_deviance = matrix(lik_nb_unit_deviance(y, trials, mu, r), ncol = 1L))
}

#' @export
lik_deviance.augp_negative_binomial <- function(likelihood, y, trials, levels, mean) {
  sum(lik_nb_unit_deviance(y, trials, mean[, 1], likelihood$r))
}

#' @export
lik_sigma.augp_negative_binomial <- function(likelihood, object) {
  stop(paste0("sigma() is not defined for the negative_binomial likelihood: its dispersion is ",
              "`r` (fit$r; variance mu + mu^2 / r); see residuals(fit, type = \"pearson\")."),
       call. = FALSE)
}

#' @export
present_response.augp_negative_binomial <- function(likelihood, parts) {
  if (length(parts) == 1L) return(parts[[1]][, 1])
  as.data.frame(lapply(parts, function(p) unname(p[, 1])))
}

#' @export
category_prob.augp_negative_binomial <- function(likelihood, mean, levels) {
  stop(paste0("`type = \"class\"` is not available for the negative_binomial likelihood ",
              "(a count response); use type = \"response\"."), call. = FALSE)
}

# The count of each row times its weight: augment()'s residual divides by the weight.
#' @export
observed_counts.augp_negative_binomial <- function(likelihood, y, trials, levels) {
  matrix(y * trials, ncol = 1L, dimnames = list(NULL, "mean"))
}

#' @export
observed_response.augp_negative_binomial <- function(likelihood, y, trials, levels) y

# simulate(): a data frame of simulated counts, one column per simulation (the total
# of `size` replicates of a row).
#' @export
present_simulation.augp_negative_binomial <- function(likelihood, counts, size, ok, levels, rownames) {
  scalar_simulation_frame(counts, ok, rownames, 1)
}

# The weights are frequency weights: one simulated count per row, as glm's simulate().
#' @export
simulation_trials.augp_negative_binomial <- function(likelihood, trials) rep(1, length(trials))

#' @export
pp_check_type.augp_negative_binomial <- function(likelihood, trials) "rootogram"

# posterior_predict(): an S x r matrix of counts, as rstanarm and brms give.
#' @export
present_predictive.augp_negative_binomial <- function(likelihood, counts, size, levels) {
  scalar_predictive(counts, 1)
}

#' @export
observed_predictive.augp_negative_binomial <- function(likelihood, y, trials, levels) {
  as.numeric(y)
}

#' @export
encode_new_response.augp_negative_binomial <- function(likelihood, y, levels) {
  y <- check_counts(y, likelihood$name, "`newdata`: the response")
  n <- length(y)
  list(y = y, trials = rep(1, n), levels = levels, keep = rep(TRUE, n))
}

#' @export
plot_predictive_lik.augp_negative_binomial <- function(likelihood, object, inp, dat, grid, level) {
  plot_predictive_regression(object, inp, dat, grid, level, title = "GP count regression",
                             band = "the mean")
}

#' @export
plot_response_frame.augp_negative_binomial <- function(likelihood, pred, levels) scalar_response_frame(pred, "mean")

#' @export
plot_observed_frame.augp_negative_binomial <- function(likelihood, y, trials, levels) scalar_observed_frame(y, "mean")

#' @export
plot_response_label.augp_negative_binomial <- function(likelihood, levels) "E[y]"

#' @export
plot_response_scale.augp_negative_binomial <- function(likelihood) ggplot2::scale_y_continuous()

# Training root mean squared error and mean absolute error of the fitted mean count,
# and the mean deviance per observation.
#' @export
lik_fit_stats.augp_negative_binomial <- function(likelihood, object) {
  mu <- object$fitted[, 1]
  fitted_mean_stats(object$y, mu, object$trials,
                    unit_deviance = lik_nb_unit_deviance(object$y, object$trials, mu, likelihood$r))
}

#' @export
lik_learns_params.augp_negative_binomial <- function(likelihood) isTRUE(likelihood$learn_r)

#' @export
lik_param_values.augp_negative_binomial <- function(likelihood) list(r = likelihood$r)

#' @export
lik_params_label.augp_negative_binomial <- function(likelihood) "the dispersion `r`"

#' @export
print_lik_params.augp_negative_binomial <- function(likelihood, digits, rounds = NULL) {
  if (is.null(likelihood$r)) return(invisible())
  cat(sprintf("Dispersion: r %s\n", param_text(likelihood$r, likelihood$learn_r, "r" %in% likelihood$sampled)))
  invisible()
}

# Full Bayes: r under gamma(0.01, 0.01) when learned.
#' @export
lik_param_priors.augp_negative_binomial <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_r)) return(list())
  list(r = list(prior = new_prior_dist("gamma", 0.01, 0.01), n = 1L, positive = TRUE))
}
