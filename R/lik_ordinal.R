# Ordinal likelihood with the continuation-ratio logit link (src/lik_ordinal.cpp): an
# ordered response in K >= 3 categories, one latent function f and K - 1 cut points.
# Class c("augp_ordinal", "augp_categorical", "augp_likelihood"): the response has K
# category probabilities, so predict(), fitted(), residuals(), simulate() and the plots
# are the categorical ones (R/lik_categorical.R). This file holds what differs: the
# constructor, the response encoding (the category index `y` for the engine and the
# one-hot counts `Y` for the presentation), the engine specification, the prior mean 0,
# the response mean, the single latent, offsets and the cut points.

#' Ordinal likelihood with the continuation-ratio logit link
#'
#' An observation model for an ordered response with \eqn{K \ge 3} categories
#' (an ordered factor such as a rating), with a single latent Gaussian process
#' \eqn{f} and \eqn{K - 1} cut points \eqn{c_1, \dots, c_{K-1}}. The
#' categories are passed in order, and at each one the observation stops
#' there with probability \eqn{\sigma(c_k - f)} or goes on to the next:
#' \deqn{P(y = k \mid y \ge k, f) = \sigma(c_k - f),}{P(y = k | y >= k, f) =
#' sigma(c_k - f),} so
#' \eqn{P(y = k \mid f) = \sigma(c_k - f) \prod_{j<k} \sigma(f - c_j)} for
#' \eqn{k < K} and \eqn{P(y = K \mid f) = \prod_{j<K} \sigma(f - c_j)}. This
#' is the continuation-ratio (sequential, or stopping-ratio) logit model, the
#' `sratio` family of brms with the logit link; a larger \eqn{f} moves the mass
#' towards the higher categories. Each factor is a Bernoulli term in
#' \eqn{c_j - f}, made conditionally Gaussian by one Polya-Gamma variable, so
#' the Gibbs sampler and coordinate-ascent variational inference (CAVI) have
#' closed-form steps, as for [bernoulli_logit()].
#'
#' The prior mean of \eqn{f} is 0: the cut points carry the location. With
#' `cutpoints = NULL` they are learned by the ELBO, alternating with CAVI as for
#' the other likelihood parameters: given \eqn{q(f)}, each cut point is a
#' separate one-dimensional concave problem, solved by a closed-form (EM)
#' update that never lowers the ELBO; since the likelihood depends on \eqn{f}
#' and the cut points only through \eqn{c_j - f}, each round also moves them
#' and the mean of \eqn{q(f)} together by the exact ELBO-maximising shift (only
#' the prior of \eqn{f} depends on it). They start at the empirical
#' continuation-ratio logits \eqn{\mathrm{logit}(n_k / n_{\ge k})}, and the
#' kernel hyperparameters are learned first at the starting values. Gibbs fits
#' (`method = "gibbs"`) learn the cut points by the variational fit and then
#' hold them fixed in the sampler or, with `augp_control(sample_hyper = TRUE)`,
#' sample them given \eqn{f}, each under a Student-t(3, 0, 2.5) prior (brms's
#' default for ordinal intercepts; see [priors]). Sparse (`inducing`)
#' fits learn the cut points too (see `inducing` in [augp_fit()]). The fitted cut points are printed by `print()`
#' and `summary()`, and are in `fit$cutpoints` and [tidy()][augp-tidiers].
#'
#' The response mean is the vector of the \eqn{K} category probabilities, so
#' [predict()][predict.augp] (`type = "response"`) and [fitted()][augp-methods]
#' return \eqn{n \times K}{n x K} matrices, `type = "class"` the most probable
#' category, `type = "link"` the latent \eqn{f}, and `simulate()` counts per
#' category, as for [logistic_softmax()]. An `offset` shifts \eqn{f}. The
#' expected category index is `predict(fit, type = "response") %*% seq_len(K)`.
#' Prediction intervals (`interval = "prediction"`) are Monte Carlo quantiles of
#' one new response's category indicators.
#'
#' @section The response: An ordered factor with more than two levels selects
#'   this likelihood automatically. With `likelihood = ordinal()`, an unordered
#'   factor or a character vector is accepted too, with a message: its levels
#'   (sorted, for a character vector) are taken as the category order. Every
#'   level must be observed (a level without observations has a cut point the
#'   data cannot identify): use [droplevels()] to remove empty levels.
#'   Frequency `weights` count repeated observations.
#'
#' @param cutpoints `NULL` (learn the cut points by the ELBO) or a numeric
#'   vector of \eqn{K - 1} finite cut points (fixed), one per category but the
#'   last, in the order of the levels.
#' @return An object of class `c("augp_ordinal", "augp_categorical",
#'   "augp_likelihood")`.
#' @references Tutz, G. (1990). Sequential item response models with an ordered
#'   response. British Journal of Mathematical and Statistical Psychology 43,
#'   39-55.
#' @seealso [augp()], [likelihoods], [logistic_softmax()] for unordered categories
#' @examples
#' ordinal()
#' ordinal(cutpoints = c(-1, 0, 1))
#' set.seed(1)
#' x <- seq(-2, 2, length.out = 60)
#' f <- sin(1.5 * x)
#' cut <- c(-0.5, 0, 0.5)
#' y <- vapply(f, function(fi) {
#'   k <- 1
#'   while (k < 4 && runif(1) > plogis(cut[k] - fi)) k <- k + 1
#'   k
#' }, numeric(1))
#' d <- data.frame(x = x, rating = factor(y, levels = 1:4, ordered = TRUE))
#' fit <- augp(rating ~ x, data = d)
#' fit$cutpoints
#' head(predict(fit, type = "response"))
#' @export
ordinal <- function(cutpoints = NULL) {
  if (!is.null(cutpoints)) {
    if (!is.numeric(cutpoints) || !is.null(dim(cutpoints)) || length(cutpoints) < 2L ||
        anyNA(cutpoints) || any(!is.finite(cutpoints))) {
      stop(paste0("`cutpoints` must be NULL (learned) or a numeric vector of at least 2 ",
                  "finite cut points (K - 1 for K categories)."), call. = FALSE)
    }
    cutpoints <- as.double(cutpoints)
  }
  new_likelihood("ordinal", family = c("ordinal", "categorical"),
                 link = "continuation-ratio logit", cutpoints = cutpoints,
                 learn_cutpoints = is.null(cutpoints))
}

