# Convergence of a fit: what each fitting stage records, the warnings a fit gives when
# a stage stopped before converging, and the convergence lines of print() and summary().
#
# The engine fit records (R/engine.R, R/sparse.R, R/lik_params.R):
# * converged: the final coordinate-ascent (CAVI) updates met `tol` before `maxit`
#   sweeps (NA for SVI, which runs a fixed number of steps);
# * hyper_converged: the kernel hyperparameter search (hyper_optimise(), R/hyper.R)
#   stopped before `hyper_maxit` L-BFGS-B iterations (NA when nothing was searched);
# * param_converged: the likelihood-parameter rounds (engine_learn_lik_params())
#   stopped before their cap (`maxit` rounds); NULL for likelihoods without them;
# * svi_trend (SVI fits): the trend of the minibatch ELBO estimates over the last
#   epoch (svi_trend());
# * mcmc (Gibbs fits): convergence diagnostics of the draws (mcmc_diagnostics()).
#
# Gibbs diagnostics are computed on identified quantities, the response means (the
# probabilities) at the training points, not on the latent values: the latent
# functions of multi-class likelihoods are identified only up to shifts that change
# the probabilities little (logistic-softmax), and their traces drift while the
# probabilities are stationary.

#' Convergence checks of augmented GP fits
#'
#' [augp()] and [augp_fit()] check that every stage of a fit converged and give
#' one warning per stage that did not, saying which [augp_control()] setting
#' to change. The warnings have class `augp_convergence_warning` (and one of
#' the classes below), so they can be caught or muffled selectively, e.g.
#' `withCallingHandlers(fit, augp_convergence_warning = function(w) ...)`.
#'
#' * `augp_vi_warning`: the variational (coordinate-ascent) updates stopped at
#'   `maxit` sweeps before the relative ELBO change fell below `tol`. Raise
#'   `maxit`.
#' * `augp_hyper_warning`: the kernel hyperparameter search (L-BFGS-B) stopped
#'   at `hyper_maxit` iterations with the ELBO still rising by more than its
#'   tolerance. Raise `hyper_maxit`. With subset levels (large n) the last
#'   level searched counts; the `hyper_polish` iterations are a fixed budget.
#'   L-BFGS-B stops for other reasons (a line search that cannot improve the
#'   noisy objective) count as converged.
#' * `augp_lik_params_warning`: the likelihood's learned parameters (the class
#'   weights of `logistic_softmax(learn_theta = TRUE)`) were still moving after
#'   `maxit` rounds of alternating with the variational updates. Raise `maxit`.
#' * `augp_svi_warning`: stochastic variational inference (sparse fits with
#'   minibatches) runs a fixed number of steps and has no convergence test; it
#'   warns when the minibatch ELBO estimates were still clearly rising over the
#'   last epoch: a least-squares slope over the last epoch's steps (at least
#'   10) with a t statistic above 3 and a rise over the epoch above 0.1 percent of the
#'   ELBO. Raise `svi_epochs` (or `svi_iter`).
#' * `augp_mcmc_warning`: for Gibbs fits, the rank-normalised split R-hat of
#'   Vehtari et al. (2021) (`posterior::rhat()`) exceeds 1.05, or the bulk
#'   effective sample size (`posterior::ess_bulk()`) is below 100 per chain,
#'   for any of the diagnosed quantities. Raise `iter` (and `warmup`).
#'
#' The Gibbs diagnostics are computed on identified quantities: the fitted
#' probabilities (the response means of the likelihood) at up to 200
#' training points, evenly spaced, not on the latent values. The latent
#' functions of the logistic-softmax likelihood can drift together while the
#' probabilities stay put, so their traces say little about convergence.
#' The 1.05 threshold for R-hat is that of rstan's warnings: 1.01 per quantity
#' (Vehtari et al.) is a fine target, but the largest of up to 200 R-hats from
#' two chains of a few hundred draws often exceeds 1.01 by chance even when
#' the chains mix well; `summary()` prints the largest value, so a stricter
#' target can be checked there. With fewer than 20 kept draws per chain the
#' diagnostics themselves are unreliable: there is no warning, and `print()`
#' and `summary()` say that there are too few draws. For chains run as futures
#' (`parallel = "future"`) the checks run once, on the combined chains.
#'
#' `print()` reports the convergence state of a fit ("converged", or which
#' stage stopped early), and for Gibbs fits the largest R-hat and smallest
#' bulk ESS computed when fitting; `summary()` adds the smallest tail ESS
#' (`posterior::ess_tail()`).
#' @references Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and
#'   Buerkner, P.-C. (2021). Rank-normalization, folding, and localization: an
#'   improved R-hat for assessing convergence of MCMC. *Bayesian Analysis*,
#'   16(2), 667-718.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' # one L-BFGS-B iteration is not enough: a warning of class augp_hyper_warning
#' fit <- withCallingHandlers(
#'   augp_fit(x, y, control = augp_control(hyper_maxit = 1)),
#'   augp_convergence_warning = function(w) {
#'     message("caught: ", class(w)[1])
#'     invokeRestart("muffleWarning")
#'   })
#' fit
#' @name augp-convergence
NULL

