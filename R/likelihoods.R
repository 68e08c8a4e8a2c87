#' Likelihoods for augmented GP classification
#'
#' Constructors for the observation models that [augp()] can fit. Each
#' returns a small object of class `augp_likelihood` that knows how to check
#' and encode the response.
#'
#' * `bernoulli_logit()`: a binary response (two-level factor, logical, or
#'   numeric 0/1); \eqn{P(y = 1 \mid f) = \sigma(f)}, the second factor level
#'   counting as the "success".
#' * `binomial_logit()`: counts given as `cbind(successes, failures)`;
#'   successes follow a binomial law with probability \eqn{\sigma(f)}.
#'
#' When `likelihood = NULL`, [augp()] picks one from the response: a binary
#' response gives `bernoulli_logit()`, a two-column count matrix gives
#' `binomial_logit()`, an ordered factor with more than two levels gives
#' [ordinal()], another factor with more than two levels gives
#' `logistic_softmax()`, a count matrix with more than two columns
#' `stick_breaking()`, a numeric vector with non-integer values [gaussian_noise()]
#' and a numeric vector of non-negative whole numbers that are not all 0/1
#' (counts) [negative_binomial()]; that last choice is announced in a message,
#' since a measurement recorded in whole numbers (ozone in ppb, say) may be
#' meant for [gaussian_noise()].
#'
#' @return An object of class `augp_likelihood`.
#' @examples
#' bernoulli_logit()
#' binomial_logit()
#' @name likelihoods
NULL

#' @rdname likelihoods
#' @export
bernoulli_logit <- function() {
  new_likelihood("bernoulli_logit", family = c("bernoulli", "binomial"))
}

#' @rdname likelihoods
#' @export
binomial_logit <- function() new_likelihood("binomial_logit", family = "binomial")

# `family`: the classes, most specific first (a Bernoulli likelihood is a binomial
# one with one trial per row and inherits its methods).
new_likelihood <- function(name, family, link = "logit", ...) {
  structure(list(name = name, family = family[1], link = link, ...),
            class = c(paste0("augp_", family), "augp_likelihood"))
}

#' @export
print.augp_likelihood <- function(x, ...) {
  cat(sprintf("<augp_likelihood> %s (link: %s)\n", x$name, x$link))
  invisible(x)
}

# Pick a likelihood from the response when the user gave none.
guess_likelihood <- function(y) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (is.matrix(y) && ncol(y) == 2L) return(binomial_logit())
  if (is.matrix(y) && ncol(y) > 2L) {
    make <- get0("stick_breaking", envir = asNamespace("augmentedGP"), mode = "function")
    if (is.null(make)) {
      stop("`y` (the response): a count matrix with more than two columns needs the ",
           "stick-breaking likelihood, which is not available in this build.", call. = FALSE)
    }
    return(make())
  }
  if (is.ordered(y) && nlevels(droplevels(y)) > 2L) return(ordinal())
  if (is.character(y)) y <- factor(y)
  if (is.factor(y) && nlevels(droplevels(y)) > 2L) {
    make <- get0("logistic_softmax", envir = asNamespace("augmentedGP"), mode = "function")
    if (is.null(make)) {
      stop(sprintf(paste0("`y` (the response) is a factor with %d levels: the ",
                          "logistic-softmax likelihood is not available in this build."),
                   nlevels(droplevels(y))), call. = FALSE)
    }
    return(make())
  }
  if (is.numeric(y) && !is.matrix(y) && any(abs(y - round(y)) > 1e-8, na.rm = TRUE)) return(gaussian_noise())
  if (is.numeric(y) && !is.matrix(y) && all(y >= 0, na.rm = TRUE) && !all(y %in% c(0, 1, NA))) {
    return(negative_binomial())
  }
  bernoulli_logit()
}

