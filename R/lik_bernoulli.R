# Bernoulli and binomial responses with the logistic link: successes out of trials,
# one latent column, P(success | f) = sigma(f). bernoulli_logit() objects inherit
# every method here from binomial_logit() (class augp_binomial); only the encoding
# of the response differs. The response has one column, the probability of the
# second level (the "success").

#' @export
encode_response.augp_bernoulli <- function(likelihood, y, weights = NULL) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`y` (the response) must be a vector for bernoulli_logit(); use ",
         "binomial_logit() for cbind(successes, failures).", call. = FALSE)
  }
  if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
  if (!length(y)) stop("`y` (the response) has no observations.", call. = FALSE)
  if (is.character(y)) y <- factor(y)
  if (is.factor(y)) {
    y <- droplevels(y)
    lev <- levels(y)
    if (length(lev) > 2L) {
      stop(sprintf(paste0("`y` (the response) has %d classes but bernoulli_logit() ",
                          "needs exactly 2 (use logistic_softmax() for more)."),
                   length(lev)), call. = FALSE)
    }
    s <- as.integer(y) - 1
  } else if (is.logical(y)) {
    lev <- c("FALSE", "TRUE")
    s <- as.numeric(y)
  } else if (is.numeric(y)) {
    # (integer 0/1 by its range; large responses: no temporaries of their length)
    ok <- if (is.integer(y)) min(y) >= 0L && max(y) <= 1L else all(y == 0 | y == 1)
    if (!isTRUE(ok)) {
      stop("`y` (the response) must be 0/1, logical or a two-level factor for ",
           "bernoulli_logit().", call. = FALSE)
    }
    lev <- c("0", "1")
    s <- as.numeric(y)
  } else {
    stop(sprintf("`y` (the response) has an unsupported type: %s.", class(y)[1]),
         call. = FALSE)
  }
  if (min(s) == max(s)) {
    stop(sprintf("`y` (the response) has only one class ('%s'): need at least two classes.",
                 if (is.factor(y)) as.character(y[1]) else as.character(s[1])),
         call. = FALSE)
  }
  if (is.null(weights)) {
    return(list(y = s, trials = rep(1, length(s)), levels = lev, keep = rep(TRUE, length(s))))
  }
  w <- check_weights(weights, length(s))
  list(y = s * w, trials = w, levels = lev, keep = w > 0)
}

#' @export
encode_response.augp_binomial <- function(likelihood, y, weights = NULL) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (!is.matrix(y) || ncol(y) != 2L || !is.numeric(y)) {
    stop("`y` (the response) must be cbind(successes, failures) for binomial_logit().",
         call. = FALSE)
  }
  if (anyNA(y) || any(!is.finite(y))) {
    stop("`y` (the response) counts contain NA or Inf.", call. = FALSE)
  }
  if (any(y < 0)) {
    stop("`y` (the response) counts must be non-negative.", call. = FALSE)
  }
  if (any(abs(y - round(y)) > 1e-8)) {
    stop("`y` (the response) counts must be whole numbers.", call. = FALSE)
  }
  s <- unname(round(y[, 1]))
  n <- s + unname(round(y[, 2]))
  w <- check_weights(weights, length(s))
  keep <- w > 0 & n > 0
  if (sum(s[keep] * w[keep]) == 0 || sum((n - s)[keep] * w[keep]) == 0) {
    stop("`y` (the response) has only one class: all successes or all failures.",
         call. = FALSE)
  }
  lev <- colnames(y)
  if (is.null(lev) || any(!nzchar(lev))) lev <- c("success", "failure")
  list(y = s * w, trials = n * w, levels = rev(lev), keep = keep)
}

#' @export
response_data.augp_binomial <- function(likelihood, resp) resp$y

#' @export
engine_lik_spec.augp_binomial <- function(likelihood, resp) {
  list(type = "binomial", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials))
}

# The logit of the observed success rate (clamped to [0.02, 0.98]).
#' @export
lik_prior_mean.augp_binomial <- function(likelihood, resp) {
  rate <- sum(resp$y) / sum(resp$trials)
  stats::qlogis(min(max(rate, 0.02), 0.98))
}

#' @export
lik_response_mean.augp_binomial <- function(likelihood, f) {
  spec <- list(type = "binomial", q = 1L, y = numeric(0), trials = numeric(0))
  .lik_response_mean_cpp(spec, as.matrix(f))
}

#' @export
response_names.augp_binomial <- function(likelihood, levels) levels[2]

# The offset adds to the log-odds, as in glm(family = binomial).
#' @export
lik_accepts_offset.augp_binomial <- function(likelihood) TRUE

#' @export
lik_model_label.augp_binomial <- function(likelihood) "binomial regression"

#' @export
lik_model_label.augp_bernoulli <- function(likelihood) "classifier"