# Gibbs warning thresholds: split R-hat above MCMC_RHAT_MAX (the rank-normalised
# split R-hat of posterior::rhat), or bulk effective sample size below
# MCMC_ESS_PER_CHAIN per chain (total below MCMC_ESS_PER_CHAIN x chains), for any of
# the diagnosed quantities (the thresholds of rstan's warnings). The warning looks at
# the largest of up to 200 R-hats: with two chains of a few hundred draws that maximum
# exceeds 1.01 by chance for chains that mix well, while chains that have not mixed
# give values well above 1.05. With fewer than MCMC_MIN_DRAWS kept draws per chain the
# diagnostics themselves are unreliable: no warning, and print() / summary() say so.
MCMC_RHAT_MAX <- 1.05
MCMC_ESS_PER_CHAIN <- 100
MCMC_MIN_DRAWS <- 20L

# SVI warning rule (svi_trend()): over the window of the last epoch of minibatch
# steps (at least SVI_TREND_MIN_STEPS steps), the least-squares slope of the ELBO
# estimates on the step number has a t statistic above SVI_TREND_T and the rise it
# implies over the window exceeds SVI_TREND_REL times |mean ELBO| of the window.
# Minibatch estimates are noisy, so only a clear and material rise counts.
SVI_TREND_MIN_STEPS <- 10L
SVI_TREND_T <- 3
SVI_TREND_REL <- 1e-3

# --- Gibbs diagnostics -------------------------------------------------------------

# The training points whose response means diagnose Gibbs draws [iterations, chains,
# n * q] (latent column j of point i at i + n (j - 1)) under the engine likelihood `lik`:
# list(points = at most about max_vars / R training indices, evenly spaced, responses =
# R, the responses per point).
mcmc_response_points <- function(draws, lik, max_vars = 200L) {
  q <- as.integer(lik$q)
  n <- dim(draws)[3] / q
  # The responses per point, from one evaluation at the first draw.
  R <- ncol(.lik_response_mean_cpp(lik, matrix(draws[1, 1, 1L + n * (seq_len(q) - 1L)], 1, q)))
  np <- max(1L, min(n, floor(max_vars / R)))
  list(points = unique(round(seq(1, n, length.out = np))), responses = R)
}

# Draws of the response means at those points (mcmc_response_points()), through the
# engine likelihood `lik` (.lik_response_mean_points_cpp, each draw with its own
# likelihood parameters when `lik` has param_draws): an array [iterations, chains,
# points x R] (R responses per point, point varying fastest), with attributes points
# (the training indices) and responses (R).
mcmc_response_draws <- function(draws, lik, max_vars = 200L) {
  sel <- mcmc_response_points(draws, lik, max_vars)
  storage.mode(draws) <- "double"
  P <- .lik_response_mean_points_cpp(lik, draws, as.integer(sel$points))
  structure(P, points = sel$points, responses = sel$responses)
}

