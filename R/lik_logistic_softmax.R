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
#' The prior mean: every latent process has the same constant prior mean, so
#' the prior is symmetric in the classes (with equal weights `theta`, every class
#' has the same prior predictive probability in the non-bijective model). Its
#' default in the non-bijective model is -6, where \eqn{\sigma(f) \approx
#' e^{f}}{sigma(f) ~ exp(f)} and the link is close to the usual softmax: a class
#' then becomes probable by its own latent rising above the common level, which a
#' kernel of moderate variance can do. At a prior mean of 0 the bounded
#' \eqn{\sigma} saturates, a confident prediction needs every other class's
#' latent far below 0, and the ELBO-optimal kernel is one of very large variance
#' and long lengthscale (a nearly linear fit). The common level of the latents is
#' otherwise nearly unidentified in that region (the softmax is invariant to a
#' common shift), so the prior mean places it. Much lower values slow the
#' coordinate ascent (the augmentation's counts grow like \eqn{e^{-f}}) and,
#' below about -10, can leave the kernel search at a constant fit. The bijective
#' model keeps its free latents at prior mean 0 by default, level with its fixed
#' latent.
#'
#' @param bijective Logical: fix the last class's latent at 0 (`K - 1` latent
#'   processes) instead of using `K` processes.
#' @param theta Class weights: `NULL` (all 1) or a numeric vector of positive
#'   values, one per observed class in the order of the factor levels (levels
#'   without observations are dropped before matching). With `learn_theta =
#'   TRUE` these are the starting values.
#' @param learn_theta Logical: learn the class weights by maximising the ELBO
#'   (variational fits; see Details).
#' @param prior_mean `NULL` for the default constant prior mean of the latent
#'   processes (-6 in the non-bijective model, 0 in the bijective one; see
#'   Description), or a finite number used for every latent process.
#' @details
#' Learning the class weights: with `learn_theta = TRUE`, [augp()] first
#' fits the model at the starting weights (learning the kernel hyperparameters
#' if asked), then alternates two blocks until the ELBO gains less than
#' `tol` (relative) or 100 rounds have run: (1) with \eqn{q(f)} fixed and the
#' counts' factor at its CAVI optimum, maximise the ELBO over \eqn{\log\theta}
#' (the objective is \eqn{\sum_k Y_{\cdot k} \log\theta_k - \sum_i N_i
#' \log \sum_k \theta_k a_{ik}}, concave in \eqn{\log\theta}, with
#' \eqn{a_{ik} = 1 - e^{-m_{ik}/2} / (2\cosh(c_{ik}/2))},
#' \eqn{c_{ik}^2 = m_{ik}^2 + v_{ik}}, and \eqn{a_{iK} = \sigma(0) = 1/2} for
#' the fixed class of the bijective version); (2) CAVI sweeps at the new weights,
#' warm-started. Neither block lowers the ELBO. The kernel hyperparameters stay
#' at the values learned in the first fit. The likelihood depends only on the
#' ratios of the weights, so they are reported with geometric mean 1. The
#' learned weights are stored in the fit's likelihood (`fit$likelihood$theta`,
#' which predictions use). With `method = "gibbs"` the weights are learned by the variational fit first and then held fixed in the
#' sampler (which starts from the prior, with the variational kernel), or, with
#' `augp_control(sample_hyper = TRUE)` and `bijective = TRUE`, sampled with the
#' latent values under independent log-normal(0, 1) priors (see [priors]): only
#' their ratios enter the likelihood, so the prior sets their common scale, and
#' predictions use each draw's weights. Sparse (`inducing`) fits learn \eqn{\theta} too (see `inducing` in [augp_fit()]).
#'
#' Gibbs sampling (`method = "gibbs"`): every sweep updates the latent values by
#' elliptical slice sampling (Murray, Adams and MacKay, 2010) on the
#' un-augmented posterior, 20 rounds per sweep, each round one update of every
#' latent function given the others and, with a shared kernel, one update of the
#' common part \eqn{g = \frac{1}{q}\sum_j f_j}{g = mean_j f_j} given the
#' centred latents (its prior is the kernel divided by the number of latent
#' functions). The non-bijective model's sampler starts from a variational fit
#' (at the learned kernel, or at the given one with `learn_hyper = FALSE`) and,
#' when the kernel is shared, runs 10 such rounds per sweep instead, each adding generalised elliptical slice updates
#' (Nishihara, Murray and Adams, 2014) of the contrasts between the classes'
#' latents: their ellipses are drawn from a fixed Gaussian reference, built once
#' from the variational fit refined on the direct ELBO (as `augp_control(refine
#' = "auto")` refines a variational fit; the coordinate-ascent fit is too narrow
#' and off-centre at this model's low prior mean), with the likelihood's
#' curvature averaged over the refined fit's marginals, and the ratio of the
#' prior to the reference (at the current kernel) enters as a likelihood term.
#' These updates move well where the data dominate the prior (many points), the
#' prior-ellipse updates where the likelihood is flat or one-sided (small class
#' probabilities). Each of its sweeps then starts with one Hamiltonian Monte Carlo
#' trajectory (20 leapfrog steps) on the un-augmented posterior, with the same
#' reference as its metric and the step size adapted during warm-up only: it
#' moves the contrasts along the directions the data inform most, which the
#' slice updates cross slowly. Every update leaves the posterior exactly invariant. Without the
#' bijective constraint the likelihood is nearly flat along a common shift of a
#' point's latents when they are all low (it tends to the usual softmax), and
#' the posterior puts much mass there; the augmentation's counts are then of
#' the order of \eqn{1 / \sum_k \theta_k \sigma(f_k)}{1 / sum_k theta_k
#' sigma(f_k)}, millions per sweep, so the augmented Gibbs step could neither
#' reach that region nor leave it. The non-bijective model is therefore sampled
#' by the slice updates alone; the bijective one, whose counts stay bounded,
#' alternates the augmented step with them. Convergence diagnostics are
#' computed on the class probabilities ([augp-convergence]).
#' @references Murray, I., Adams, R. P. and MacKay, D. J. C. (2010). Elliptical
#'   slice sampling. *Proceedings of AISTATS*, 9, 541-548.
#'
#'   Nishihara, R., Murray, I. and Adams, R. P. (2014). Parallel MCMC with
#'   generalized elliptical slice sampling. *Journal of Machine Learning
#'   Research*, 15, 2087-2112.
#' @return An object of class `c("augp_logistic_softmax", "augp_likelihood")`.
#' @seealso [augp()], [likelihoods]
#' @examples
#' logistic_softmax()
#' logistic_softmax(bijective = TRUE, theta = c(1, 2, 1))
#' logistic_softmax(learn_theta = TRUE)
#' logistic_softmax(prior_mean = -4)
#' @export
logistic_softmax <- function(bijective = FALSE, theta = NULL, learn_theta = FALSE,
                             prior_mean = NULL) {
  if (!is.logical(bijective) || length(bijective) != 1L || is.na(bijective)) {
    stop("`bijective` must be TRUE or FALSE.", call. = FALSE)
  }
  if (!is.logical(learn_theta) || length(learn_theta) != 1L || is.na(learn_theta)) {
    stop("`learn_theta` must be TRUE or FALSE.", call. = FALSE)
  }
  if (!is.null(theta)) {
    if (is.character(theta)) {
      stop("`theta` must be NULL or a numeric vector of positive class weights ",
           "(use `learn_theta = TRUE` to learn them).", call. = FALSE)
    }
    if (!is.numeric(theta) || length(theta) < 2L || anyNA(theta) ||
        any(!is.finite(theta)) || any(theta <= 0)) {
      stop("`theta` must be NULL or a numeric vector of at least 2 positive, finite ",
           "class weights.", call. = FALSE)
    }
    theta <- as.double(theta)
  }
  if (!is.null(prior_mean) &&
      (!is.numeric(prior_mean) || length(prior_mean) != 1L || !is.finite(prior_mean))) {
    stop("`prior_mean` must be NULL or a single finite number.", call. = FALSE)
  }
  new_likelihood("logistic_softmax", family = c("logistic_softmax", "categorical"), link = "logistic-softmax",
                 bijective = bijective, theta = theta, learn_theta = learn_theta,
                 prior_mean = if (is.null(prior_mean)) NULL else as.double(prior_mean))
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
  list(Y = Y, levels = lev, keep = ok & w > 0, trials = rowSums(Y),
       theta = softmax_theta(likelihood, lev))
}