# A stats family object, as glm() takes it: gaussian() (identity link) is
# gaussian_noise(), binomial() (logit link) the Bernoulli or binomial likelihood the
# response calls for; other families and links have no augmented likelihood here.
likelihood_from_family <- function(family, y) {
  key <- paste(family$family, family$link)
  if (identical(key, "gaussian identity")) return(gaussian_noise())
  if (family$family %in% c("poisson", "quasipoisson") || grepl("^Negative Binomial", family$family)) {
    stop(sprintf(paste0("`likelihood`: the %s family (%s link) has no augmented likelihood here; ",
                        "for counts use negative_binomial() (log link; a large fixed `r` is ",
                        "close to Poisson) or the Poisson likelihood with a logistic rate."),
                 family$family, family$link), call. = FALSE)
  }
  if (identical(key, "binomial logit")) {
    lik <- guess_likelihood(y)
    if (inherits(lik, "augp_binomial")) return(lik)
  }
  stop(sprintf(paste0("`likelihood`: the %s family with the %s link has no augmented ",
                      "likelihood here; use gaussian() or binomial() (logit link), or one ",
                      "of the package's likelihood constructors."), family$family, family$link),
       call. = FALSE)
}

#' The typical scale of the latent function under a likelihood
#'
#' A kernel's default variance (`variance = NULL`) is the square of this: 1 for
#' likelihoods whose latent function is on the log-odds scale (the default method),
#' the standard deviation of the response for regression likelihoods. `resp`: the
#' encoded response (encode_response()).
#' @noRd
lik_latent_scale <- function(likelihood, resp) UseMethod("lik_latent_scale")

#' @export
lik_latent_scale.augp_likelihood <- function(likelihood, resp) 1

#' The latent scale of each latent column, for one kernel per column (internal generic)
#'
#' NULL (the default): one kernel for all latent columns, its default variance the
#' square of lik_latent_scale(). A likelihood whose latent functions live on different
#' scales returns one scale per column: the fit then gives every column its own copy of
#' the kernel (hyperparameters learned separately), a default variance being the square
#' of the column's scale. `resp`: the encoded response.
#' @noRd
lik_column_scales <- function(likelihood, resp) UseMethod("lik_column_scales")

#' @export
lik_column_scales.augp_likelihood <- function(likelihood, resp) NULL

#' The noise standard deviation at the rows of a latent posterior (internal generic)
#'
#' For predict(type = "noise"): `lp` from latent_posterior(); returns a list of r x 1
#' matrices mean, sd and (level > 0) lwr, upr. Defined for regression likelihoods.
#' @noRd
lik_noise_summary <- function(likelihood, object, lp, level) UseMethod("lik_noise_summary")

#' @export
lik_noise_summary.augp_likelihood <- function(likelihood, object, lp, level) {
  stop(sprintf(paste0("`type = \"noise\"` is for regression likelihoods (a noise standard ",
                      "deviation); the %s likelihood has none."), likelihood$name), call. = FALSE)
}

#' The objective that chooses the kernel hyperparameters by default
#'
#' `augp_control(hyper_objective = NULL)` asks the likelihood: `"augmented"` (the
#' augmented ELBO, the default method) or `"direct"` (the augmented search, then a
#' ladder of kernels ranked by the direct ELBO E_q[log p(y | f)] - KL(q(f) || p(f)); see
#' engine_direct_ladder() in R/engine.R). A likelihood whose augmented bound loosens
#' markedly with the kernel's flexibility returns "direct".
#' @noRd
lik_hyper_objective <- function(likelihood) UseMethod("lik_hyper_objective")

#' @export
lik_hyper_objective.augp_likelihood <- function(likelihood) "augmented"

#' The kernel a fit takes when `kernel = NULL` (the default of augp() and augp_fit())
#' @noRd
lik_default_kernel <- function(likelihood) UseMethod("lik_default_kernel")

#' @export
lik_default_kernel.augp_likelihood <- function(likelihood) kernel_se()