# Convergence diagnostics of Gibbs draws, one row per diagnosed quantity: rhat (split
# R-hat), ess_bulk, ess_tail (posterior::rhat, ess_bulk, ess_tail; tail = FALSE skips
# the tail ESS). `x`: an augp fit or an engine fit with `draws` and `lik` (the response
# means at up to max_vars quantities, mcmc_response_draws()), or an array
# [iterations, chains, variables] of the quantities themselves (up to max_vars of
# them, evenly spaced). Attributes: iterations and chains, reliable (at least
# MCMC_MIN_DRAWS draws per chain; otherwise no values are computed and every entry
# is NA) and what (the quantities diagnosed). NULL without draws.
mcmc_diagnostics <- function(x, max_vars = 200L, tail = TRUE) {
  what <- "values"
  point <- NULL
  threads <- 1L
  if (is.array(x) && length(dim(x)) == 3L) {
    draws <- x
    nv <- dim(draws)[3]
    idx <- if (nv > max_vars) unique(round(seq(1, nv, length.out = max_vars))) else seq_len(nv)
    draws <- draws[, , idx, drop = FALSE]
    point <- idx
  } else {
    eng <- if (inherits(x, "augp")) x$engine else x
    if (is.null(eng$draws)) return(NULL)
    if (is.numeric(eng$control$threads)) threads <- as.integer(eng$control$threads)
    lik <- lik_with_draws(eng)
    sel <- mcmc_response_points(eng$draws, lik, max_vars)
    point <- rep(sel$points, sel$responses)
    what <- "response"
    # without the tail ESS, the response means stay inside C++
    # (.mcmc_response_rhat_ess_cpp): no array of them is made
    draws <- if (tail) mcmc_response_draws(eng$draws, lik, max_vars)
    d <- c(dim(eng$draws)[1:2], length(point))
  }
  if (!is.null(draws)) d <- dim(draws)
  reliable <- d[1] >= MCMC_MIN_DRAWS
  nq <- d[3]
  rhat <- ess_bulk <- ess_tail <- rep(NA_real_, nq)
  if (reliable) {
    # R-hat and bulk ESS as posterior::rhat() and posterior::ess_bulk() define them, all
    # quantities in one C++ pass; constant quantities (e.g. a probability at 0 or 1 to
    # double precision) have no defined R-hat or ESS: NA. An ESS estimate is capped at
    # S log10(S) for short chains, as posterior does. The quantities are spread over the
    # fit's threads (the same values for any number of threads).
    re <- if (is.null(draws)) {
      lat <- eng$draws
      storage.mode(lat) <- "double"
      .mcmc_response_rhat_ess_cpp(lik, lat, as.integer(sel$points), threads)
    } else {
      storage.mode(draws) <- "double"
      .mcmc_rhat_ess_cpp(draws, threads)
    }
    rhat <- re[, 1]
    ess_bulk <- re[, 2]
    if (tail) {
      for (k in which(!is.na(ess_bulk))) {
        suppressWarnings(ess_tail[k] <- posterior::ess_tail(matrix(draws[, , k], d[1], d[2])))
      }
    }
  }
  structure(data.frame(point = point, rhat = rhat, ess_bulk = ess_bulk, ess_tail = ess_tail),
            iterations = d[1], chains = d[2], reliable = reliable, what = what)
}

# The extremes of a diagnostics table (NA when none is defined).
mcmc_extremes <- function(dg) {
  ext <- function(v, f) if (any(is.finite(v))) f(v[is.finite(v)]) else NA_real_
  list(rhat = ext(dg$rhat, max), ess_bulk = ext(dg$ess_bulk, min), ess_tail = ext(dg$ess_tail, min))
}

# One line on the diagnostics `dg` for print() and summary(): the largest R-hat and
# the smallest ESS, saying what they were computed on; or why there are none.
mcmc_line <- function(dg, tail = TRUE) {
  if (is.null(dg)) return(NULL)
  if (!isTRUE(attr(dg, "reliable"))) {
    return(sprintf("Convergence: too few draws for diagnostics (%d per chain; need at least %d)",
                   attr(dg, "iterations"), MCMC_MIN_DRAWS))
  }
  e <- mcmc_extremes(dg)
  if (is.na(e$rhat) && is.na(e$ess_bulk)) {
    return("Convergence: no diagnostics (the diagnosed quantities are constant)")
  }
  on <- if (identical(attr(dg, "what"), "response")) {
    sprintf("fitted response means at %d training point(s)", length(unique(dg$point)))
  } else {
    sprintf("%d quantities", nrow(dg))
  }
  sprintf("Convergence (%s): max split R-hat %s, min bulk ESS %s%s",
          on, format(round(e$rhat, 3), nsmall = 3), format(round(e$ess_bulk)),
          if (tail && !is.na(e$ess_tail)) sprintf(", min tail ESS %s", format(round(e$ess_tail))) else "")
}