#' @export
engine_lik_spec.augp_logistic_softmax <- function(likelihood, resp) {
  K <- ncol(resp$Y)
  # (Y keeps its class names: unname() would copy the n x K matrix the fit also holds)
  spec <- list(type = "logistic_softmax", q = softmax_n_latent(likelihood, K), Y = resp$Y,
               bijective = isTRUE(likelihood$bijective),
               theta = unname(as.double(if (is.null(resp$theta)) rep(1, K) else resp$theta)),
               slice_steps = softmax_slice_steps(likelihood),
               ref_steps = softmax_ref_steps(likelihood))
  # Not user settings (bench/multiclass/mixing.R sets them to compare): the scale of the
  # Gibbs contrast moves' reference covariances, their joint update, the draws over which
  # their curvatures are averaged, their joint reference, the common shift where the
  # curvatures are taken, the Newton steps moving their mean to the conditional mode,
  # their means conditional on the other contrasts and the degrees of freedom of their t
  # reference (0: Gaussian; see src/lik_logistic_softmax.cpp).
  if (!is.null(likelihood$ref_scale)) spec$ref_scale <- as.double(likelihood$ref_scale)
  if (!is.null(likelihood$ref_joint)) spec$ref_joint <- isTRUE(likelihood$ref_joint)
  if (!is.null(likelihood$ref_full)) spec$ref_full <- isTRUE(as.logical(likelihood$ref_full))
  if (!is.null(likelihood$ref_shift)) spec$ref_shift <- as.double(likelihood$ref_shift)
  if (!is.null(likelihood$ref_newton)) spec$ref_newton <- as.double(likelihood$ref_newton)
  spec$ref_cond <- softmax_ref_cond(likelihood)
  spec$ref_df <- softmax_ref_df(likelihood)
  spec$ref_avg <- softmax_ref_avg(likelihood)
  spec$hmc_steps <- softmax_hmc_steps(likelihood)
  spec$hmc_moves <- softmax_hmc_moves(likelihood)
  spec$hmc_rank <- softmax_hmc_rank(likelihood)
  # The non-bijective model's Gibbs moves (the contrast moves and the gradient move) take
  # the variational fit as their reference: engine_gibbs() refines that fit first
  # (engine_reference_q()).
  spec$gibbs_reference <- !spec$bijective && (spec$ref_steps > 0 || spec$hmc_steps > 0)
  spec
}