# As glm(family = binomial) with the trials as prior weights: the observed proportion
# of successes, its variance p (1 - p) / trials at success probability p, and the
# binomial unit deviance.
#' @export
lik_residual_parts.augp_binomial <- function(likelihood, y, trials, levels, mean) {
  p <- mean[, 1]
  list(observed = matrix(y / trials, ncol = 1L), var = matrix(p * (1 - p) / trials, ncol = 1L),
       unit_deviance = matrix(binomial_unit_deviance(y, trials, p), ncol = 1L))
}

#' @export
lik_deviance.augp_binomial <- function(likelihood, y, trials, levels, mean) {
  sum(binomial_unit_deviance(y, trials, mean[, 1]))
}

# One response column: a vector (named by the rows), or a data frame with columns
# fit, se.fit, lwr, upr as asked.
#' @export
present_response.augp_binomial <- function(likelihood, parts) {
  if (length(parts) == 1L) return(parts[[1]][, 1])
  as.data.frame(lapply(parts, function(p) unname(p[, 1])))
}

#' @export
category_prob.augp_binomial <- function(likelihood, mean, levels) {
  p <- mean[, 1]
  matrix(c(1 - p, p), ncol = 2L, dimnames = list(rownames(mean), levels))
}

#' @export
observed_counts.augp_binomial <- function(likelihood, y, trials, levels) {
  matrix(c(trials - y, y), ncol = 2L, dimnames = list(NULL, levels))
}

# One trial per row: the observed level; otherwise the proportion of successes.
#' @export
observed_response.augp_binomial <- function(likelihood, y, trials, levels) {
  obs <- y / trials
  if (all(trials == 1)) factor(levels[obs + 1], levels = levels) else obs
}

# A data frame with one column of successes per simulation (a factor with the
# response levels when every row has one trial).
#' @export
present_simulation.augp_binomial <- function(likelihood, counts, size, ok, levels, rownames) {
  nsim <- dim(counts)[1]
  out <- matrix(NA_real_, length(ok), nsim,
                dimnames = list(rownames, paste0("sim_", seq_len(nsim))))
  out[ok, ] <- t(matrix(counts[, , 1], nsim))
  out <- as.data.frame(out)
  if (all(size == 1) && length(levels) == 2) {
    out[] <- lapply(out, function(v) factor(levels[v + 1], levels = levels))
  }
  out
}

#' @export
plot_predictive_lik.augp_binomial <- function(likelihood, object, inp, dat, grid, level) {
  plot_predictive_probability(object, inp, dat, grid, level)
}

# The success probability: one curve, labelled by the success level.
#' @export
plot_response_frame.augp_binomial <- function(likelihood, pred, levels) {
  r <- nrow(pred)
  data.frame(.row = seq_len(r), category = factor(rep(levels[2], r), levels = levels),
             estimate = pred$fit, lower = pred$lwr, upper = pred$upr)
}

# Each row at its proportion of successes, coloured by its observed class (one trial
# per row) or as a success proportion (several trials).
#' @export
plot_observed_frame.augp_binomial <- function(likelihood, y, trials, levels) {
  obs <- observed_response(likelihood, y, trials, levels)
  if (!is.factor(obs)) obs <- factor(rep(levels[2], length(y)), levels = levels)
  data.frame(.row = seq_along(y), category = factor(rep(levels[2], length(y)), levels = levels),
             proportion = y / trials, observed = obs)
}

#' @export
plot_response_label.augp_binomial <- function(likelihood, levels) {
  sprintf("P(%s)", levels[2])
}

#' @export
lik_fit_stats.augp_binomial <- function(likelihood, object) classification_stats(object)

# posterior_predict(): an S x r matrix of successes (0/1 for one trial per row), as
# rstanarm and brms give for Bernoulli and binomial models.
#' @export
present_predictive.augp_binomial <- function(likelihood, counts, size, levels) {
  matrix(counts[, , 1], dim(counts)[1], dim(counts)[2])
}

#' @export
observed_predictive.augp_binomial <- function(likelihood, y, trials, levels) as.numeric(y)

# A vector of levels (factor, character, logical or 0/1, matched to the fit's levels
# by their labels): one trial per row.
#' @export
encode_new_response.augp_bernoulli <- function(likelihood, y, levels) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`newdata`: the response must be a vector for bernoulli_logit().", call. = FALSE)
  }
  idx <- match(as.character(y), levels)
  if (anyNA(idx)) {
    stop(sprintf("`newdata`: the response has value(s) %s that are not levels of the fit (%s).",
                 paste(sQuote(unique(as.character(y)[is.na(idx)]), FALSE), collapse = ", "),
                 paste(levels, collapse = ", ")), call. = FALSE)
  }
  n <- length(idx)
  list(y = idx - 1, trials = rep(1, n), levels = levels, keep = rep(TRUE, n))
}

#' @export
encode_new_response.augp_binomial <- function(likelihood, y, levels) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (!is.matrix(y) || ncol(y) != 2L || !is.numeric(y) || anyNA(y) || any(y < 0)) {
    stop("`newdata`: the response must be cbind(successes, failures) for binomial_logit().",
         call. = FALSE)
  }
  list(y = unname(y[, 1]), trials = unname(rowSums(y)), levels = levels,
       keep = rep(TRUE, nrow(y)))
}
