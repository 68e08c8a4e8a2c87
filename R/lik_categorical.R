# Responses of counts over K >= 2 categories (the logistic-softmax and stick-breaking
# likelihoods, class augp_categorical): the encoded response is an n x K count matrix
# `Y` with row totals `trials`; the response mean has K columns, the category
# probabilities, which predict(), fitted() and simulate() return as matrices (one
# column per category). The link-specific methods (engine specification, prior mean,
# response mean, latent names) are in each likelihood's file.

#' @export
response_data.augp_categorical <- function(likelihood, resp) resp$Y

#' @export
response_names.augp_categorical <- function(likelihood, levels) levels

# One column per category: the observed proportion of the row's counts, its variance
# P (1 - P) / N under the multinomial at probabilities P, and the binomial unit
# deviance of the category against all others (a multinomial deviance has no signed
# per-category split; the residual deviance, lik_deviance(), is the multinomial one).
#' @export
lik_residual_parts.augp_categorical <- function(likelihood, y, trials, levels, mean) {
  Y <- observed_counts(likelihood, y, trials, levels)
  N <- rowSums(Y)
  P <- category_prob(likelihood, mean, levels)
  list(observed = Y / N, var = P * (1 - P) / N,
       unit_deviance = binomial_unit_deviance(Y, N, P))
}

#' @export
lik_deviance.augp_categorical <- function(likelihood, y, trials, levels, mean) {
  Y <- observed_counts(likelihood, y, trials, levels)
  sum(multinomial_row_deviance(Y, category_prob(likelihood, mean, levels)))
}

# A matrix (one column per category), or a list of matrices fit, se.fit, lwr, upr.
#' @export
present_response.augp_categorical <- function(likelihood, parts) {
  if (length(parts) == 1L) parts[[1]] else parts
}

#' @export
category_prob.augp_categorical <- function(likelihood, mean, levels) {
  dimnames(mean) <- list(rownames(mean), levels)
  mean
}

#' @export
observed_counts.augp_categorical <- function(likelihood, y, trials, levels) y

# The observed category of each row: the most frequent one.
#' @export
observed_response.augp_categorical <- function(likelihood, y, trials, levels) {
  factor(levels[max.col(y, ties.method = "first")], levels = levels)
}

# An array of counts: rows x categories x simulations.
#' @export
present_simulation.augp_categorical <- function(likelihood, counts, size, ok, levels,
                                                rownames) {
  nsim <- dim(counts)[1]
  out <- array(NA_real_, c(length(ok), length(levels), nsim),
               dimnames = list(rownames, levels, paste0("sim_", seq_len(nsim))))
  out[ok, , ] <- aperm(counts, c(2, 3, 1))
  out
}

#' @export
plot_predictive_lik.augp_categorical <- function(likelihood, object, inp, dat, grid, level) {
  plot_predictive_categories(object, inp, dat, grid, level)
}

# One curve per category.
#' @export
plot_response_frame.augp_categorical <- function(likelihood, pred, levels) {
  r <- nrow(pred$fit)
  K <- length(levels)
  data.frame(.row = rep(seq_len(r), K), category = factor(rep(levels, each = r), levels = levels),
             estimate = as.numeric(pred$fit), lower = as.numeric(pred$lwr),
             upper = as.numeric(pred$upr))
}

# Each row's observed proportion of every category, on that category's curve. With
# one trial per row the zeros (every category but the observed one) are left out: the
# point at 1 on the observed category's curve says it all.
#' @export
plot_observed_frame.augp_categorical <- function(likelihood, y, trials, levels) {
  n <- nrow(y)
  K <- length(levels)
  cat <- factor(rep(levels, each = n), levels = levels)
  out <- data.frame(.row = rep(seq_len(n), K), category = cat,
                    proportion = as.numeric(y / ifelse(trials > 0, trials, NA)), observed = cat)
  if (all(trials == 1)) out <- out[out$proportion > 0, , drop = FALSE]
  out[!is.na(out$proportion), , drop = FALSE]
}

#' @export
plot_response_label.augp_categorical <- function(likelihood, levels) "P(category)"

#' @export
lik_fit_stats.augp_categorical <- function(likelihood, object) classification_stats(object)

# posterior_predict(): with one trial per row the index of the category drawn (an
# S x r matrix with the levels as attribute "levels", as brms gives for categorical
# models); otherwise the S x r x K array of counts (brms's layout for multinomial
# models).
#' @export
present_predictive.augp_categorical <- function(likelihood, counts, size, levels) {
  if (all(size == 1)) {
    K <- dim(counts)[3]
    idx <- matrix(0, dim(counts)[1], dim(counts)[2])
    for (k in seq_len(K)) idx <- idx + k * counts[, , k]
    storage.mode(idx) <- "integer"
    attr(idx, "levels") <- levels
    return(idx)
  }
  dimnames(counts) <- list(NULL, NULL, levels)
  counts
}

#' @export
observed_predictive.augp_categorical <- function(likelihood, y, trials, levels) {
  if (all(trials == 1)) return(max.col(y, ties.method = "first"))
  dimnames(y) <- list(NULL, levels)
  y
}

# One row per observation of a factor (or character) response: an n x K matrix with a
# single 1 in the column of the observed level (the fit's levels).
one_hot_levels <- function(y, levels) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`newdata`: the response must be a factor or character vector.", call. = FALSE)
  }
  idx <- match(as.character(y), levels)
  if (anyNA(idx)) {
    stop(sprintf("`newdata`: the response has value(s) %s that are not levels of the fit (%s).",
                 paste(sQuote(unique(as.character(y)[is.na(idx)]), FALSE), collapse = ", "),
                 paste(levels, collapse = ", ")), call. = FALSE)
  }
  Y <- matrix(0, length(idx), length(levels), dimnames = list(NULL, levels))
  Y[cbind(seq_along(idx), idx)] <- 1
  Y
}
