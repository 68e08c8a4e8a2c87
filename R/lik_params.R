# Likelihood parameters learned by the ELBO (the logistic-softmax class weights, and
# the dispersions and noise scales of likelihoods to come). The C++ likelihood owns
# the maths: params() names the parameters by their spec fields and learn_params()
# maximises the local ELBO over them with q(f) fixed (.lik_learn_params_cpp). Here:
# the generics the front end asks, and the alternation of that step with CAVI.

#' Does the likelihood learn parameters by the ELBO? (internal generic)
#' @noRd
lik_learns_params <- function(likelihood) UseMethod("lik_learns_params")

#' @export
lik_learns_params.augp_likelihood <- function(likelihood) FALSE

#' What the learned parameters are, for messages (internal generic)
#' @noRd
lik_params_label <- function(likelihood) UseMethod("lik_params_label")

#' @export
lik_params_label.augp_likelihood <- function(likelihood) "its parameters"

#' The likelihood's parameters by name, as fitted (internal generic): a named list,
#' empty when the likelihood has none
#' @noRd
lik_param_values <- function(likelihood) UseMethod("lik_param_values")

#' @export
lik_param_values.augp_likelihood <- function(likelihood) list()

#' Learned parameters that move with the latent level (internal generic)
#'
#' The names of the engine-specification fields `p` for which the likelihood (one
#' latent column) depends on f and p only through f - p, such as the cut points of
#' ordinal(): adding a constant to f and to each of them changes nothing in the
#' likelihood, only the prior term. NULL (the default): none.
#' @noRd
lik_location_params <- function(likelihood) UseMethod("lik_location_params")

#' @export
lik_location_params.augp_likelihood <- function(likelihood) NULL

#' Print the likelihood's parameters in print() and summary() (internal generic)
#' @noRd
print_lik_params <- function(likelihood, digits, rounds = NULL) UseMethod("print_lik_params")

#' @export
print_lik_params.augp_likelihood <- function(likelihood, digits, rounds = NULL) invisible()

#' The likelihood parameters a full-Bayes Gibbs fit samples, with their default priors
#'
#' A named list by parameter name (as Likelihood::params() names it in C++), each
#' list(prior = an augp_prior_dist, n = number of elements, positive = whether the
#' parameter is positive (sampled on the log scale)). Only the parameters the fit learns
#' (not fixed by the user); default: none. `resp`: the encoded response.
#' @noRd
lik_param_priors <- function(likelihood, resp) UseMethod("lik_param_priors")

#' @export
lik_param_priors.augp_likelihood <- function(likelihood, resp) list()

#' How many times to search the kernel hyperparameters around the parameter rounds
#' (internal generic)
#'
#' 1 (the default): the kernel is learned once, at the starting parameters. A
#' likelihood whose starting value can be far off (so that the kernel learned there is
#' poor) asks for more: the search is run again at the learned parameters, which are
#' then learned again, as long as the final ELBO rises.
#' @noRd
lik_hyper_passes <- function(likelihood) UseMethod("lik_hyper_passes")

#' @export
lik_hyper_passes.augp_likelihood <- function(likelihood) 1L

#' Other starting values of the learned likelihood parameters (internal generic)
#'
#' A list of engine likelihood specs, each `spec` with other starting values of the
#' parameters the fit learns (none by default). The kernel and the parameters are
#' learned by alternating searches, which can stop at a local optimum that depends on
#' the start: an exact variational fit runs again from each of these starts and keeps
#' the one with the highest final ELBO.
#' @noRd
lik_restarts <- function(likelihood, spec) UseMethod("lik_restarts")

#' @export
lik_restarts.augp_likelihood <- function(likelihood, spec) list()

# The values of element `index` of the likelihood parameter `name` (a spec field, in
# the units of the fit's likelihood object) over the fit's posterior: its draws in a
# full-Bayes Gibbs fit that sampled it (iterations then chains), the values at the
# points of a fit averaged over its hyperparameters (equally weighted, as its
# predictions are) when the points move it, or else the one fitted value.
fit_param_values <- function(object, name, index = 1L) {
  eng <- object$engine
  ld <- eng$lik_draws
  if (!is.null(ld)) {
    k <- which(eng$lik_prior$name == name & eng$lik_prior$index == index)
    if (length(k) == 1L) return(as.numeric(ld[, , k]))
  }
  mx <- eng$mixture
  if (!is.null(mx) && length(mx$lik_names)) {
    k <- which(mx$lik_names == name & mx$lik_index == index)
    if (length(k) == 1L) return(as.numeric(mx$lik_values[, k]))
  }
  as.numeric(object$likelihood[[name]][index])
}