check_likelihood <- function(likelihood, y) {
  if (is.null(likelihood)) {
    likelihood <- guess_likelihood(y)
    # Whole numbers are read as counts; a measurement that happens to be recorded in
    # whole numbers would otherwise be fitted with a count model without the user asking.
    if (inherits(likelihood, "augp_negative_binomial")) {
      message("`likelihood` not given: the response is whole numbers >= 0, so it is fitted as ",
              "counts with negative_binomial(). For a measurement recorded in whole numbers, ",
              "pass `likelihood = gaussian_noise()`.")
    }
    return(likelihood)
  }
  if (is.function(likelihood)) likelihood <- likelihood()
  if (inherits(likelihood, "family")) likelihood <- likelihood_from_family(likelihood, y)
  if (!inherits(likelihood, "augp_likelihood")) {
    stop(paste0("`likelihood` must be NULL or made by bernoulli_logit(), binomial_logit(), ",
                "logistic_softmax(), stick_breaking(), ordinal(), gaussian_noise(), student_t(), ",
                "laplace(), heteroscedastic_gaussian(), negative_binomial() or poisson_logistic()."), call. = FALSE)
  }
  likelihood
}

# ---- The likelihood interface of the front end ------------------------------------
#
# A likelihood object (class c("augp_<family>", "augp_likelihood")) answers, through
# the generics below, everything fitting, predict(), fitted(), summary(), simulate()
# and the plots need to know about the response. Each likelihood implements them in
# its own file (R/lik_bernoulli.R, R/lik_logistic_softmax.R, R/lik_stick_breaking.R).
# The numerics (response mean, its summaries, simulation) come from the C++
# likelihood of the engine specification (`fit$engine$lik`, see src/likelihood.h).
#
# Terms: q latent columns (the GP values f, r x q at r points); the response mean has
# R columns (1 for Bernoulli/binomial: the success probability; the K category
# probabilities otherwise); the levels are the K categories of the observed response
# (two for Bernoulli/binomial: failure, success).

#' Encode a response for a likelihood
#'
#' Internal generic: returns a list with at least `levels` (the categories),
#' `keep` (rows that carry information: weight > 0, trials > 0) and `trials`
#' (the number of trials per row), plus the likelihood's own encoding of the
#' counts (`y`, successes, for Bernoulli/binomial; `Y`, n x K counts, otherwise).
#' @noRd
encode_response <- function(likelihood, y, weights = NULL) {
  UseMethod("encode_response")
}

#' The rows `rows` of an encoded response (same fields, subset)
#' @noRd
subset_response <- function(likelihood, resp, rows) UseMethod("subset_response")

# The per-row fields of encode_response(): `keep`, `trials`, and the counts or values
# `y` (a vector) or `Y` (one row per observation); `levels` is not per row.
#' @export
subset_response.augp_likelihood <- function(likelihood, resp, rows) {
  resp$keep <- resp$keep[rows]
  resp$trials <- resp$trials[rows]
  if (!is.null(resp$y)) resp$y <- resp$y[rows]
  if (!is.null(resp$Y)) resp$Y <- resp$Y[rows, , drop = FALSE]
  resp
}

#' The observed response as stored in the fit (`fit$y`) from an encoded response
#' @noRd
response_data <- function(likelihood, resp) UseMethod("response_data")

#' The engine's likelihood list (type, q, data) for an encoded response
#' @noRd
engine_lik_spec <- function(likelihood, resp) UseMethod("engine_lik_spec")

#' The prior mean of the latent functions: scalar, length q or n x q
#' @noRd
lik_prior_mean <- function(likelihood, resp) UseMethod("lik_prior_mean")

#' Is the prior mean the level a linear model fits at the centre of the inputs? (internal
#' generic)
#'
#' TRUE when lik_prior_mean() is the intercept that a linear predictor on centred inputs
#' would have (the response mean, for an identity link and least squares); FALSE (the
#' default) when it is a pooled plug-in that differs from a GLM's intercept (a non-linear
#' link). A kernel without a constant component (kernel_linear() on the standardised
#' inputs) keeps the level at the prior mean, which the front end then points out.
#' @noRd
lik_prior_mean_is_level <- function(likelihood) UseMethod("lik_prior_mean_is_level")