# --- SVI ---------------------------------------------------------------------------

# Trend of the minibatch ELBO estimates `elbo` over the last `window` steps (the last
# epoch; see the SVI_TREND_* rule above): list(rising, rise, t). rising is NA when
# there are fewer than SVI_TREND_MIN_STEPS estimates.
svi_trend <- function(elbo, window) {
  elbo <- elbo[is.finite(elbo)]
  k <- min(length(elbo), max(SVI_TREND_MIN_STEPS, round(window)))
  if (k < SVI_TREND_MIN_STEPS) return(list(rising = NA, rise = NA_real_, t = NA_real_))
  y <- utils::tail(elbo, k)
  s <- seq_len(k) - (k + 1) / 2
  slope <- sum(s * y) / sum(s^2)
  res <- y - mean(y) - slope * s
  se <- sqrt(sum(res^2) / (k - 2) / sum(s^2))
  t <- if (se > 0) slope / se else if (slope > 0) Inf else 0
  rise <- slope * (k - 1)
  list(rising = t > SVI_TREND_T && rise > SVI_TREND_REL * abs(mean(y)), rise = rise, t = t)
}

# --- Warnings -----------------------------------------------------------------------

# A warning of class augp_convergence_warning (and `class`), without the call.
convergence_warning <- function(msg, class) {
  w <- structure(class = c(class, "augp_convergence_warning", "warning", "condition"),
                 list(message = msg, call = NULL))
  warning(w)
}

# The convergence warnings of an engine fit `eng` (one per stage that stopped before
# converging, each saying which setting to change), and the fit with the Gibbs
# diagnostics recorded in eng$mcmc. Run once per fit, on the final engine fit (for
# several Gibbs chains run as futures: on the combined draws).
engine_check_convergence <- function(eng) {
  ctl <- eng$control
  svi <- is_svi_engine(eng)
  gibbs <- identical(eng$method, "gibbs")
  if (isFALSE(eng$hyper_converged)) {
    convergence_warning(sprintf(paste0(
      "The kernel hyperparameter search stopped at `hyper_maxit` = %d L-BFGS-B iterations ",
      "with the ELBO still rising: the hyperparameters may not maximise the ELBO. ",
      "Increase `hyper_maxit` in augp_control()."), ctl$hyper_maxit), "augp_hyper_warning")
  }
  if (isFALSE(eng$param_converged)) {
    convergence_warning(sprintf(paste0(
      "`likelihood`: the likelihood's parameters (%s) had not converged after %d rounds ",
      "(ELBO still rising); the last values are used. Increase `maxit` in augp_control() ",
      "(it caps the rounds), or fix the parameters."),
      if (is.null(eng$param_label)) "learned by the ELBO" else eng$param_label,
      as.integer(eng$param_rounds)), "augp_lik_params_warning")
  }
  if (!gibbs && !svi && isFALSE(eng$converged)) {
    convergence_warning(sprintf(paste0(
      "The variational (coordinate-ascent) updates stopped at `maxit` = %d sweeps before ",
      "the relative ELBO change fell below `tol` = %g: the fit may not have converged. ",
      "Increase `maxit` in augp_control()."), ctl$maxit, ctl$tol), "augp_vi_warning")
  }
  if (svi && isTRUE(eng$svi_trend$rising)) {
    convergence_warning(sprintf(paste0(
      "Stochastic variational inference may not have converged: the minibatch ELBO ",
      "estimates were still rising over the last epoch (by about %s). Increase ",
      "`svi_epochs` (or `svi_iter`) in augp_control()."),
      format(signif(eng$svi_trend$rise, 3))), "augp_svi_warning")
  }
  if (gibbs && !is.null(eng$draws)) {
    dg <- mcmc_diagnostics(eng, tail = FALSE)
    eng$mcmc <- dg
    chains <- attr(dg, "chains")
    if (isTRUE(attr(dg, "reliable"))) {
      mcmc_check_warning(dg, chains, paste0(
        "The Gibbs chains may not have converged or mixed enough (fitted response means at ",
        "the training points: %s). Run longer chains: increase `iter` (and `warmup`) in ",
        "augp_control()."))
    }
    hd <- hyper_diagnostics(eng)
    eng$mcmc_hyper <- hd
    if (!is.null(hd)) {
      mcmc_check_warning(hd, chains, paste0(
        "The sampled kernel hyperparameters may not have converged or mixed enough (%s). ",
        "Run longer chains: increase `iter` (and `warmup`) in augp_control(), or use ",
        "a more informative prior (augp_prior())."))
    }
  }
  eng
}