# Alternate the likelihood's parameter step and warm-started CAVI sweeps on a
# converged variational engine fit `eng` (R/engine.R engine_vi). X: the engine's
# (standardised) inputs; spec: the engine likelihood list; mean0: the prior mean. Each
# round: the parameters maximising the ELBO at the current q(f) (a gain >= 0; none ends
# the loop), then CAVI from the new parameters' optimal q(aux); the loop stops when a
# round gains less than tol (relative) or after max_rounds (the control's `maxit`, so
# that a fit stopped at the cap can be given more rounds). Neither step lowers the
# ELBO. Returns the engine fit with the final q(f), the engine likelihood at the
# learned parameters, the ELBO trace extended by one value after each parameter step
# and the CAVI sweeps after it, and param_rounds / param_converged (FALSE: stopped at
# the cap with the ELBO still rising; R/diagnostics.R warns).
# `location` (lik_location_params()): spec fields that shift with the latent level. The
# likelihood is then flat along a common shift of f and those parameters, and only the
# prior pins it, so alternating the two blocks would creep along that ridge; each round
# therefore also takes the exact step along it: the mean of q(f) and the fields move by
# the a that minimises (d + a 1)' K^-1 (d + a 1), d = m - mean0, i.e.
# a = -1' K^-1 d / 1' K^-1 1, which lowers KL(q(f) || p(f)) by (1' K^-1 d)^2 / (2 1' K^-1 1)
# and leaves the local ELBO unchanged (one latent column only).
engine_learn_lik_params <- function(eng, X, spec, mean0, max_rounds = eng$control$maxit,
                                    location = NULL) {
  # (alternation converges linearly; every PARAM_EXTRAPOLATE_EVERY rounds a jump to the
  # extrapolated limit is tried, see param_extrapolate(), and kept if it raises the ELBO)
  ctl <- eng$control
  q <- spec$q
  n <- nrow(X)
  m0 <- engine_mean0_matrix(mean0, n, q)
  m <- matrix(eng$mean, n, q)
  v <- matrix(eng$var, n, q)
  trace <- eng$elbo
  e_cur <- trace[length(trace)]
  converged <- FALSE
  res <- NULL
  rounds <- 0L
  shift <- length(location) > 0L && q == 1L && !is_kernel_list(eng$kernel)
  if (shift) {
    U <- chol(kernel_matrix(eng$kernel, X) + diag(eng$jitter, n))
    Kinv1 <- backsolve(U, backsolve(U, rep(1, n), transpose = TRUE))
    s11 <- sum(Kinv1)
  }
  hist <- list()
  cavi_at <- function(sp, m, v) {
    ev <- .gp_lik_eval_cpp(sp, m, v, m)
    engine_cavi_kernel(eng$kernel, X, eng$jitter, sp, m0, ev$kappa, ev$omega,
                       as.integer(ctl$maxit), ctl$tol, ctl$threads)
  }
  for (r in seq_len(max_rounds)) {
    rounds <- r
    if (length(hist) == PARAM_EXTRAPOLATE_EVERY) {
      j <- param_jump(hist, spec, e_cur, function(sp) cavi_at(sp, m, v))
      hist <- list()
      if (!is.null(j)) {
        spec <- j$lik
        res <- j$res
        trace <- c(trace, res$elbo[res$elbo > e_cur])
        e_cur <- j$elbo
        m <- as.matrix(res$m)
        v <- as.matrix(res$v)
      }
    }
    step <- .lik_learn_params_cpp(spec, m, v)
    gain <- max(step$gain, 0)
    if (gain > 0) {
      for (nm in names(step$params)) spec[[nm]] <- as.numeric(step$params[[nm]])
      hist <- c(hist, list(step$params))
    }
    if (shift) {
      a <- -sum(Kinv1 * (m - m0)) / s11
      if (is.finite(a) && a != 0) {
        m <- m + a
        for (nm in location) spec[[nm]] <- spec[[nm]] + a
        gain <- gain + 0.5 * a^2 * s11
      }
    }
    if (!(gain > 0)) {
      converged <- TRUE
      break
    }
    e_step <- e_cur + gain
    # the new parameters' optimal q(aux) at the current q(f): the CAVI warm start
    res <- cavi_at(spec, m, v)
    trace <- c(trace, e_step, res$elbo)
    e_new <- res$elbo[length(res$elbo)]
    m <- as.matrix(res$m)
    v <- as.matrix(res$v)
    gain <- e_new - e_cur
    e_cur <- e_new
    if (gain <= ctl$tol * abs(e_cur)) {
      converged <- TRUE
      break
    }
  }
  if (!is.null(res)) {
    eng <- engine_take_q(eng, res, res$omega_q, q)
    eng$converged <- isTRUE(res$converged)
  }
  eng$elbo <- trace
  eng$lik <- spec
  eng$param_rounds <- rounds
  eng$param_converged <- converged
  eng
}