#' @export
lik_prior_mean_is_level.augp_likelihood <- function(likelihood) FALSE

#' The response mean (inverse link) at latent values f (r x q): r x R
#'
#' From the likelihood's parameters alone (no data), through the C++ likelihood.
#' @noRd
lik_response_mean <- function(likelihood, f) UseMethod("lik_response_mean")

# Through the engine list of the likelihood's parameters (lik_param_spec).
#' @export
lik_response_mean.augp_likelihood <- function(likelihood, f) {
  .lik_response_mean_cpp(lik_param_spec(likelihood), as.matrix(f))
}

# The engine list of the likelihood at its (fitted) parameters, without data.
lik_param_spec <- function(likelihood) UseMethod("lik_param_spec")

# lik_param_spec() for a likelihood with scalar parameters: the list the engine reads,
# with no data, each parameter in `defaults` at the likelihood's value or, where the
# likelihood leaves it unset (NULL), at its default there; the flags learn_<name> for
# the names in `learn` are FALSE (nothing is fitted without data).
scalar_param_spec <- function(likelihood, type, q, defaults, learn = character(0)) {
  values <- lapply(names(defaults), function(nm) {
    if (is.null(likelihood[[nm]])) defaults[[nm]] else likelihood[[nm]]
  })
  names(values) <- names(defaults)
  flags <- rep(list(FALSE), length(learn))
  names(flags) <- sprintf("learn_%s", learn)
  c(list(type = type, q = q, y = numeric(0), trials = numeric(0)), values, flags)
}

#' The likelihood with its parameters as fitted (`spec`: the engine's likelihood
#' list after the fit; `levels`: the categories)
#' @noRd
lik_fitted <- function(likelihood, spec, levels) UseMethod("lik_fitted")

# Likelihoods without parameters learned by the fit are unchanged.
#' @export
lik_fitted.augp_likelihood <- function(likelihood, spec, levels) likelihood

# lik_fitted() for a likelihood with scalar parameters: the likelihood with each
# parameter in `names` at its value in the engine list `spec`.
fitted_scalar_params <- function(likelihood, spec, names) {
  for (nm in names) likelihood[[nm]] <- as.double(spec[[nm]])
  likelihood
}

#' Names of the q latent columns
#' @noRd
latent_names <- function(likelihood, levels, q) UseMethod("latent_names")

# One latent function, f.
#' @export
latent_names.augp_likelihood <- function(likelihood, levels, q) "f"

#' Names of the R response columns
#' @noRd
response_names <- function(likelihood, levels) UseMethod("response_names")

#' How predict() and fitted() present a summary
#'
#' `parts`: named list of r x C matrices with dimnames (fit, and as asked
#' se.fit, lwr, upr). Returns the user-facing value: a vector or data frame for a
#' single response column, as glm() does; a matrix or list of matrices otherwise.
#' @noRd
present_response <- function(likelihood, parts) UseMethod("present_response")

#' Probabilities of the K levels (r x K) from the response mean (r x R)
#' @noRd
category_prob <- function(likelihood, mean, levels) UseMethod("category_prob")

#' Observed counts of the K levels (n x K) from the fit's response (`fit$y`, `fit$trials`)
#' @noRd
observed_counts <- function(likelihood, y, trials, levels) UseMethod("observed_counts")

#' The observed response as the plots show it: a factor of levels, or proportions
#' @noRd
observed_response <- function(likelihood, y, trials, levels) UseMethod("observed_response")

#' How simulate() presents simulated counts
#'
#' `counts`: S x r x R array for the r rows with complete inputs (`ok`);
#' `size`: trials per row (all rows); `rownames`: names of all rows or NULL.
#' @noRd
present_simulation <- function(likelihood, counts, size, ok, levels, rownames) {
  UseMethod("present_simulation")
}

