#' Multinomial counts with the stick-breaking logistic link
#'
#' `stick_breaking()` is the likelihood for counts spread over \eqn{K \ge 2}
#' categories (Linderman, Johnson and Adams, 2015). The category
#' probabilities are built by breaking a unit stick: the first piece has
#' length \eqn{\sigma(\psi_1)}, the second takes the fraction
#' \eqn{\sigma(\psi_2)} of what is left, and so on; the last category gets the
#' remainder. Each of the \eqn{K - 1} stick logits \eqn{\psi_k(x)} has its
#' own Gaussian process prior (the kernel hyperparameters are shared, or one
#' set per stick with `augp_control(shared_hyper = FALSE)`), and
#' the multinomial likelihood factorises exactly into \eqn{K - 1} binomial
#' likelihoods, one per stick, each made conditionally Gaussian by
#' Polya-Gamma augmentation. This gives a Gibbs sampler and a
#' coordinate-ascent variational approximation with the same per-stick
#' Gaussian steps as the binary models.
#'
#' @section The response: A count matrix with more than two columns
#'   (`cbind(c1, c2, c3) ~ x` in a formula) selects this likelihood
#'   automatically. A factor response (one trial per row) is accepted when
#'   `likelihood = stick_breaking()` is given. Counts must be non-negative
#'   whole numbers; rows whose total is zero carry no information and are
#'   left out of the fit.
#'
#' @section Why the category order matters: The stick-breaking prior is not
#'   symmetric in the categories. Category 1 is modelled directly by one
#'   logistic GP; the last category only gets what all the sticks leave over,
#'   so its probability is a product of \eqn{K - 1} terms and its prior and
#'   posterior are shaped differently, particularly where data are sparse.
#'   The default prior mean (below) makes the prior on the probabilities
#'   roughly uniform whatever the order, but the posterior (and the smoothness
#'   each category's curve can show) still depends on it. Putting the most
#'   frequent categories (or the ones of main interest) first, or the order
#'   that makes successive conditional probabilities smooth (for ordered
#'   categories, their natural order), tends to work best. With `order` the
#'   sticks follow the given order, and predicted probabilities come back in
#'   that order.
#'
#' @param order `NULL` (the order of the response's columns or factor
#'   levels), or a permutation of the category names (or of their column
#'   indices) giving the order in which the sticks are broken.
#' @param prior_mean `NULL` for the default prior mean of the stick logits,
#'   `mu_k = digamma(1) - digamma(K - k)`, the mean of the logit of a
#'   Beta\eqn{(1, K - k)} variable (the breaks of a uniform Dirichlet
#'   distribution), so that the induced prior on the probabilities is roughly
#'   uniform on the simplex;
#'   or a single number or a vector of length \eqn{K - 1} (one per stick).
#' @return An object of class `c("augp_stick_breaking", "augp_likelihood")`.
#' @references Linderman, S. W., Johnson, M. J. and Adams, R. P. (2015).
#'   Dependent multinomial models made easy: stick-breaking with the
#'   Polya-gamma augmentation. Advances in Neural Information Processing
#'   Systems 28.
#' @seealso [pi_SB()] for the link, [predict_counts()] for expected counts,
#'   [simulate.augp()] for draws from the posterior predictive.
#' @examples
#' stick_breaking()
#' stick_breaking(order = c("c", "a", "b"))
#' @export
stick_breaking <- function(order = NULL, prior_mean = NULL) {
  if (!is.null(order)) {
    if (!(is.character(order) || is.numeric(order)) || anyNA(order) || length(order) < 2L ||
        anyDuplicated(order)) {
      stop("`order` must be NULL or a permutation of the category names or indices.",
           call. = FALSE)
    }
    if (is.numeric(order) && any(order != round(order) | order < 1)) {
      stop("`order` indices must be whole numbers >= 1.", call. = FALSE)
    }
  }
  if (!is.null(prior_mean) &&
      (!is.numeric(prior_mean) || length(prior_mean) < 1L || any(!is.finite(prior_mean)))) {
    stop("`prior_mean` must be NULL or a finite numeric scalar or vector.", call. = FALSE)
  }
  new_likelihood("stick_breaking", family = c("stick_breaking", "categorical"), link = "stick-breaking logit",
                 order = order, prior_mean = prior_mean)
}