# Rounds of elliptical slice updates per Gibbs sweep (gibbs_move() in
# src/lik_logistic_softmax.cpp); 0 leaves the augmented step alone. Not a user
# setting: bench/multiclass/mixing.R sets `likelihood$slice_steps` to compare.
softmax_slice_steps <- function(likelihood) {
  s <- likelihood$slice_steps
  if (is.null(s)) SOFTMAX_SLICE_STEPS else as.double(s)
}
SOFTMAX_SLICE_STEPS <- 20

# Rounds per Gibbs sweep of the moves that use the variational fit as a reference (a
# column, a contrast and a common-part update per round; see gibbs_move() in
# src/lik_logistic_softmax.cpp), when the sampler starts from a variational fit; 0 makes
# no reference. Not a user setting: bench/multiclass/mixing.R sets
# `likelihood$ref_steps` to compare.
softmax_ref_steps <- function(likelihood) {
  s <- likelihood$ref_steps
  if (is.null(s)) SOFTMAX_REF_STEPS else as.double(s)
}
SOFTMAX_REF_STEPS <- 10

# Degrees of freedom of the contrast moves' multivariate-t reference (0: Gaussian).
softmax_ref_df <- function(likelihood) {
  s <- likelihood$ref_df
  if (is.null(s)) SOFTMAX_REF_DF else as.double(s)
}
SOFTMAX_REF_DF <- 0