# The limit of a linearly converging sequence of parameter values: `hist`, the
# parameters (named lists of numeric vectors, as .lik_learn_params_cpp() returns them)
# of the last PARAM_EXTRAPOLATE_EVERY alternation rounds. The alternation of the
# parameter step and CAVI converges linearly, slowly when the parameters and f are
# strongly coupled (the maximal rate of the Poisson-logistic likelihood trades off
# against the level of f), so the steps d_k shrink by a common ratio
# rho = <d_k, d_(k-1)> / |d_(k-1)|^2 and their sum beyond the last value is
# d_k rho / (1 - rho) (Aitken's extrapolation with one rate for all parameters). Values
# that stayed positive are extrapolated on the log scale (they stay positive); the
# factor rho / (1 - rho) is capped at PARAM_EXTRAPOLATE_MAX. Returns the extrapolated
# parameters, or an empty list when the steps do not shrink steadily in one direction.
PARAM_EXTRAPOLATE_EVERY <- 3L
PARAM_EXTRAPOLATE_MAX <- 200
param_extrapolate <- function(hist) {
  k <- length(hist)
  if (k < 3L) return(list())
  nms <- names(hist[[k]])
  pos <- vapply(nms, function(nm) all(vapply(hist, function(h) all(h[[nm]] > 0), TRUE)), TRUE)
  tr <- function(h, nm) if (pos[[nm]]) log(as.numeric(h[[nm]])) else as.numeric(h[[nm]])
  flat <- function(h) unlist(lapply(nms, function(nm) tr(h, nm)))
  p1 <- flat(hist[[k - 2L]])
  p2 <- flat(hist[[k - 1L]])
  p3 <- flat(hist[[k]])
  d0 <- p2 - p1
  d1 <- p3 - p2
  if (!all(is.finite(c(d0, d1))) || sum(d0^2) == 0) return(list())
  rho <- sum(d1 * d0) / sum(d0^2)
  if (!(rho > 0 && rho < 1)) return(list())
  pj <- p3 + d1 * min(rho / (1 - rho), PARAM_EXTRAPOLATE_MAX)
  out <- list()
  at <- 0L
  for (nm in nms) {
    len <- length(hist[[k]][[nm]])
    v <- pj[at + seq_len(len)]
    out[[nm]] <- if (pos[[nm]]) exp(v) else v
    at <- at + len
  }
  out
}

# One extrapolated jump of the likelihood parameters (param_extrapolate() of `hist`):
# `lik` (an engine likelihood list) with the jumped values, and cavi(lik), a function
# that runs CAVI at them from the current q. list(lik, res = cavi's result, elbo), or
# NULL when there is no jump, CAVI fails or its final ELBO is not above e_cur.
param_jump <- function(hist, lik, e_cur, cavi) {
  jump <- param_extrapolate(hist)
  if (!length(jump)) return(NULL)
  for (nm in names(jump)) lik[[nm]] <- jump[[nm]]
  res <- tryCatch(cavi(lik), error = function(e) NULL)
  if (is.null(res) || !length(res$elbo)) return(NULL)
  e <- res$elbo[length(res$elbo)]
  if (!(is.finite(e) && e > e_cur)) return(NULL)
  list(lik = lik, res = res, elbo = e)
}