#' The stick-breaking link and its inverse
#'
#' `pi_SB()` maps stick logits to category probabilities:
#' \eqn{\pi_k = \sigma(\psi_k) \prod_{j<k} \sigma(-\psi_j)} for \eqn{k < K} and
#' \eqn{\pi_K = \prod_{j<K} \sigma(-\psi_j)}. `pi_SB_inv()` is its inverse:
#' \eqn{\psi_k = \log \pi_k - \log \sum_{j>k} \pi_j}. Both work in log space,
#' so extreme logits give probabilities that still sum to one.
#'
#' @param psi A numeric vector of \eqn{K - 1} stick logits, or a matrix with
#'   \eqn{K - 1} columns (one row per observation or draw).
#' @param prob A numeric vector of \eqn{K} probabilities, or a matrix with
#'   \eqn{K} columns whose rows sum to one; entries must be positive for the
#'   logits to be finite (zeros give infinite logits).
#' @return `pi_SB()`: a matrix with \eqn{K} columns (a vector for vector
#'   input). `pi_SB_inv()`: a matrix with \eqn{K - 1} columns (a vector for
#'   vector input).
#' @examples
#' p <- pi_SB(c(0, 0.5, -1))
#' p
#' sum(p)
#' pi_SB_inv(p)
#' @export
pi_SB <- function(psi) {
  vec <- is.null(dim(psi))
  if (!is.numeric(psi) || length(psi) < 1L || anyNA(psi)) {
    stop("`psi` must be a numeric vector or matrix of stick logits without NA.", call. = FALSE)
  }
  P <- if (vec) matrix(psi, nrow = 1L) else as.matrix(psi)
  out <- lik_response_mean(stick_breaking(), P)
  if (vec) drop(out) else out
}

#' @rdname pi_SB
#' @export
pi_SB_inv <- function(prob) {
  vec <- is.null(dim(prob))
  if (!is.numeric(prob) || length(prob) < 2L || anyNA(prob) || any(prob < 0)) {
    stop("`prob` must be a numeric vector or matrix of probabilities (at least 2 categories).",
         call. = FALSE)
  }
  P <- if (vec) matrix(prob, nrow = 1L) else as.matrix(prob)
  if (ncol(P) < 2L) stop("`prob` needs at least 2 categories (columns).", call. = FALSE)
  if (any(abs(rowSums(P) - 1) > 1e-8)) stop("`prob` rows must sum to 1.", call. = FALSE)
  K <- ncol(P)
  # mass after category k, summed from the right for accuracy
  after <- matrix(0, nrow(P), K - 1L)
  acc <- P[, K]
  for (k in (K - 1L):1L) {
    after[, k] <- acc
    acc <- acc + P[, k]
  }
  out <- log(P[, -K, drop = FALSE]) - log(after)
  if (vec) drop(out) else out
}

log1pexp <- function(x) ifelse(x > 0, x + log1p(exp(-x)), log1p(exp(x)))

# ---- the response -----------------------------------------------------------

# A factor or count matrix -> list(Y = n x K counts in stick order, levels, keep).
#' @export
encode_response.augp_stick_breaking <- function(likelihood, y, weights = NULL) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (is.character(y) && is.null(dim(y))) y <- factor(y)
  if (is.logical(y) && is.null(dim(y))) y <- factor(y, levels = c(FALSE, TRUE))
  if (is.factor(y)) {
    if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
    y <- droplevels(y)
    lev <- levels(y)
    Y <- matrix(0, length(y), length(lev), dimnames = list(NULL, lev))
    Y[cbind(seq_along(y), as.integer(y))] <- 1
  } else if (is.matrix(y) && (is.numeric(y) || is.logical(y))) {
    storage.mode(y) <- "double"
    if (anyNA(y) || any(!is.finite(y))) {
      stop("`y` (the response) counts contain NA or Inf.", call. = FALSE)
    }
    if (any(y < 0)) stop("`y` (the response) counts must be non-negative.", call. = FALSE)
    if (any(abs(y - round(y)) > 1e-8)) {
      stop("`y` (the response) counts must be whole numbers.", call. = FALSE)
    }
    Y <- round(y)
    lev <- colnames(Y)
    if (is.null(lev) || any(!nzchar(lev)) || anyDuplicated(lev)) {
      lev <- paste0("cat", seq_len(ncol(Y)))
    }
    Y <- unname(Y)
    colnames(Y) <- lev
  } else {
    stop("`y` (the response) must be a count matrix (one column per category) or a factor ",
         "for stick_breaking().", call. = FALSE)
  }
  K <- ncol(Y)
  if (K < 2L) {
    stop(sprintf("`y` (the response) has a single category ('%s'): stick_breaking() needs at least 2.",
                 lev[1]), call. = FALSE)
  }
  perm <- sb_order(likelihood$order, lev)
  Y <- Y[, perm, drop = FALSE]
  lev <- lev[perm]
  w <- check_weights(weights, nrow(Y))
  Y <- Y * w
  tot <- rowSums(Y)
  keep <- w > 0 & tot > 0
  if (!any(keep)) {
    stop("`y` (the response) has no counts: every row has total zero.", call. = FALSE)
  }
  if (sum(colSums(Y[keep, , drop = FALSE]) > 0) < 2L) {
    stop("`y` (the response) has counts in a single category only: need at least 2 observed.",
         call. = FALSE)
  }
  list(Y = Y, levels = lev, keep = keep, trials = tot)
}

sb_order <- function(order, lev) {
  K <- length(lev)
  if (is.null(order)) return(seq_len(K))
  perm <- if (is.character(order)) match(order, lev) else as.integer(order)
  if (length(perm) != K || anyNA(perm) || any(perm < 1L | perm > K) || anyDuplicated(perm)) {
    stop(sprintf("`order` must be a permutation of the %d categories (%s).", K,
                 paste(lev, collapse = ", ")), call. = FALSE)
  }
  perm
}

