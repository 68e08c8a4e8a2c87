#' Control settings for fitting augmented GP models
#'
#' Collects the tuning constants used by [augp()] and [augp_fit()] and checks
#' them, so that a mistake is reported before any computation starts.
#'
#' @param maxit Maximum number of coordinate-ascent sweeps (variational
#'   inference) per evaluation of the hyperparameter search, and for the final
#'   updates at the learned hyperparameters.
#' @param tol Convergence tolerance on the relative change of the ELBO.
#' @param learn_hyper Learn the kernel hyperparameters (variance and
#'   lengthscales) by maximising the ELBO? If `FALSE` they stay as given.
#' @param shared_hyper For likelihoods with several latent functions
#'   (logistic-softmax, stick-breaking): `TRUE` (the default) uses one set of
#'   kernel hyperparameters for all latent functions (classes or sticks);
#'   `FALSE` gives every latent function its own copy of the kernel's
#'   hyperparameters (all starting from the same values), learned jointly by
#'   maximising the ELBO, which is then the sum of per-latent bounds. `coef()`
#'   then returns one row of hyperparameters per latent function. Ignored for
#'   binary and binomial likelihoods (one latent function); not available
#'   with sparse GPs (`inducing`).
#' @param hyper_maxit Maximum number of L-BFGS-B iterations of the
#'   hyperparameter search (per data level, see Details).
#' @param hyper_tol The hyperparameter search stops once an iteration raises
#'   the ELBO by less than about this many nats (or, if larger,
#'   `min(tol, 1e-6)` times the size of the ELBO: the accuracy to which each
#'   evaluation's variational updates converge).
#' @param hyper_polish Number of L-BFGS-B iterations on the full data after
#'   the subset levels (0, the default, keeps the hyperparameters found on
#'   the largest subset and only runs the variational updates on all data).
#' @param iter Number of Gibbs iterations per chain, warm-up included.
#' @param warmup Number of warm-up iterations discarded from each chain.
#' @param thin Keep every `thin`-th draw after warm-up.
#' @param chains Number of Gibbs chains.
#' @param threads Number of threads; `NULL` uses the option
#'   `augmentedGP.threads` (default 2).
#' @param jitter Value added to the diagonal of the kernel matrix for
#'   numerical stability (the engine may increase it; a warning then says so).
#' @param verbose Print progress? A progress bar is shown only in interactive
#'   sessions.
#' @param standardise Centre and scale the numeric inputs before fitting?
#'   Predictions undo the transformation, so results are on the original
#'   scale either way.
#' @param pred_draws Number of Monte Carlo draws from the variational
#'   posterior used to turn latent predictions into category probabilities for
#'   likelihoods with several latent functions (logistic-softmax,
#'   stick-breaking); the draws are seeded from `seed`, so predictions are
#'   reproducible.
#' @param parallel `"none"` (chains run on the package's own threads) or
#'   `"future"`: Gibbs chains (and variational restarts) run as futures
#'   through future.apply, so `future::plan()` spreads them across processes
#'   or machines; results equal a sequential run with the same seed.
#' @param restarts Number of independent variational fits from perturbed
#'   kernel starting values; the one with the highest ELBO is kept (for
#'   sparse fits with minibatches: the highest full-data ELBO).
#' @param batch_size Sparse GPs (`inducing`): minibatch size for stochastic
#'   variational inference; `NULL` uses full-data updates up to 20,000
#'   observations and minibatches beyond. Minibatch fits run `svi_epochs`
#'   passes (no convergence test): `print()` and `summary()` report
#'   "SVI: E epochs" and `logLik()` the full-data ELBO from one final pass.
#' @param svi_epochs,step_tau,step_kappa Sparse GPs: passes over the data and
#'   the step-size schedule \eqn{\rho_t = (t + \tau)^{-\kappa}} of the
#'   natural-gradient updates.
#' @param lr Sparse GPs: learning rate of the stochastic kernel
#'   hyperparameter steps (0 keeps them at their full-batch subsample values).
#'   The minibatch fit starts q(u) from the subsample fit (scaled up to all
#'   observations), keeps the kernel fixed during the first epoch, then takes
#'   Adam steps whose rate decays like the natural-gradient steps, keeping
#'   each log parameter within 3 of its subsample value.
#' @param learn_inducing Sparse GPs: also learn the inducing locations? They
#'   add m x p parameters to the L-BFGS-B search, which then often needs more
#'   than the default `hyper_maxit` iterations (on 5000 binary points with
#'   m = 40 in 5 dimensions the ELBO was 11 nats higher with
#'   `hyper_maxit = 100` than with 30, in 2.2 s instead of 0.8 s).
#' @param inducing_method Sparse GPs: `"kmeans"` or `"random"` placement of
#'   the inducing points when `inducing` is a number.
#' @details Kernel hyperparameters are learned by maximising the profiled
#'   ELBO (the ELBO at the optimal variational distribution, whose gradient is
#'   available in closed form at the coordinate-ascent fixed point) with
#'   L-BFGS-B. For n >= 800 the search runs first on nested, evenly spaced
#'   subsets of about half the size each (from 400-800 points upwards; each
#'   level starts from the previous optimum), since each evaluation costs
#'   O(m^3) in the subset size m (q m^3 with q latent functions: the smallest
#'   level shrinks as q^(-1/3)); the full data then run the variational
#'   updates to convergence, plus `hyper_polish` search iterations. Sparse GPs
#'   fitted in full batches (`inducing`, up to 20000 observations) use the
#'   same profiled search on all the data, each evaluation re-using the best
#'   \eqn{q(u)} found so far; larger data sets take minibatch steps (SVI)
#'   from a full-batch fit on a subsample.
#' @return A list of class `augp_control`.
#' @examples
#' augp_control(maxit = 50, chains = 1)
#' @export
augp_control <- function(maxit = 200, tol = 1e-6, learn_hyper = TRUE, shared_hyper = TRUE,
                         hyper_maxit = 30,
                         hyper_tol = 1e-3, hyper_polish = 0, iter = 1000, warmup = floor(iter / 2),
                         thin = 1, chains = 2,
                         threads = NULL, jitter = 1e-6, verbose = FALSE,
                         standardise = TRUE, pred_draws = 1000,
                         parallel = c("none", "future"), restarts = 1, batch_size = NULL,
                         svi_epochs = 3, step_tau = 1, step_kappa = 0.6, lr = 0.02,
                         learn_inducing = FALSE, inducing_method = c("kmeans", "random")) {
  parallel <- match.arg(parallel)
  inducing_method <- match.arg(inducing_method)
  ctrl_whole(maxit, "maxit", min = 1)
  ctrl_positive(tol, "tol")
  ctrl_flag(learn_hyper, "learn_hyper")
  ctrl_flag(shared_hyper, "shared_hyper")
  ctrl_whole(hyper_maxit, "hyper_maxit", min = 0)
  ctrl_positive(hyper_tol, "hyper_tol")
  ctrl_whole(hyper_polish, "hyper_polish", min = 0)
  ctrl_whole(iter, "iter", min = 1)
  ctrl_whole(warmup, "warmup", min = 0)
  ctrl_whole(thin, "thin", min = 1)
  ctrl_whole(chains, "chains", min = 1)
  if (warmup >= iter) {
    stop(sprintf("`warmup` (%s) must be smaller than `iter` (%s).", warmup, iter),
         call. = FALSE)
  }
  if ((iter - warmup) < thin) {
    stop("`thin` leaves no draws: need `iter - warmup >= thin`.", call. = FALSE)
  }
  threads <- resolve_threads(threads)
  if (!is.numeric(jitter) || length(jitter) != 1 || is.na(jitter) || jitter < 0 ||
      !is.finite(jitter)) {
    stop("`jitter` must be a single non-negative number.", call. = FALSE)
  }
  ctrl_flag(verbose, "verbose")
  ctrl_flag(standardise, "standardise")
  ctrl_whole(pred_draws, "pred_draws", min = 1)
  ctrl_whole(restarts, "restarts", min = 1)
  if (!is.null(batch_size)) ctrl_whole(batch_size, "batch_size", min = 1)
  ctrl_positive(svi_epochs, "svi_epochs")
  ctrl_positive(step_kappa, "step_kappa")
  if (!is.numeric(step_tau) || length(step_tau) != 1 || is.na(step_tau) || step_tau < 0) {
    stop("`step_tau` must be a single number >= 0.", call. = FALSE)
  }
  if (!is.numeric(lr) || length(lr) != 1 || is.na(lr) || lr < 0) {
    stop("`lr` must be a single number >= 0.", call. = FALSE)
  }
  ctrl_flag(learn_inducing, "learn_inducing")
  structure(list(maxit = as.integer(maxit), tol = as.double(tol),
                 learn_hyper = learn_hyper, shared_hyper = shared_hyper, hyper_maxit = as.integer(hyper_maxit),
                 hyper_tol = as.double(hyper_tol), hyper_polish = as.integer(hyper_polish),
                 iter = as.integer(iter), warmup = as.integer(warmup),
                 thin = as.integer(thin), chains = as.integer(chains),
                 threads = threads, jitter = as.double(jitter), verbose = verbose,
                 standardise = standardise, pred_draws = as.integer(pred_draws),
                 parallel = parallel, restarts = as.integer(restarts),
                 batch_size = batch_size, svi_epochs = svi_epochs, step_tau = step_tau,
                 step_kappa = step_kappa, lr = lr, learn_inducing = learn_inducing,
                 inducing_method = inducing_method),
            class = "augp_control")
}