#' @export
print.augp_ordinal <- function(x, ...) {
  cut <- if (is.null(x$cutpoints)) "learned by the ELBO" else
    sprintf("%s%s", paste(format(x$cutpoints, digits = 4, trim = TRUE), collapse = ", "),
            if (isTRUE(x$learn_cutpoints)) ", learned by the ELBO" else ", fixed")
  cat(sprintf("<augp_likelihood> ordinal (link: %s; cut points: %s)\n", x$link, cut))
  invisible(x)
}

# An ordered factor (or, with a message, a factor or character vector) -> the category
# index `y` (the engine's response), one-hot counts `Y` times the weights (the
# categorical presentation), `trials` (the weights) and `levels`.
#' @export
encode_response.augp_ordinal <- function(likelihood, y, weights = NULL) {
  if (is.matrix(y) || is.data.frame(y)) {
    stop("`y` (the response) must be an ordered factor for ordinal(), not a matrix.", call. = FALSE)
  }
  if (is.character(y)) {
    y <- factor(y)
    message(sprintf("`y` (the response): a character vector; ordinal() takes its sorted values as the category order (%s).",
                    paste(levels(y), collapse = " < ")))
  } else if (is.factor(y) && !is.ordered(y)) {
    message(sprintf("`y` (the response) is an unordered factor; ordinal() takes its level order as the category order (%s).",
                    paste(levels(y), collapse = " < ")))
  }
  if (!is.factor(y)) {
    stop(sprintf(paste0("`y` (the response) must be an ordered factor for ordinal(), not %s; ",
                        "e.g. factor(y, ordered = TRUE)."), class(y)[1]), call. = FALSE)
  }
  if (anyNA(y)) stop("`y` (the response) contains NA.", call. = FALSE)
  lev <- levels(y)
  K <- length(lev)
  if (K < 3L) {
    stop(sprintf(paste0("`y` (the response) has %d level(s): ordinal() needs at least 3 ",
                        "ordered categories; use bernoulli_logit() for two."), K), call. = FALSE)
  }
  w <- check_weights(weights, length(y))
  counts <- tapply(w, y, sum)
  counts[is.na(counts)] <- 0
  empty <- lev[counts == 0]
  if (length(empty)) {
    stop(sprintf(paste0("`y` (the response): level(s) %s have no observations; their cut ",
                        "points are not identified. Drop them with droplevels() (or merge ",
                        "categories)."), paste0("'", empty, "'", collapse = ", ")), call. = FALSE)
  }
  if (!is.null(likelihood$cutpoints) && length(likelihood$cutpoints) != K - 1L) {
    stop(sprintf("`cutpoints` has %d value(s) but the response has %d categories: need K - 1 = %d.",
                 length(likelihood$cutpoints), K, K - 1L), call. = FALSE)
  }
  idx <- as.integer(y)
  Y <- matrix(0, length(y), K, dimnames = list(NULL, lev))
  Y[cbind(seq_along(idx), idx)] <- w
  list(y = as.double(idx), Y = Y, levels = lev, keep = w > 0, trials = w)
}

