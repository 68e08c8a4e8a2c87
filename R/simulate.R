#' Simulate responses from the posterior predictive distribution
#'
#' Draws new responses for the training inputs (or for `newdata`) from the
#' posterior predictive distribution of a fitted augmented GP model: for each
#' simulation, one draw of the latent function(s) is taken from the posterior
#' (a stored Gibbs draw, or a draw from the Gaussian approximation \eqn{q(f)}
#' of a variational fit), turned into category probabilities, and a response
#' is drawn from the likelihood.
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param nsim Number of simulated responses (a positive whole number).
#' @param seed `NULL`, or a whole number (within R's integer range) passed to
#'   [set.seed()] before simulating
#'   (the random number state is restored afterwards), as in
#'   [stats::simulate()].
#' @param newdata Optional new inputs (as in [predict.augp()]); missing or
#'   `NULL` means the training inputs (rows used in the fit).
#' @param size Number of trials per row: a single whole number or one per row.
#'   The default is the training rows' totals for the training inputs and 1
#'   for `newdata`.
#' @param ... Unused.
#' @details For a variational fit the latent values of different rows are
#'   drawn independently from their marginals, so each row's simulated
#'   response follows its pointwise posterior predictive distribution (the
#'   correlation between rows is not reproduced). Gibbs fits use joint
#'   posterior draws.
#' @return For likelihoods of counts over several categories (such as
#'   [stick_breaking()]): an array of counts with dimensions `c(rows, K, nsim)`,
#'   the categories (in the order of the fit) as column names. For Bernoulli and
#'   binomial likelihoods: a data frame
#'   with `nsim` columns `sim_1`, ... holding the number of successes out of
#'   `size` (a factor with the response levels when every row has one trial).
#'   The result has an attribute `"seed"` as in [stats::simulate()].
#' @examples
#' set.seed(1)
#' x <- seq(0, 1, length.out = 25)
#' Y <- t(sapply(x, function(s) rmultinom(1, 8, c(s, 1 - s, 1) / 2)))
#' colnames(Y) <- c("a", "b", "c")
#' fit <- augp_fit(x, Y, likelihood = stick_breaking())
#' sims <- simulate(fit, nsim = 2, seed = 3)
#' dim(sims)
#' @importFrom stats simulate
#' @export
simulate.augp <- function(object, nsim = 1, seed = NULL, newdata = NULL, size = NULL, ...) {
  if (!is.numeric(nsim) || length(nsim) != 1 || !is.finite(nsim) || nsim < 1 ||
      nsim != round(nsim)) {
    stop("`nsim` must be a single whole number >= 1.", call. = FALSE)
  }
  nsim <- as.integer(nsim)
  if (!is.null(seed)) {
    seed <- check_seed(seed)
    withr::local_preserve_seed()
    set.seed(seed)
  }
  rng_state <- if (is.null(seed)) {
    if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) stats::runif(1)
    get(".Random.seed", envir = globalenv(), inherits = FALSE)
  } else {
    seed
  }
  training <- is.null(newdata)
  ld <- latent_draws(object, newdata, nsim)
  n <- length(ld$ok)
  if (is.null(size)) {
    size <- if (training) simulation_trials(object$likelihood, object$trials) else rep(1, n)
  } else {
    if (!is.numeric(size) || !(length(size) %in% c(1L, n)) || anyNA(size) || any(size < 0) ||
        any(size != round(size)) || any(!is.finite(size))) {
      stop(sprintf("`size` must be whole numbers >= 0: a single number or one per row (%d).", n),
           call. = FALSE)
    }
    size <- rep_len(as.numeric(size), n)
  }
  counts <- .lik_simulate_cpp(lik_with_draws(object$engine, ld$ids), ld$F, size[ld$ok], new_seed())
  out <- present_simulation(object$likelihood, counts, size, ld$ok, object$levels, ld$rownames)
  attr(out, "seed") <- rng_state
  out
}

# Totals of the training rows used in the fit.
# S draws of the latent function(s) at the training inputs (newdata NULL) or at
# new inputs: list(F = S x (rows with complete inputs) x q array, ok, q, rownames).
# Gibbs fits: S posterior draws picked at random (with replacement when S exceeds
# the number stored); variational fits: independent draws from the marginals.
latent_draws <- function(object, newdata = NULL, S = 200) {
  eng <- object$engine
  q <- object$q
  if (is.null(newdata)) {
    X <- design_matrix(object$x)
    ok <- rep(TRUE, nrow(X))
    rn <- NULL
  } else {
    X <- new_design(object, newdata)
    ok <- attr(X, "ok")
    rn <- rownames(newdata)
  }
  m <- sum(ok)
  # ids: the stored draws used (Gibbs fits) or the draws' numbers (variational fits), for
  # their likelihood parameters
  ids <- if (object$method == "gibbs") rep(1L, S) else seq_len(S)
  if (m == 0) return(list(F = array(0, c(S, 0, q)), ok = ok, q = q, rownames = rn, ids = ids))
  if (object$method == "gibbs") {
    if (is.null(newdata)) {
      all <- latent_draw_array(eng$draws, nrow(X), q)
    } else {
      all <- latent_draw_array(engine_predict_new(object, X, ok, draws = TRUE)$draws, m, q)
    }
    pick <- if (S <= dim(all)[1]) sample.int(dim(all)[1], S) else
      sample.int(dim(all)[1], S, replace = TRUE)
    F <- all[pick, , , drop = FALSE]
    ids <- pick
  } else {
    F <- vi_marginal_draws(vi_marginals(object, if (!is.null(newdata)) X, ok), S, q)
  }
  list(F = F, ok = ok, q = q, rownames = rn, ids = ids)
}