# Fixed draws from the reference approximation's marginals over which the contrast
# moves' curvatures are averaged (0: the curvature at its mean; see gibbs_reference() in
# src/lik_logistic_softmax.cpp). The refined approximation's marginal variances are
# large where the data say little, and the likelihood's curvature at its mean
# underestimates the curvature the sampler meets over that spread.
softmax_ref_avg <- function(likelihood) {
  s <- likelihood$ref_avg
  if (is.null(s)) SOFTMAX_REF_AVG else as.double(s)
}
SOFTMAX_REF_AVG <- 32

# Whether the contrast moves' per-contrast reference means follow the other contrasts
# (their conditional given them; see contrast_moves() in src/lik_logistic_softmax.cpp).
softmax_ref_cond <- function(likelihood) {
  s <- likelihood$ref_cond
  if (is.null(s)) SOFTMAX_REF_COND else isTRUE(as.logical(s))
}
SOFTMAX_REF_COND <- TRUE

# Leapfrog steps per trajectory of the Gibbs sampler's gradient move (HMC on p(f | y)
# with the contrast moves' reference as its metric; src/gradient_move.h), 0 for none,
# and its trajectories per sweep. Non-bijective model only. Not user settings:
# bench/multiclass/mixing.R sets `likelihood$hmc_steps` / `likelihood$hmc_moves` to compare.
softmax_hmc_steps <- function(likelihood) {
  s <- likelihood$hmc_steps
  if (is.null(s)) SOFTMAX_HMC_STEPS else as.double(s)
}
SOFTMAX_HMC_STEPS <- 40
softmax_hmc_moves <- function(likelihood) {
  s <- likelihood$hmc_moves
  if (is.null(s)) SOFTMAX_HMC_MOVES else as.double(s)
}
SOFTMAX_HMC_MOVES <- 1

# Leading kernel eigenvectors per latent column along which the gradient move adapts its
# metric to the warm-up draws (GradientMove::set_adaptation() in src/gradient_move.h); 0:
# the reference's metric throughout. Not a user setting: bench/multiclass/mixing.R sets
# `likelihood$hmc_rank` to compare.
softmax_hmc_rank <- function(likelihood) {
  s <- likelihood$hmc_rank
  if (is.null(s)) SOFTMAX_HMC_RANK else as.double(s)
}
SOFTMAX_HMC_RANK <- 10

softmax_n_latent <- function(likelihood, K) if (isTRUE(likelihood$bijective)) K - 1L else K

# The class weights as fitted (fixed or learned), named by the classes.
#' @export
lik_fitted.augp_logistic_softmax <- function(likelihood, spec, levels) {
  likelihood$theta <- stats::setNames(as.double(spec$theta), levels)
  likelihood
}

#' @export
lik_prior_mean.augp_logistic_softmax <- function(likelihood, resp) {
  if (!is.null(likelihood$prior_mean)) return(likelihood$prior_mean)
  if (isTRUE(likelihood$bijective)) 0 else SOFTMAX_PRIOR_MEAN
}

# The default prior mean of the non-bijective model's latents (see ?logistic_softmax).
SOFTMAX_PRIOR_MEAN <- -6

# The augmented logistic-softmax bound (a Gamma, K Poisson and K Polya-Gamma variables
# per observation in mean field) loosens by hundreds of nats as the kernel gets more
# flexible, so its optimum is far too smooth with many classes: kernels are ranked by
# the direct ELBO.
#' @export
lik_hyper_objective.augp_logistic_softmax <- function(likelihood) "direct"