#' How posterior_predict() presents simulated counts, in the layout of rstanarm and
#' brms
#'
#' `counts`: S x r x R array of simulated counts for r rows; `size`: their trials.
#' Returns an S x r matrix (successes, or the category index of one trial per row,
#' with the levels as attribute "levels") or an S x r x K array of counts per category.
#' @noRd
present_predictive <- function(likelihood, counts, size, levels) {
  UseMethod("present_predictive")
}

#' The trials per row that simulate() and posterior_predict() draw for the training
#' rows when the user gives no `size`: the binomial trials by default. Likelihoods whose
#' `trials` are frequency weights draw one response per row, as glm's simulate() does.
#' @noRd
simulation_trials <- function(likelihood, trials) UseMethod("simulation_trials")

#' @export
simulation_trials.augp_likelihood <- function(likelihood, trials) as.numeric(trials)

#' The bayesplot check pp_check() draws when the user gives no `type`: bars of the
#' successes for binary responses, intervals of the success counts for binomial ones.
#' @noRd
pp_check_type <- function(likelihood, trials) UseMethod("pp_check_type")

#' @export
pp_check_type.augp_likelihood <- function(likelihood, trials) {
  if (all(trials == 1)) "bars" else "intervals"
}

#' The observed response in the layout of present_predictive(): a vector of length n
#' (successes, or category indices) or an n x K count matrix
#' @noRd
observed_predictive <- function(likelihood, y, trials, levels) UseMethod("observed_predictive")

#' Encode the response of new data against the fit's levels (for log_lik(newdata))
#'
#' Returns the fields engine_lik_spec() needs (like encode_response(), every row
#' kept); a category not among `levels` is an error. `likelihood`: the fitted
#' likelihood (with its learned parameters).
#' @noRd
encode_new_response <- function(likelihood, y, levels) UseMethod("encode_new_response")

#' The predictive plot of a fit over one or two numeric inputs
#'
#' autoplot(type = "predictive") for fits whose inputs are one or two numeric
#' variables: `inp` from plot_inputs() (`vars`: the plotted inputs), `dat` the
#' inputs at the training rows, `grid` points per input, `level` of the bands.
#' Returns a ggplot. Other fits get the conditional-effects view, which uses the
#' presentation generics below.
#' @noRd
plot_predictive_lik <- function(likelihood, object, inp, dat, grid, level) {
  UseMethod("plot_predictive_lik")
}

#' Response probabilities for the plots, in long form
#'
#' `pred`: the value of predict(type = "response", interval = "credible") at r
#' new rows. Returns a data frame with one row per new row and plotted category:
#' `.row` (index of the new row), `category` (a factor with levels `levels`),
#' `estimate`, `lower`, `upper`. Bernoulli/binomial: the success level only;
#' several categories: every category.
#' @noRd
plot_response_frame <- function(likelihood, pred, levels) UseMethod("plot_response_frame")

#' The observed data points of the plots
#'
#' A data frame with one row per plotted point: `.row` (training row),
#' `category` (the response curve it belongs to), `proportion` (observed
#' proportion of that category in the row), `observed` (a factor with levels
#' `levels`: the colour of the point, the observed class).
#' @noRd
plot_observed_frame <- function(likelihood, y, trials, levels) {
  UseMethod("plot_observed_frame")
}

#' The y-axis label of the response probabilities, e.g. "P(Yes)"
#' @noRd
plot_response_label <- function(likelihood, levels) UseMethod("plot_response_label")

#' The y scale of the response in the effects plot: probabilities in [0, 1] by
#' default; likelihoods whose response mean is not a probability return their own
#' @noRd
plot_response_scale <- function(likelihood) UseMethod("plot_response_scale")