# The starting cut points: the given ones, or the empirical continuation-ratio logits
# logit(n_k / n_{>=k}) of the (weighted) category counts (the optimum at f = 0).
ordinal_cut_start <- function(likelihood, resp) {
  if (!is.null(likelihood$cutpoints)) return(unname(as.double(likelihood$cutpoints)))
  n <- colSums(resp$Y)
  K <- length(n)
  atleast <- rev(cumsum(rev(n)))
  stats::qlogis(pmin(pmax(n[-K] / atleast[-K], 1e-6), 1 - 1e-6))
}

#' @export
engine_lik_spec.augp_ordinal <- function(likelihood, resp) {
  keep <- if (!is.null(resp$keep) && length(resp$keep) == length(resp$y)) resp$keep else
    rep(TRUE, length(resp$y))
  list(type = "ordinal", q = 1L, y = as.double(resp$y[keep]), trials = as.double(resp$trials[keep]),
       cutpoints = unname(ordinal_cut_start(likelihood, resp)),
       learn_cutpoints = isTRUE(likelihood$learn_cutpoints))
}

#' @export
lik_prior_mean.augp_ordinal <- function(likelihood, resp) 0

# The K category probabilities at f, from the likelihood's cut points.
#' @export
lik_response_mean.augp_ordinal <- function(likelihood, f) {
  cut <- likelihood$cutpoints
  if (is.null(cut)) {
    stop("`likelihood`: the cut points are not known yet (ordinal() before a fit); give `cutpoints`.",
         call. = FALSE)
  }
  spec <- list(type = "ordinal", q = 1L, y = numeric(0), trials = numeric(0),
               cutpoints = unname(as.double(cut)))
  .lik_response_mean_cpp(spec, as.matrix(f))
}

# The cut points as fitted, named "k|k+1" by the categories they separate.
#' @export
lik_fitted.augp_ordinal <- function(likelihood, spec, levels) {
  K <- length(levels)
  likelihood$cutpoints <- stats::setNames(as.double(spec$cutpoints),
                                          paste(levels[-K], levels[-1L], sep = "|"))
  likelihood
}

#' @export
lik_accepts_offset.augp_ordinal <- function(likelihood) TRUE

#' @export
lik_model_label.augp_ordinal <- function(likelihood) "ordinal regression (continuation ratio)"

#' @export
lik_learns_params.augp_ordinal <- function(likelihood) isTRUE(likelihood$learn_cutpoints)

# f and the cut points enter only through c_j - f (R/lik_params.R shifts them together).
#' @export
lik_location_params.augp_ordinal <- function(likelihood) "cutpoints"

#' @export
lik_param_values.augp_ordinal <- function(likelihood) list(cutpoints = likelihood$cutpoints)

#' @export
lik_params_label.augp_ordinal <- function(likelihood) "the cut points (`cutpoints = NULL`)"

#' @export
print_lik_params.augp_ordinal <- function(likelihood, digits, rounds = NULL) {
  cut <- likelihood$cutpoints
  if (is.null(cut)) return(invisible())
  learned <- isTRUE(likelihood$learn_cutpoints)
  cat(sprintf("Cut points (%s):\n",
              if (!learned) "fixed" else if ("cutpoints" %in% likelihood$sampled)
                "sampled, posterior medians"
              else if (is.null(rounds)) "learned by the ELBO"
              else sprintf("learned by the ELBO in %d round(s)", rounds)))
  print(cut, digits = digits)
  invisible()
}

# A factor or character response with the fit's levels (one trial per row).
#' @export
encode_new_response.augp_ordinal <- function(likelihood, y, levels) {
  Y <- one_hot_levels(y, levels)
  list(y = as.double(max.col(Y, ties.method = "first")), Y = Y, levels = levels,
       keep = rep(TRUE, nrow(Y)), trials = rowSums(Y))
}

# Full Bayes: every cut point under a Student-t(3, 0, 2.5) prior when learned.
#' @export
lik_param_priors.augp_ordinal <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_cutpoints)) return(list())
  list(cutpoints = list(prior = new_prior_dist("student_t", 3, 2.5), n = length(resp$levels) - 1L,
                        positive = FALSE))
}