# The augp_mcmc_warning for a diagnostics table `dg` (columns rhat, ess_bulk) of a run
# with `chains` chains when its largest R-hat exceeds MCMC_RHAT_MAX or its smallest bulk
# ESS is below MCMC_ESS_PER_CHAIN per chain; `msg` has one %s for the reasons.
mcmc_check_warning <- function(dg, chains, msg) {
  e <- mcmc_extremes(dg)
  bad_rhat <- isTRUE(e$rhat > MCMC_RHAT_MAX)
  bad_ess <- isTRUE(e$ess_bulk < MCMC_ESS_PER_CHAIN * chains)
  if (!bad_rhat && !bad_ess) return(invisible())
  why <- c(if (bad_rhat) sprintf("max split R-hat %.3f > %.2f", e$rhat, MCMC_RHAT_MAX),
           if (bad_ess) sprintf("min bulk ESS %.0f < %d (%d per chain)", e$ess_bulk,
                                as.integer(MCMC_ESS_PER_CHAIN * chains),
                                as.integer(MCMC_ESS_PER_CHAIN)))
  convergence_warning(sprintf(msg, paste(why, collapse = "; ")), "augp_mcmc_warning")
}

# --- print() and summary() ----------------------------------------------------------

# Convergence label of a variational fit: "converged", or what stopped early. SVI
# runs a fixed number of steps (no convergence test): "SVI: E epochs, batch B",
# with ", ELBO still rising" when svi_trend() says so.
convergence_label <- function(engine) {
  if (is_svi_engine(engine)) {
    return(svi_label(engine, isTRUE(engine$svi_trend$rising)))
  }
  stops <- c(
    if (!isTRUE(engine$converged)) "updates stopped at `maxit`",
    if (isFALSE(engine$hyper_converged)) "hyperparameter search stopped at `hyper_maxit`",
    if (isFALSE(engine$param_converged)) "likelihood parameters stopped at their cap")
  if (!length(stops)) return("converged")
  paste0("NOT converged: ", paste(stops, collapse = "; "))
}

# "SVI: E epochs, batch B" of a minibatch fit, with "ELBO still rising" (rising) and the
# direct-ELBO epochs where they ran.
svi_label <- function(engine, rising = FALSE) {
  dr <- engine$svi_direct
  sprintf("SVI: %s, batch %d%s%s", epochs_label(engine$sparse$epochs), as.integer(engine$sparse$batch_size),
          if (rising) ", ELBO still rising" else "",
          if (is.null(dr)) "" else sprintf(", then %s on the direct ELBO", epochs_label(dr$epochs)))
}
epochs_label <- function(ep) sprintf("%s epoch%s", format(signif(ep, 3)), if (isTRUE(ep == 1)) "" else "s")

# The stopping state of a Gibbs fit's preliminary searches (hyperparameters, likelihood
# parameters), or NULL when they converged or did not run.
gibbs_search_label <- function(engine) {
  stops <- c(
    if (isFALSE(engine$hyper_converged)) "hyperparameter search stopped at `hyper_maxit`",
    if (isFALSE(engine$param_converged)) "likelihood parameters stopped at their cap")
  if (length(stops)) paste0("NOT converged: ", paste(stops, collapse = "; "))
}

# What the ELBO of a variational fit is called in print() and summary(): at a conjugate
# Gaussian fit's exact posterior the bound is tight, so it is the log marginal likelihood.
elbo_name <- function(exact_gaussian) {
  if (exact_gaussian) "Log marginal likelihood (exact)" else "ELBO"
}

# How print() and summary() name the bound of a refined fit (refine: the engine's
# record, list(rounds, direct, cap)): the rounds run, and whether the cap ended them.
refine_label <- function(refine) {
  rounds <- as.integer(refine$rounds)
  if (!is.null(refine$cap) && rounds >= refine$cap) {
    return(sprintf(paste0("Direct ELBO of q(f) after %d refinement rounds (the cap, still rising; ",
                          "augp_control(refine = ) allows more)"), rounds))
  }
  sprintf("Direct ELBO of q(f) refined in %d round(s)", rounds)
}