#' @export
plot_response_scale.augp_likelihood <- function(likelihood) {
  ggplot2::scale_y_continuous(limits = c(0, 1), breaks = seq(0, 1, 0.25))
}

#' Training statistics for summary() (internal generic): a named list of numbers
#' whose attribute "labels" holds a sprintf() format for each
#' @noRd
lik_fit_stats <- function(likelihood, object) UseMethod("lik_fit_stats")

# print_lik_params() for a likelihood with the scalar parameter `name`: one line,
# sprintf(fmt, lik_params_text(likelihood)); nothing while the parameter is unset.
print_scalar_params <- function(likelihood, name, fmt) {
  if (is.null(likelihood[[name]])) return(invisible())
  cat(sprintf(fmt, lik_params_text(likelihood)))
  invisible()
}

# lik_fit_stats() for a fitted mean `mu` of the response y with weights w: the weighted
# root mean squared error, the weighted mean absolute error when `mae`, and the
# weighted mean of the unit deviances `unit_deviance` (per row, already weighted)
# when given.
fitted_mean_stats <- function(y, mu, w, mae = TRUE, unit_deviance = NULL) {
  r <- y - mu
  out <- list(rmse = sqrt(sum(w * r^2) / sum(w)))
  labels <- c(rmse = "Training RMSE: %.4g")
  if (mae) {
    out$mae <- sum(w * abs(r)) / sum(w)
    labels <- c(labels, mae = "MAE: %.4g")
  }
  if (!is.null(unit_deviance)) {
    out$deviance <- sum(unit_deviance) / sum(w)
    labels <- c(labels, deviance = "mean deviance: %.4g")
  }
  structure(out, labels = labels)
}

#' Can the likelihood take an offset? (internal generic)
#'
#' TRUE when its latent function is one linear predictor to which an offset adds,
#' as in glm(); the offset is then added to every latent column of the prior mean.
#' @noRd
lik_accepts_offset <- function(likelihood) UseMethod("lik_accepts_offset")

#' Is the likelihood Gaussian in f given its parameters?
#'
#' TRUE when p(y | f) is a Gaussian density in f with no auxiliary variables, so that
#' the exact GP's posterior and log marginal likelihood are closed-form and the kernel
#' and the likelihood's parameters can be searched on the marginal likelihood directly
#' (R/gaussian_exact.R) instead of through CAVI.
#' @noRd
lik_exact_marginal <- function(likelihood) UseMethod("lik_exact_marginal")

#' @export
lik_exact_marginal.augp_likelihood <- function(likelihood) FALSE

#' The largest n q (observations times latent columns) at which augp_control(integrate_hyper
#' = "auto") averages a fit with this likelihood over its hyperparameters (internal
#' generic)
#'
#' The Laplace mixture costs 2 p + J fits at fixed hyperparameters (R/hyper_integrate.R):
#' Cholesky factorisations for the conjugate Gaussian fit, CAVI runs otherwise. Default:
#' IH_AUTO_N for the Gaussian exact fit (lik_exact_marginal()), 0 (off) for variational
#' fits; a likelihood on which the averaging was measured to raise the held-out log
#' predictive density says so by its own method.
#' @noRd
lik_integrate_auto_n <- function(likelihood) UseMethod("lik_integrate_auto_n")

#' @export
lik_integrate_auto_n.augp_likelihood <- function(likelihood) {
  if (lik_exact_marginal(likelihood)) IH_AUTO_N else 0
}

#' The largest n q (observations times latent columns) at which augp_control(kernel_search
#' = "auto") chooses the kernel of a fit with this likelihood (internal generic)
#'
#' The search (kernel_search_fit() in R/kernel_search.R) fits every candidate of
#' kernel_search_candidates(), about five fits. Default 0 (off): a likelihood on which the
#' choice was measured not to lower the held-out log predictive density says so by its
#' own method, returning KERNEL_SEARCH_AUTO_N.
#' @noRd
lik_kernel_search_auto_n <- function(likelihood) UseMethod("lik_kernel_search_auto_n")

