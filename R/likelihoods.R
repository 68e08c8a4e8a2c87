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
#' `binomial_logit()`, a factor with more than two levels gives
#' `logistic_softmax()` and a count matrix with more than two columns
#' `stick_breaking()`.
#'
#' @return An object of class `augp_likelihood`.
#' @examples
#' bernoulli_logit()
#' binomial_logit()
#' @name likelihoods
NULL

#' @rdname likelihoods
#' @export
bernoulli_logit <- function() new_likelihood("bernoulli_logit", family = "bernoulli")

#' @rdname likelihoods
#' @export
binomial_logit <- function() new_likelihood("binomial_logit", family = "binomial")

new_likelihood <- function(name, family, link = "logit", ...) {
  structure(list(name = name, family = family, link = link, ...),
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
  bernoulli_logit()
}

check_likelihood <- function(likelihood, y) {
  if (is.null(likelihood)) return(guess_likelihood(y))
  if (is.function(likelihood)) likelihood <- likelihood()
  if (!inherits(likelihood, "augp_likelihood")) {
    stop(paste0("`likelihood` must be NULL or made by bernoulli_logit(), binomial_logit(), ",
                "logistic_softmax() or stick_breaking()."), call. = FALSE)
  }
  likelihood
}

#' Encode a response for a likelihood
#'
#' Internal generic: returns `list(y = successes, trials, levels, keep)`,
#' where `keep` marks rows that carry information (weight > 0, trials > 0).
#' @noRd
encode_response <- function(likelihood, y, weights = NULL) {
  UseMethod("encode_response")
}

# Hooks for likelihoods with several latent functions (q > 1). Each such
# likelihood class implements encode_response() returning list(Y = n x K
# counts, levels, keep) plus the four generics below; the binary likelihoods
# use the binomial engine directly and need none of them.

#' The engine's likelihood list (type, q, data) for an encoded response
#' @noRd
engine_lik_spec <- function(likelihood, resp) UseMethod("engine_lik_spec")

#' The prior mean of the latent functions: scalar, length q or n x q
#' @noRd
lik_prior_mean <- function(likelihood, resp) UseMethod("lik_prior_mean")

#' Category probabilities (K columns) from latent values (q columns, any rows)
#' @noRd
lik_prob <- function(likelihood, F) UseMethod("lik_prob")

#' Number of latent functions for K categories
#' @noRd
lik_n_latent <- function(likelihood, K) UseMethod("lik_n_latent")

#' @export
engine_lik_spec.default <- function(likelihood, resp) {
  list(type = "binomial", q = 1L, y = as.double(resp$y), trials = as.double(resp$trials))
}

#' @export
lik_n_latent.default <- function(likelihood, K) 1L

#' @export
lik_prior_mean.default <- function(likelihood, resp) {
  rate <- sum(resp$y) / sum(resp$trials)
  stats::qlogis(min(max(rate, 0.02), 0.98))
}

#' @export
lik_prob.default <- function(likelihood, F) {
  p <- stats::plogis(as.numeric(F))
  cbind(1 - p, p)
}

# Does this likelihood have a count-matrix response and several latent functions?
lik_is_multi <- function(likelihood) {
  !inherits(likelihood, c("augp_bernoulli", "augp_binomial"))
}

#' @export
encode_response.default <- function(likelihood, y, weights = NULL) {
  stop(sprintf("The likelihood `%s` is not yet supported by augp().", likelihood$name),
       call. = FALSE)
}

#' @export
encode_response.augp_bernoulli <- function(likelihood, y, weights = NULL) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`y` (the response) must be a vector for bernoulli_logit(); use ",
         "binomial_logit() for cbind(successes, failures).", call. = FALSE)
  }
  if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
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
    if (any(!is.finite(y)) || any(!(y %in% c(0, 1)))) {
      stop("`y` (the response) must be 0/1, logical or a two-level factor for ",
           "bernoulli_logit().", call. = FALSE)
    }
    lev <- c("0", "1")
    s <- as.numeric(y)
  } else {
    stop(sprintf("`y` (the response) has an unsupported type: %s.", class(y)[1]),
         call. = FALSE)
  }
  if (length(unique(s)) < 2L) {
    stop(sprintf("`y` (the response) has only one class ('%s'): need at least two classes.",
                 if (is.factor(y)) as.character(y[1]) else as.character(s[1])),
         call. = FALSE)
  }
  trials <- rep(1, length(s))
  w <- check_weights(weights, length(s))
  list(y = s * w, trials = trials * w, levels = lev, keep = w > 0)
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