# The convergence lines of print.augp(): the ELBO and its label (variational fits) or
# the draws and the diagnostics recorded at fit time (Gibbs fits).
print_convergence <- function(x, digits) {
  eng <- x$engine
  if (x$method == "vi") {
    lab <- if (!is.null(eng$svi_direct)) {
      "Direct ELBO (full data)"
    } else if (!is.null(eng$elbo_direct)) {
      refine_label(eng$refine)
    } else {
      elbo_name(isTRUE(eng$exact_gaussian))
    }
    # a refined fit's status is that of the coordinate ascent before the refinement
    status <- convergence_label(eng)
    if (!is.null(eng$elbo_direct) && is.null(eng$svi_direct)) status <- paste("coordinate ascent", status)
    cat(sprintf("%s: %s (%s)\n", lab, format(final_elbo(x), digits = digits + 2), status))
    return(invisible())
  }
  d <- dim(eng$draws)
  cat(sprintf("Draws: %d per chain x %d chain(s)\n", d[1], d[2]))
  line <- mcmc_line(eng$mcmc, tail = FALSE)
  if (!is.null(line)) cat(line, "\n", sep = "")
  hyper_line(eng)
  st <- gibbs_search_label(eng)
  if (!is.null(st)) cat("Hyperparameters:", st, "\n")
  invisible()
}

# One line on the sampled hyperparameters of a full-Bayes Gibbs fit (nothing for others).
hyper_line <- function(eng) {
  if (is.null(eng$theta)) return(invisible())
  hd <- eng$mcmc_hyper
  e <- if (!is.null(hd)) mcmc_extremes(hd)
  cat(sprintf("Hyperparameters sampled (the values above are posterior medians): Metropolis acceptance %.2f%s\n",
              mean(eng$accept, na.rm = TRUE),
              if (is.null(e)) "" else sprintf("; max R-hat %.3f, min bulk ESS %.0f", e$rhat,
                                              e$ess_bulk)))
  invisible()
}

# The convergence parts of summary.augp(): elbo, iterations, converged (every stage),
# status (convergence_label()) and hyper_converged for variational fits;
# diagnostics (mcmc_diagnostics(), tail ESS included) and draws_dim for Gibbs fits.
summary_convergence <- function(object) {
  eng <- object$engine
  out <- list(hyper_converged = eng$hyper_converged, param_converged = eng$param_converged)
  if (object$method == "vi") {
    out$elbo <- final_elbo(object)
    out$iterations <- length(eng$elbo)
    out$refine_rounds <- eng$refine$rounds
    out$refine <- eng$refine
    out$svi_direct <- !is.null(eng$svi_direct)
    out$status <- convergence_label(eng)
    out$converged <- identical(out$status, "converged")
  } else {
    out$diagnostics <- mcmc_diagnostics(object)
    out$hyper_summary <- hyper_summary(object)
    out$draws_dim <- dim(eng$draws)
    out$status <- gibbs_search_label(eng)
  }
  out
}

# The convergence lines of print.summary.augp() (x: a summary.augp object).
print_summary_convergence <- function(x, digits) {
  if (x$method == "vi") {
    if (startsWith(x$status, "SVI")) {
      cat(sprintf("%s (full data): %s, %s\n", if (isTRUE(x$svi_direct)) "Direct ELBO" else "ELBO",
                  format(x$elbo, digits = digits + 2), x$status))
    } else {
      if (!is.null(x$refine_rounds)) {
        cat(sprintf("%s: %s (after %d coordinate-ascent iteration(s), %s)\n", refine_label(x$refine),
                    format(x$elbo, digits = digits + 2), x$iterations, x$status))
      } else {
        cat(sprintf("%s: %s after %d iteration(s), %s\n", elbo_name(isTRUE(x$exact_gaussian)),
                    format(x$elbo, digits = digits + 2), x$iterations, x$status))
      }
    }
    return(invisible())
  }
  cat(sprintf("Draws: %d per chain x %d chain(s)\n", x$draws_dim[1], x$draws_dim[2]))
  line <- mcmc_line(x$diagnostics)
  if (!is.null(line)) cat(line, "\n", sep = "")
  print_hyper_summary(x$hyper_summary, digits)
  if (!is.null(x$status)) cat("Hyperparameters:", x$status, "\n")
  invisible()
}