#' @export
lik_kernel_search_auto_n.augp_likelihood <- function(likelihood) 0

#' @export
lik_accepts_offset.augp_likelihood <- function(likelihood) FALSE

#' The noun print() and summary() use for a model with this likelihood ("classifier",
#' "binomial regression", ...) (internal generic)
#' @noRd
lik_model_label <- function(likelihood) UseMethod("lik_model_label")

#' @export
lik_model_label.augp_likelihood <- function(likelihood) "model"

#' The pieces of residuals() (internal generic)
#'
#' From the fit's response (`y`, `trials`, `levels` as stored in the fit) and the
#' response mean `mean` (n x R, the fitted values): a list of n x R matrices
#' `observed` (the observed mean response: proportions of the trials), `var` (the
#' variance of the observed mean response of each observation given `mean`: the
#' denominator of Pearson residuals) and `unit_deviance` (each observation's
#' contribution to the deviance, per response column: the square of the deviance
#' residual).
#' @noRd
lik_residual_parts <- function(likelihood, y, trials, levels, mean) {
  UseMethod("lik_residual_parts")
}

#' @export
lik_residual_parts.augp_likelihood <- function(likelihood, y, trials, levels, mean) {
  stop(sprintf("residuals() are not available for the %s likelihood.", likelihood$name),
       call. = FALSE)
}

#' The residual deviance at the response mean `mean` (internal generic): twice the
#' log-likelihood ratio of the saturated model to the model with that mean
#' @noRd
lik_deviance <- function(likelihood, y, trials, levels, mean) UseMethod("lik_deviance")

#' @export
lik_deviance.augp_likelihood <- function(likelihood, y, trials, levels, mean) {
  stop(sprintf("deviance() is not available for the %s likelihood.", likelihood$name),
       call. = FALSE)
}

#' The residual standard deviation (sigma()) of a fit (internal generic): defined for
#' likelihoods with a scale parameter; an error otherwise
#' @noRd
lik_sigma <- function(likelihood, object) UseMethod("lik_sigma")

#' @export
lik_sigma.augp_likelihood <- function(likelihood, object) {
  stop(sprintf(paste0("sigma() is not defined for the %s likelihood: it has no scale ",
                      "(dispersion) parameter; see residuals(fit, type = \"pearson\") for ",
                      "standardised residuals."), likelihood$name), call. = FALSE)
}

# y log(y / mu), 0 where y = 0 (the limit).
ylogy_ratio <- function(y, mu) ifelse(y > 0, y * log(y / pmax(mu, 1e-300)), 0)

# Binomial unit deviances of s successes out of n trials at success probability p.
binomial_unit_deviance <- function(s, n, p) {
  2 * (ylogy_ratio(s, n * p) + ylogy_ratio(n - s, n * (1 - p)))
}

# Multinomial deviance of each row of counts Y (r x K) at probabilities P (r x K).
multinomial_row_deviance <- function(Y, P) {
  2 * rowSums(ylogy_ratio(Y, rowSums(Y) * P))
}

# The predicted class (a factor with the fit's levels): the most probable level.
predicted_class <- function(likelihood, mean, levels) {
  P <- category_prob(likelihood, mean, levels)
  factor(levels[max.col(P, ties.method = "first")], levels = levels)
}

# Frequency weights: non-negative whole numbers that multiply trials and successes.
check_weights <- function(weights, n) {
  if (is.null(weights)) return(rep(1, n))
  if (!is.numeric(weights) || length(weights) != n) {
    stop(sprintf("`weights` must be a numeric vector of length %d.", n), call. = FALSE)
  }
  if (anyNA(weights) || any(!is.finite(weights)) || any(weights < 0) ||
      any(abs(weights - round(weights)) > 1e-8)) {
    stop("`weights` must be non-negative whole numbers (frequency weights).",
         call. = FALSE)
  }
  round(as.double(weights))
}