#' @export
engine_lik_spec.augp_stick_breaking <- function(likelihood, resp) {
  Y <- resp$Y
  if (!is.null(resp$keep) && nrow(Y) == length(resp$keep) && !all(resp$keep)) {
    Y <- Y[resp$keep, , drop = FALSE]
  }
  list(type = "stick_breaking", q = ncol(Y) - 1L, Y = unname(Y))
}

#' @export
lik_prior_mean.augp_stick_breaking <- function(likelihood, resp) {
  K <- ncol(resp$Y)
  sb_prior_mean(K, likelihood$prior_mean)
}

sb_prior_mean <- function(K, prior_mean = NULL) {
  q <- K - 1L
  if (is.null(prior_mean)) return(digamma(1) - digamma(K - seq_len(q)))
  if (length(prior_mean) == 1L) return(rep(prior_mean, q))
  if (length(prior_mean) != q) {
    stop(sprintf("`prior_mean` must have length 1 or K - 1 = %d (one value per stick).", q),
         call. = FALSE)
  }
  as.numeric(prior_mean)
}

# pi_k = sigma(psi_k) prod_{j<k} sigma(-psi_j), pi_K = prod_{j<K} sigma(-psi_j).
#' @export
lik_response_mean.augp_stick_breaking <- function(likelihood, f) {
  f <- as.matrix(f)
  spec <- list(type = "stick_breaking", q = ncol(f), Y = matrix(0, 0, ncol(f) + 1L))
  .lik_response_mean_cpp(spec, f)
}

# One stick per category but the last.
#' @export
latent_names.augp_stick_breaking <- function(likelihood, levels, q) levels[seq_len(q)]

#' @export
lik_model_label.augp_stick_breaking <- function(likelihood) "multinomial model"

#' Expected category counts for a given number of trials
#'
#' The expected counts of each response column when `size` trials are made at
#' each input: `size` times the posterior predictive probabilities of
#' [predict.augp()] (`type = "response"`), with optional credible intervals.
#' For a fit with several categories (such as [stick_breaking()]) these are
#' the expected counts of each category; for a binomial or Bernoulli fit, the
#' expected number of successes.
#'
#' @inheritParams predict.augp
#' @param size Number of trials per row: a single whole number or one per row
#'   of `newdata` (of the training rows used in the fit when `newdata` is
#'   missing); the default for the training rows is their observed totals.
#' @param interval `"none"` or `"credible"`: pointwise credible intervals of the
#'   expected counts (from those of the probabilities).
#' @return A matrix of expected counts (one column per category, or one
#'   column of successes), or with an
#'   interval a list of matrices `fit`, `lwr`, `upr`.
#' @examples
#' set.seed(1)
#' x <- seq(0, 1, length.out = 25)
#' Y <- t(sapply(x, function(s) rmultinom(1, 8, c(s, 1 - s, 1) / 2)))
#' colnames(Y) <- c("a", "b", "c")
#' fit <- augp_fit(x, Y, likelihood = stick_breaking())
#' predict_counts(fit, matrix(c(0.1, 0.9)), size = 100)
#' @export
predict_counts <- function(object, newdata, size = NULL, interval = c("none", "credible"),
                           level = 0.95) {
  if (!inherits(object, "augp")) stop("`object` must be a fit from augp() or augp_fit().", call. = FALSE)
  interval <- match.arg(interval)
  nd <- if (missing(newdata)) NULL else newdata
  pr <- predict_parts(object, nd, "response", FALSE, interval != "none", level)
  n <- nrow(pr$fit)
  if (is.null(size)) {
    if (!is.null(nd)) stop("`size` is needed for `newdata` (the number of trials per row).",
                           call. = FALSE)
    size <- object$trials
  }
  if (!is.numeric(size) || !(length(size) %in% c(1L, n)) || anyNA(size) || any(!is.finite(size)) ||
      any(size < 0) || any(size != round(size))) {
    stop(sprintf("`size` must be whole numbers >= 0: a single number or one per row (%d).", n),
         call. = FALSE)
  }
  size <- rep_len(as.numeric(size), n)
  if (interval == "none") return(pr$fit * size)
  lapply(pr, function(M) M * size)
}

# A factor, or a count matrix whose columns are matched to the fit's categories by
# name (unnamed columns are cat1, cat2, ... as in the fit), in the stick order.
#' @export
encode_new_response.augp_stick_breaking <- function(likelihood, y, levels) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (!is.matrix(y)) {
    Y <- one_hot_levels(y, levels)
  } else {
    if (is.null(colnames(y))) colnames(y) <- paste0("cat", seq_len(ncol(y)))
    miss <- setdiff(levels, colnames(y))
    if (ncol(y) != length(levels) || length(miss) || !is.numeric(y) || anyNA(y) || any(y < 0)) {
      stop(sprintf("`newdata`: the response must be a count matrix with the fit's columns (%s).",
                   paste(levels, collapse = ", ")), call. = FALSE)
    }
    Y <- y[, levels, drop = FALSE]
  }
  list(Y = Y, levels = levels, keep = rep(TRUE, nrow(Y)), trials = rowSums(Y))
}