# P(y = k | f) = theta_k sigma(f_k) / sum_j theta_j sigma(f_j), with f_K = 0 in the
# bijective version; the weights are the likelihood's (all 1 when NULL).
#' @export
lik_response_mean.augp_logistic_softmax <- function(likelihood, f) {
  f <- as.matrix(f)
  K <- ncol(f) + isTRUE(likelihood$bijective)
  th <- likelihood$theta
  if (is.null(th)) th <- rep(1, K)
  if (length(th) != K) {
    stop(sprintf("`theta` has %d weights but the latent draws imply %d classes.",
                 length(th), K), call. = FALSE)
  }
  spec <- list(type = "logistic_softmax", q = ncol(f), Y = matrix(0, 0, K),
               bijective = isTRUE(likelihood$bijective), theta = unname(as.double(th)))
  .lik_response_mean_cpp(spec, f)
}

# Each latent column belongs to a class; the bijective version has none for the last.
#' @export
latent_names.augp_logistic_softmax <- function(likelihood, levels, q) levels[seq_len(q)]

#' @export
lik_model_label.augp_logistic_softmax <- function(likelihood) "multi-class classifier"

#' @export
print.augp_logistic_softmax <- function(x, ...) {
  cat(sprintf("<augp_likelihood> logistic_softmax (%s; class weights theta: %s%s)\n",
              if (isTRUE(x$bijective)) "bijective: K - 1 latent functions, last class fixed at 0"
              else "K latent functions",
              if (is.null(x$theta)) "all 1" else paste(format(x$theta, digits = 4), collapse = ", "),
              if (isTRUE(x$learn_theta)) ", learned by the ELBO" else ""))
  invisible(x)
}

# The class weights are the likelihood's learned parameters (R/lik_params.R): the
# step that maximises the ELBO over them with q(f) fixed is learn_params() of the C++
# likelihood (src/lik_logistic_softmax.cpp).

#' @export
lik_learns_params.augp_logistic_softmax <- function(likelihood) isTRUE(likelihood$learn_theta)

#' @export
lik_param_values.augp_logistic_softmax <- function(likelihood) list(theta = likelihood$theta)

# Full Bayes: the K class weights under log-normal(0, 1) priors, when learned, in the
# bijective model. In the default model the sweep's augmented counts (needed by the
# kernel moves) grow without bound when the weights of the other classes drift towards
# 0, so there the learned weights stay fixed.
#' @export
lik_param_priors.augp_logistic_softmax <- function(likelihood, resp) {
  if (!isTRUE(likelihood$learn_theta) || !isTRUE(likelihood$bijective)) return(list())
  list(theta = list(prior = new_prior_dist("lognormal", 0, 1), n = length(resp$levels), positive = TRUE))
}

#' @export
lik_params_label.augp_logistic_softmax <- function(likelihood) {
  "the class weights, `learn_theta = TRUE`"
}

#' @export
print_lik_params.augp_logistic_softmax <- function(likelihood, digits, rounds = NULL) {
  theta <- likelihood$theta
  if (is.null(theta)) return(invisible())
  learned <- isTRUE(likelihood$learn_theta)
  cat(sprintf("Class weights theta (%s):\n",
              if (!learned) "fixed" else if ("theta" %in% likelihood$sampled)
                "sampled, posterior medians"
              else if (is.null(rounds)) "learned by the ELBO, geometric mean 1"
              else sprintf("learned by the ELBO in %d round(s), geometric mean 1", rounds)))
  print(theta, digits = digits)
  invisible()
}

# A factor response with the fit's classes; the class weights are the fitted ones.
#' @export
encode_new_response.augp_logistic_softmax <- function(likelihood, y, levels) {
  Y <- one_hot_levels(y, levels)
  list(Y = Y, levels = levels, keep = rep(TRUE, nrow(Y)), trials = rowSums(Y),
       theta = softmax_theta(likelihood, levels))
}