#' @export
print.augp_control <- function(x, ...) {
  cat("<augp_control>\n")
  v <- vapply(unclass(x), function(e) paste(format(e), collapse = " "), "")
  cat(paste0("  ", format(names(v)), " ", v), sep = "\n")
  invisible(x)
}

ctrl_whole <- function(x, arg, min = 0) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x < min ||
      x != floor(x)) {
    stop(sprintf("`%s` must be a single whole number >= %d.", arg, min), call. = FALSE)
  }
  invisible(x)
}

ctrl_positive <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x) || x <= 0) {
    stop(sprintf("`%s` must be a single positive number.", arg), call. = FALSE)
  }
  invisible(x)
}

ctrl_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) {
    stop(sprintf("`%s` must be TRUE or FALSE.", arg), call. = FALSE)
  }
  invisible(x)
}

# Accept a list (possibly partial) as well as an augp_control object.
as_augp_control <- function(control) {
  if (inherits(control, "augp_control")) return(control)
  if (is.list(control)) {
    bad <- setdiff(names(control), names(formals(augp_control)))
    if (length(bad)) {
      stop(sprintf("`control` has unknown setting(s): %s.", paste(bad, collapse = ", ")),
           call. = FALSE)
    }
    return(do.call(augp_control, control))
  }
  stop("`control` must be made by augp_control() (or be a list of its settings).",
       call. = FALSE)
}
