#' Multi-class likelihood with the logistic-softmax link
#'
#' A categorical observation model for a factor response with `K` classes:
#' \deqn{P(y = k \mid f) = \frac{\theta_k \sigma(f_k)}{\sum_j \theta_j \sigma(f_j)},}{
#' P(y = k | f) = theta_k sigma(f_k) / sum_j theta_j sigma(f_j),}
#' with one latent Gaussian process \eqn{f_k} per class and \eqn{\sigma} the
#' logistic function. Conditionally on negative-multinomial counts and
#' Polya-Gamma variables the model is Gaussian in every latent column, so both
#' the Gibbs sampler and coordinate-ascent variational inference (CAVI) have
#' closed-form steps. The kernel hyperparameters are shared by all classes by
#' default; `augp_control(shared_hyper = FALSE)` learns one set per class.
#'
#' With `bijective = TRUE` the last class's latent is fixed at 0, leaving
#' `K - 1` latent processes (a one-to-one map between latents and class
#' probabilities). With `bijective = FALSE` (the default) every class has its own
#' process. Because \eqn{\sigma} is bounded, one large latent alone cannot push
#' its class probability to 1 (the other classes keep weight \eqn{\theta_j
#' \sigma(f_j)}); predictions are softer than with the usual softmax link unless
#' the other latents are strongly negative.
#'
#' [augp()] chooses this likelihood by itself for a factor (or character)
#' response with more than two observed levels. A level without observations is
#' dropped with a warning; a response with a single class is an error. Frequency
#' `weights` count repeated observations at the same input.
#'
#' The prior mean of every latent process is 0: the prior is then symmetric in
#' the classes (with equal weights `theta`, every class has the same prior
#' predictive probability in the non-bijective model), and nothing in the data
#' summary is needed to set it.
#'
#' @param bijective Logical: fix the last class's latent at 0 (`K - 1` latent
#'   processes) instead of using `K` processes.
#' @param theta Class weights: `NULL` (all 1) or a numeric vector of positive
#'   values, one per observed class in the order of the factor levels (levels
#'   without observations are dropped before matching).
#' @return An object of class `c("augp_logistic_softmax", "augp_likelihood")`.
#' @seealso [augp()], [likelihoods]
#' @examples
#' logistic_softmax()
#' logistic_softmax(bijective = TRUE, theta = c(1, 2, 1))
#' @export
logistic_softmax <- function(bijective = FALSE, theta = NULL) {
  if (!is.logical(bijective) || length(bijective) != 1L || is.na(bijective)) {
    stop("`bijective` must be TRUE or FALSE.", call. = FALSE)
  }
  if (!is.null(theta)) {
    if (is.character(theta)) {
      stop("`theta` must be NULL or a numeric vector of positive class weights ",
           "(learning the weights is not yet supported).", call. = FALSE)
    }
    if (!is.numeric(theta) || length(theta) < 2L || anyNA(theta) ||
        any(!is.finite(theta)) || any(theta <= 0)) {
      stop("`theta` must be NULL or a numeric vector of at least 2 positive, finite ",
           "class weights.", call. = FALSE)
    }
    theta <- as.double(theta)
  }
  new_likelihood("logistic_softmax", family = "logistic_softmax", link = "logistic-softmax",
                 bijective = bijective, theta = theta)
}

# Resolve the class weights for the observed levels.
softmax_theta <- function(likelihood, levels) {
  K <- length(levels)
  th <- likelihood$theta
  if (is.null(th)) return(stats::setNames(rep(1, K), levels))
  if (length(th) != K) {
    stop(sprintf("`theta` has %d weights but the response has %d classes.", length(th), K),
         call. = FALSE)
  }
  stats::setNames(th, levels)
}

#' @export
encode_response.augp_logistic_softmax <- function(likelihood, y, weights = NULL) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`y` (the response) must be a factor or character vector for logistic_softmax().",
         call. = FALSE)
  }
  if (is.character(y) || is.logical(y)) y <- factor(y)
  if (!is.factor(y)) {
    stop(sprintf(paste0("`y` (the response) must be a factor or character vector for ",
                        "logistic_softmax(), not %s."), class(y)[1]), call. = FALSE)
  }
  if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
  w <- check_weights(weights, length(y))
  counts <- tapply(w, y, sum)
  counts[is.na(counts)] <- 0
  empty <- levels(y)[counts == 0]
  if (length(empty)) {
    warning(sprintf("`y` (the response): level(s) %s have no observations and are dropped.",
                    paste0("'", empty, "'", collapse = ", ")), call. = FALSE)
  }
  lev <- levels(y)[counts > 0]
  if (length(lev) < 2L) {
    stop(sprintf("`y` (the response) has only one class (%s): need at least two.",
                 if (length(lev)) paste0("'", lev, "'") else "none with positive weight"),
         call. = FALSE)
  }
  yi <- match(as.character(y), lev)
  Y <- matrix(0, length(y), length(lev), dimnames = list(NULL, lev))
  ok <- !is.na(yi)
  Y[cbind(which(ok), yi[ok])] <- w[ok]
  list(Y = Y, levels = lev, keep = ok & w > 0, theta = softmax_theta(likelihood, lev))
}

#' @export
engine_lik_spec.augp_logistic_softmax <- function(likelihood, resp) {
  K <- ncol(resp$Y)
  list(type = "logistic_softmax", q = lik_n_latent(likelihood, K), Y = unname(resp$Y),
       bijective = isTRUE(likelihood$bijective),
       theta = unname(as.double(if (is.null(resp$theta)) rep(1, K) else resp$theta)))
}

#' @export
lik_prior_mean.augp_logistic_softmax <- function(likelihood, resp) 0

#' @export
lik_n_latent.augp_logistic_softmax <- function(likelihood, K) {
  if (isTRUE(likelihood$bijective)) K - 1L else K
}

#' @export
lik_prob.augp_logistic_softmax <- function(likelihood, F) {
  F <- as.matrix(F)
  if (isTRUE(likelihood$bijective)) F <- cbind(F, 0)
  K <- ncol(F)
  th <- likelihood$theta
  if (is.null(th)) th <- rep(1, K)
  if (length(th) != K) {
    stop(sprintf("`theta` has %d weights but the latent draws imply %d classes.",
                 length(th), K), call. = FALSE)
  }
  P <- stats::plogis(F) * rep(as.double(th), each = nrow(F))
  P / rowSums(P)
}

#' @export
print.augp_logistic_softmax <- function(x, ...) {
  cat(sprintf("<augp_likelihood> logistic_softmax (%s; class weights theta: %s)\n",
              if (isTRUE(x$bijective)) "bijective: K - 1 latent functions, last class fixed at 0"
              else "K latent functions",
              if (is.null(x$theta)) "all 1" else paste(format(x$theta), collapse = ", ")))
  invisible(x)
}