# A fit whose likelihood learns parameters (augp_fit): a variational fit at the
# starting parameters (kernel hyperparameters learned there if asked), then
# engine_learn_lik_params(); for method = "gibbs" the sampler then runs with the
# learned parameters and kernel, fixed.
# Progress and convergence: one reporter for the whole fit (the variational fit, the
# parameter rounds and the sampler report to it) and the convergence warnings once, on
# the final fit (engine_check_convergence()).
engine_fit_lik_params <- function(X, spec, likelihood, kernel, method, control, seed, mean0,
                                  prior = NULL) {
  own <- progress_begin(control$verbose, progress_header(method, X))
  if (own) on.exit(progress_close(), add = TRUE)
  # the starts of the parameters (lik_restarts(); with the kernel learned only: a fixed
  # kernel leaves one optimum in the parameters), each a share of the progress
  starts <- c(list(spec), if (isTRUE(control$learn_hyper)) lik_restarts(likelihood, spec))
  span <- if (method == "vi") 1 else 0.3
  best <- NULL
  start_elbo <- numeric(length(starts))
  for (i in seq_along(starts)) {
    sec <- progress_section((i - 1) * span / length(starts), i * span / length(starts))
    vi <- fit_lik_params_from(X, starts[[i]], likelihood, kernel, control, seed, mean0)
    progress_restore(sec)
    start_elbo[i] <- last_elbo(vi)
    if (is.null(best) || start_elbo[i] > last_elbo(best)) best <- vi
  }
  best$param_label <- lik_params_label(likelihood)
  # the final ELBO reached from each start (the first: the likelihood's own start)
  best$param_start_elbo <- start_elbo
  engine_finish_at(best, method, X, control, seed, mean0, prior, own)
}

# The last value of an engine fit's ELBO trace.
last_elbo <- function(fit) fit$elbo[length(fit$elbo)]

# One variational fit of engine_fit_lik_params() from the parameters in `spec`: the
# kernel learned at them (if asked), then engine_learn_lik_params(), then the further
# passes (lik_hyper_passes()): the kernel searched again from its starting value at the
# learned parameters, then the parameters again; a pass is kept only if the ELBO rises.
fit_lik_params_from <- function(X, spec, likelihood, kernel, control, seed, mean0) {
  sec <- progress_section(0, 0.9)
  vi <- run_engine(X, spec, kernel, "vi", control, seed, mean0, check = FALSE)
  progress_restore(sec)
  sec <- progress_section(0.9, 1, "likelihood parameters", announce = TRUE)
  vi <- engine_learn_lik_params(vi, X, spec, mean0, location = lik_location_params(likelihood))
  for (pass in seq_len(lik_hyper_passes(likelihood) - 1L)) {
    if (!isTRUE(control$learn_hyper)) break
    nxt <- run_engine(X, vi$lik, kernel, "vi", control, seed, mean0, check = FALSE)
    nxt <- engine_learn_lik_params(nxt, X, vi$lik, mean0, location = lik_location_params(likelihood))
    e_old <- last_elbo(vi)
    if (!(last_elbo(nxt) > e_old + control$tol * abs(e_old))) break
    vi <- nxt
  }
  progress_restore(sec)
  vi
}

# The end of a fit that learned its parameters variationally: the variational engine fit
# `vi` itself (method "vi") or the Gibbs sampler started there (engine_gibbs_at()), its
# convergence checked; `own`: this fit opened the progress display and closes it.
engine_finish_at <- function(vi, method, X, control, seed, mean0, prior, own) {
  if (method == "vi") {
    if (own) progress_finish()
    return(engine_check_convergence(vi))
  }
  g <- engine_gibbs_at(vi, X, control, seed, mean0, prior)
  if (own) progress_finish()
  engine_check_convergence(g)
}

# The Gibbs sampler at the kernel and likelihood parameters of a variational fit `vi`
# (held fixed, or sampled from there with sample_hyper), in the last 70% of the current
# progress section; the result carries the variational fit's ELBO trace and convergence
# records.
engine_gibbs_at <- function(vi, X, control, seed, mean0, prior = NULL) {
  ctl <- control
  ctl$learn_hyper <- FALSE
  sec <- progress_section(0.3, 1)
  g <- run_engine(X, vi$lik, vi$kernel, "gibbs", ctl, seed, mean0, check = FALSE, prior = prior)
  progress_restore(sec)
  g$elbo <- vi$elbo
  g$converged <- vi$converged
  g$hyper_converged <- vi$hyper_converged
  g$param_rounds <- vi$param_rounds
  g$param_converged <- vi$param_converged
  g$param_label <- vi$param_label
  g$jitter <- max(g$jitter, vi$jitter)
  for (nm in c("hyper_levels", "ard", "exact_gaussian")) g[[nm]] <- vi[[nm]]
  g
}
