# Sparse variational GP engine (inducing points): closed-form CAVI on full data,
# stochastic natural-gradient updates on minibatches, kernel hyperparameters (and
# optionally inducing locations) learned from analytic ELBO gradients. The C++
# driver is src/sparse.cpp; no n x n matrix is formed anywhere on this path.
# Internal: the front end calls augp_sparse_engine() when `inducing` is given.

# Fixed choices of the minibatch (SVI) path (their effect is measured in
# bench/sparse/results_svi.md): q(u) started at the prior leaves SVI far from the
# full-batch fit after a few epochs, hence the warm start; the other three bound the
# drift of the kernel over long runs, where noisy Adam steps at a constant rate would
# move the log parameters without bound.
# Start q(u) from the subsample fit, its data terms scaled to all observations.
SVI_WARM_START <- TRUE
# Epochs without kernel steps at the start (at most half the steps).
SVI_HYPER_WARMUP <- 1
# The Adam rate decays like the natural-gradient step sizes.
SVI_LR_DECAY <- TRUE
# Kernel log parameters stay within this distance of their starting values.
SVI_HYPER_BOX <- 3
# Minibatch steps of a default fit: svi_epochs passes, but no more than this many steps,
# the 3 passes of 1e6 rows at the default batch size (larger data then take part of a
# pass, the minibatches drawn from a random order of all the rows): larger data
# repeat themselves, and the full-batch subsample fit that starts SVI has already placed
# q(u) and the kernel close (bench/sparse/results_1e7.md).
SVI_MAX_STEPS <- 3000

# Minibatch size (NULL: by full_batch_max) checked against the n observations.
sparse_check_batch <- function(ctl, n) {
  if (!is.null(ctl$batch_size) && ctl$batch_size > n) {
    stop(sprintf("`control$batch_size` must be between 1 and the number of observations (%d).", n),
         call. = FALSE)
  }
  invisible(ctl)
}

# Whether a sparse fit of n observations under control `ctl` runs full-batch CAVI
# (otherwise minibatch SVI).
sparse_full_batch <- function(ctl, n) {
  is.null(ctl$batch_size) && n <= ctl$full_batch_max ||
    (!is.null(ctl$batch_size) && ctl$batch_size >= n)
}

# Inducing locations: a count m (k-means centres or a random subset of the rows of
# X) or a matrix of locations.
sparse_inducing <- function(inducing, X, method = "kmeans") {
  n <- nrow(X)
  if (is.data.frame(inducing)) inducing <- as.matrix(inducing)
  if (is.matrix(inducing)) {
    if (!is.numeric(inducing)) stop("`inducing` must be a count or a numeric matrix.", call. = FALSE)
    if (anyNA(inducing) || any(!is.finite(inducing))) {
      stop("`inducing` must not contain NA, NaN or Inf.", call. = FALSE)
    }
    if (ncol(inducing) != ncol(X)) {
      stop(sprintf("`inducing` must have %d columns (one per input column).", ncol(X)), call. = FALSE)
    }
    if (nrow(inducing) < 1 || nrow(inducing) > n) {
      stop(sprintf("`inducing` must have between 1 and %d rows (the number of observations).", n),
           call. = FALSE)
    }
    storage.mode(inducing) <- "double"
    return(unname(inducing))
  }
  if (!is.numeric(inducing) || length(inducing) != 1 || is.na(inducing) ||
      inducing != floor(inducing) || inducing < 1) {
    stop("`inducing` must be a whole number >= 1 or a matrix of inducing locations.", call. = FALSE)
  }
  m <- as.integer(inducing)
  if (m > n) {
    stop(sprintf("`inducing` (%d) must not exceed the number of observations (%d).", m, n),
         call. = FALSE)
  }
  if (method == "random" || m == n) return(unname(X[sort(sample.int(n, m)), , drop = FALSE]))
  # k-means on at most max(20 m, 5000) distinct rows, drawn from a random subsample
  # (distinct rows of all the data only when the subsample has too few)
  nsub <- max(20 * m, 5000)
  ux <- unique(if (n > 2 * nsub) X[sample.int(n, 2 * nsub), , drop = FALSE] else design_matrix(X))
  if (nrow(ux) <= m && n > 2 * nsub) ux <- unique(design_matrix(X))
  if (nrow(ux) <= m) return(unname(X[sort(sample.int(n, m)), , drop = FALSE]))
  sub <- if (nrow(ux) > nsub) ux[sample.int(nrow(ux), nsub), , drop = FALSE] else ux
  cl <- tryCatch(suppressWarnings(stats::kmeans(sub, centers = m, iter.max = 30)),
                 error = function(e) NULL)
  if (is.null(cl)) return(unname(X[sort(sample.int(n, m)), , drop = FALSE]))
  unname(cl$centers)
}

# The prior means of a sparse fit's latent values at its n rows: an n x q matrix, or a
# 1 x q matrix when they are the same at every row (the C++ data read that one row for
# every row, so a constant prior mean costs no n x q matrix).
sparse_mean0 <- function(mean0, n, q) {
  mean0 <- if (is.matrix(mean0)) mean0 else check_numeric(mean0, "mean0")
  if (is.matrix(mean0)) {
    one_row <- nrow(mean0) == 1L && ncol(mean0) == q
    mean0 <- check_numeric(mean0, "mean0")
    if (one_row) return(matrix(mean0, 1L, q))
    if (length(mean0) != n * q) stop("`mean0` must be an n x q matrix.", call. = FALSE)
    return(matrix(mean0, n, q))
  }
  if (length(mean0) == 1) return(matrix(mean0, 1L, q))
  if (length(mean0) == q) return(matrix(mean0, 1L, q))
  if (q == 1 && length(mean0) == n) return(matrix(mean0, n, 1))
  stop("`mean0` must be a single number, one per latent column or an n x q matrix.", call. = FALSE)
}

# The per-row data fields of an engine likelihood list (the rest are parameters).
SPARSE_ROW_FIELDS <- c("y", "trials", "Y")

# The prior means of rows idx (sparse_mean0()'s n x q or 1 x q matrix).
sparse_mean0_rows <- function(mu0, idx) if (nrow(mu0) == 1L) mu0 else mu0[idx, , drop = FALSE]

sparse_lik_subset <- function(lik, idx) {
  n_of <- function(v) if (is.matrix(v)) nrow(v) else length(v)
  n <- if (!is.null(lik$Y)) nrow(lik$Y) else n_of(lik$y)
  for (nm in intersect(names(lik), SPARSE_ROW_FIELDS)) {
    v <- lik[[nm]]
    if (n_of(v) == n) lik[[nm]] <- if (is.matrix(v)) v[idx, , drop = FALSE] else v[idx]
  }
  lik
}

# The engine likelihood `lik` with the parameter fields of `sub` (the same likelihood on
# a subset of the rows, sparse_lik_subset(), whose parameters were learned there): every
# field but the per-row data.
lik_with_params <- function(lik, sub) {
  for (nm in setdiff(names(sub), SPARSE_ROW_FIELDS)) lik[[nm]] <- sub[[nm]]
  lik
}

# Full-data fit. Kernel hyperparameters (and Z, if learned) maximise the profiled ELBO
#   L*(theta) = max_q(u) ELBO(q(u), theta)
# with L-BFGS-B (hyper_optimise), as in the exact engine. The evaluations run in a
# persistent C++ model holding the data (X, mu0, the likelihood's blocks) and the best
# q(u) so far: each re-expresses that q(u) under the new kernel and Z (q(u) itself
# unchanged) and runs CAVI with SQUAREM to a relative change of min(tol, 1e-6); at that
# fixed point the gradient with q(u) held fixed is the gradient of L* (envelope
# theorem). Then CAVI at the best kernel for up to maxit more sweeps. The recorded
# trace: the improving evaluations, then the final sweeps (non-decreasing).
# converged: the final sweeps met tol; hyper_converged: the search stopped before
# hyper_maxit iterations (NA without a search).
# levels: search on data subsets first when n is large (sparse_full_levels()); step: the
# size of L-BFGS-B's first step (hyper_optimise()); direct: after the search, choose the
# kernel by the direct-ELBO ladder (sparse_direct_ladder()); final = FALSE skips the
# final sweeps (a lower subset level, whose kernel and q(u) only start the next); state:
# the starting q(u), whitened under (kernel, Z, jitter) (NULL: the prior).
sparse_full <- function(X, mu0, lik, kernel, Z, jitter, ctl, learn_hyper, learn_z,
                        levels = TRUE, step = 1, direct = FALSE, final = TRUE, state = NULL) {
  if (is.matrix(X) && !is.double(X)) storage.mode(X) <- "double"
  if (!is.double(mu0)) storage.mode(mu0) <- "double"
  if (levels && (learn_hyper || learn_z) && ctl$hyper_maxit > 0 && ctl$hyper_polish < 1 &&
      nrow(X) >= 2 * sparse_level_min(nrow(Z))) {
    return(sparse_full_levels(X, mu0, lik, kernel, Z, jitter, ctl, learn_hyper, learn_z, direct))
  }
  model <- .model_sparse_new(design_matrix(X), mu0, lik, as.integer(ctl$block_size), kernel_flatten(kernel),
                             as.integer(ctl$threads))
  th0 <- kernel_get_params(kernel)
  # One sweep from `state` or the prior: the starting q(u) (and the jitter K_mm needs).
  res <- .model_sparse_cavi(model, unname(th0), Z, jitter, FALSE, 1L, ctl$tol, FALSE, state)
  jitter <- res$jitter
  learn <- (learn_hyper || learn_z) && ctl$hyper_maxit > 0
  path <- numeric(0)
  evals <- 0L
  hyper_converged <- NA
  if (learn) {
    sec <- progress_section(0, 0.9, "hyperparameter search", announce = TRUE)
    nth <- length(th0)
    unpack <- function(p) {
      list(th = if (learn_hyper) p[seq_len(nth)] else th0,
           Z = if (learn_z) matrix(p[(if (learn_hyper) nth else 0) + seq_along(Z)], nrow(Z)) else Z)
    }
    ev <- function(p) {
      u <- unpack(p)
      o <- .model_sparse_eval(model, unname(u$th), u$Z, as.integer(ctl$maxit), min(ctl$tol, 1e-6),
                              learn_hyper, learn_z)
      list(value = if (o$ok) o$elbo else NA_real_,
           gradient = c(if (learn_hyper) o$grad, if (learn_z) as.numeric(o$gz)))
    }
    p0 <- c(if (learn_hyper) th0, if (learn_z) as.numeric(Z))
    lo <- c(if (learn_hyper) th0 - 8, if (learn_z) rep(-Inf, length(Z)))
    up <- c(if (learn_hyper) th0 + 8, if (learn_z) rep(Inf, length(Z)))
    opt <- hyper_optimise(ev, p0, lo, up, ctl, step = step)
    progress_restore(sec)
    evals <- opt$evals
    path <- opt$path
    hyper_converged <- opt$converged
    if (is.finite(opt$value)) {
      u <- unpack(opt$par)
      kernel <- kernel_set_params(kernel, u$th)
      Z <- u$Z
    }
  }
  if (!final && learn) {
    # A lower search level: only its kernel (and Z) are used.
    return(list(kernel = kernel, Z = Z, jitter = jitter, state = .model_sparse_state(model),
                elbo = path, converged = NA, hyper_converged = hyper_converged, hyper_evals = evals))
  }
  dl <- NULL
  if (direct && learn_hyper && learn) {
    sec <- progress_section(0.9, 0.95, "direct-ELBO ladder", announce = TRUE)
    dl <- sparse_direct_ladder(X, mu0, lik, kernel, Z, jitter, ctl, .model_sparse_state(model))
    progress_restore(sec)
    evals <- evals + dl$evals
    if (identical(dl$kernel, kernel)) dl <- NULL
  }
  sec <- progress_section(if (learn) 0.9 else 0, 1, "variational updates", announce = TRUE)
  res <- if (is.null(dl)) {
    # The model's best q(u) is whitened under (kernel, Z).
    .model_sparse_cavi(model, unname(kernel_get_params(kernel)), Z, jitter, TRUE,
                       as.integer(ctl$maxit), ctl$tol, TRUE)
  } else {
    # Another kernel than the search's (its trace does not apply): from the ladder's q(u).
    path <- numeric(0)
    kernel <- dl$kernel
    .sparse_cavi_cpp(X, mu0, lik, as.integer(ctl$block_size), kernel_flatten(kernel), Z, jitter,
                     dl$state[c("Lam", "h")], as.integer(ctl$maxit), ctl$tol,
                     as.integer(ctl$threads), TRUE)
  }
  trace <- c(path[path <= res$elbo[1]], res$elbo)
  progress_set(1, sprintf("%d sweeps, ELBO %.6f", length(res$elbo), trace[length(trace)]))
  progress_restore(sec)
  list(kernel = kernel, Z = Z, jitter = jitter, state = res$state, elbo = trace,
       converged = res$converged, hyper_converged = hyper_converged, hyper_evals = evals)
}

# The search on nested subsets: a sweep costs about q n m^2, so for n at least twice
# sparse_level_min() the kernel (and Z, if learned) is searched on evenly spaced subsets
# of the rows, halving from n down to that size; each level's search starts from the
# previous level's optimum and q(u) (the levels below the largest stop at a coarser
# gain, SPARSE_LEVEL_TOL nats, as they only give the next level its start). The full
# data then run CAVI at the largest subset's optimum, from its q(u) with the data terms
# scaled by n / subset size (as the minibatch warm start does; the prior if that is not
# positive definite). The trace holds the full-data sweeps only; hyper_converged is the
# largest subset search's, hyper_evals counts the evaluations of all levels.
#
# The smallest level does not shrink with the number of latent functions q: each row
# carries one label however many latents share it, so a subset informs every latent's
# kernel less as q grows, and on small subsets the multi-class ELBO favours ever larger
# kernel variances and lengthscales (a near-linear fit). The q(u) passed up the levels
# matters for the same likelihoods: logistic-softmax CAVI from the prior at a large
# kernel variance can settle in a poor fixed point near the uniform fit, far below the
# one reached by following the kernel from a small variance.
SPARSE_LEVEL_WORK <- 2000
SPARSE_LEVEL_TOL <- 0.05
sparse_level_min <- function(m) max(SPARSE_LEVEL_WORK, m)

sparse_full_levels <- function(X, mu0, lik, kernel, Z, jitter, ctl, learn_hyper, learn_z,
                               direct = FALSE) {
  n <- nrow(X)
  lmin <- sparse_level_min(nrow(Z))
  sizes <- n
  while (sizes[1] >= 2 * lmin) sizes <- c(ceiling(sizes[1] / 2), sizes)
  searched <- sizes[-length(sizes)]
  if (length(searched) > 1) searched <- searched[-length(searched)]
  share <- 0.8 * c(0, cumsum(searched) / sum(searched))
  evals <- 0L
  state <- NULL
  for (lev in seq_along(searched)) {
    idx <- unique(round(seq(1, n, length.out = searched[lev])))
    if (lev > 1) state <- sparse_scale_state(sub$state, length(idx) / n_prev)
    n_prev <- length(idx)
    cl <- if (lev < length(searched)) utils::modifyList(ctl, list(hyper_tol = max(ctl$hyper_tol, SPARSE_LEVEL_TOL))) else ctl
    sec <- progress_section(share[lev], share[lev + 1],
                            sprintf("hyperparameter search on %d of %d observations", length(idx), n),
                            announce = TRUE)
    sub <- sparse_full(X[idx, , drop = FALSE], sparse_mean0_rows(mu0, idx), sparse_lik_subset(lik, idx),
                       kernel, Z, jitter, cl, learn_hyper, learn_z, levels = FALSE,
                       step = if (lev > 1) 0.25 else 1, direct = direct && lev == length(searched),
                       final = lev == length(searched), state = state)
    progress_restore(sec)
    kernel <- sub$kernel
    Z <- sub$Z
    jitter <- sub$jitter
    evals <- evals + sub$hyper_evals
  }
  state <- sparse_scale_state(sub$state, n / length(idx))
  sec <- progress_section(0.8, 1, "variational updates", announce = TRUE)
  res <- .sparse_cavi_cpp(X, mu0, lik, as.integer(ctl$block_size), kernel_flatten(kernel), Z, jitter,
                          state, as.integer(ctl$maxit), ctl$tol, as.integer(ctl$threads), TRUE)
  progress_set(1, sprintf("%d sweeps, ELBO %.6f", length(res$elbo), res$elbo[length(res$elbo)]))
  progress_restore(sec)
  list(kernel = kernel, Z = Z, jitter = res$jitter, state = res$state, elbo = res$elbo,
       converged = res$converged, hyper_converged = sub$hyper_converged, hyper_evals = evals,
       levels = sizes)
}

# Kernel selection by the direct ELBO (control hyper_objective = "direct") for a sparse
# fit: the ladder of engine_direct_ladder() (R/engine.R), each rung a CAVI fit of q(u)
# at fixed Z from the best rung's q(u), scored by E_q[log p(y | f)] - KL(q(u) || p(u))
# with the marginals of f at the data (engine_direct_elbo()), after
# ladder_refine_rounds() rounds of the refinement when the fit is to be refined.
sparse_direct_ladder <- function(X, mu0, lik, kernel, Z, jitter, ctl, state, rung_tol = 1e-4) {
  rounds <- ladder_refine_rounds(lik, nrow(X), ctl)
  rung <- function(k, from) {
    res <- tryCatch(
      .sparse_cavi_cpp(X, mu0, lik, as.integer(ctl$block_size), kernel_flatten(k), Z, jitter,
                       from[c("Lam", "h")], as.integer(ctl$maxit), max(min(ctl$tol, 1e-6), rung_tol),
                       as.integer(ctl$threads), TRUE),
      error = function(e) NULL)
    if (is.null(res) || !length(res$elbo) || res$jitter != jitter) {
      return(list(value = -Inf, state = NULL))
    }
    pr <- .sparse_predict_cpp(kernel_flatten(k), Z, jitter, res$state, design_matrix(X), mu0,
                              as.integer(ctl$threads))
    value <- engine_direct_elbo(lik, pr$mean, pr$var, res$state$kl)
    if (rounds > 0L) {
      rf <- tryCatch(refine_sparse(X, mu0, lik, k, Z, jitter, res$state, rounds, ctl),
                     error = function(e) NULL)
      if (!is.null(rf) && length(rf$direct)) value <- max(value, rf$direct[length(rf$direct)])
    }
    list(value = value, state = res$state)
  }
  direct_ladder(kernel, state, rung)
}

# Likelihood parameters learned by the ELBO in a full-batch sparse fit `fit` (the list
# sparse_full() returns) on data (X, mu0, lik): the likelihood's step maximises the
# local ELBO over its parameters at the marginals of q(f) at the data (the
# .lik_learn_params_cpp step of the exact GP, R/lik_params.R), then CAVI of q(u) runs
# from the current q(u) with the new parameters; the loop stops when a round gains less
# than tol (relative) or after max_rounds. The marginals of f at the data are all the
# local ELBO sees, so neither step lowers the ELBO
#   sum_i E_q[log p(y_i | f_i)] - KL(q(u) || p(u)).
# Returns fit with lik (the learned parameters), state, the ELBO trace extended by the
# value after each parameter step and the CAVI sweeps after it, param_rounds and
# param_converged (FALSE: stopped at max_rounds with the ELBO still rising).
sparse_learn_lik_params <- function(fit, X, mu0, lik, ctl, max_rounds = ctl$maxit) {
  trace <- fit$elbo
  e_cur <- trace[length(trace)]
  state <- fit$state
  spec <- kernel_flatten(fit$kernel)
  converged <- FALSE
  rounds <- 0L
  cavi_at <- function(l, st) {
    .sparse_cavi_cpp(X, mu0, l, as.integer(ctl$block_size), spec, fit$Z, fit$jitter,
                     st[c("Lam", "h")], as.integer(ctl$maxit), ctl$tol, as.integer(ctl$threads), TRUE)
  }
  hist <- list()
  for (r in seq_len(max_rounds)) {
    rounds <- r
    if (length(hist) == PARAM_EXTRAPOLATE_EVERY) {
      # a jump to the extrapolated limit of the parameters (param_jump(),
      # R/lik_params.R), kept if it raises the ELBO
      j <- param_jump(hist, lik, e_cur, function(l) cavi_at(l, state))
      hist <- list()
      if (!is.null(j)) {
        lik <- j$lik
        state <- j$res$state
        trace <- c(trace, j$res$elbo[j$res$elbo > e_cur])
        e_cur <- j$elbo
        fit$converged <- j$res$converged
      }
    }
    pr <- sparse_marginals(X, mu0, lik, fit$kernel, fit$Z, fit$jitter, state, ctl)
    step <- .lik_learn_params_cpp(lik, pr$mean, pr$var)
    gain <- max(step$gain, 0)
    if (!(gain > 0)) {
      converged <- TRUE
      break
    }
    for (nm in names(step$params)) lik[[nm]] <- as.numeric(step$params[[nm]])
    hist <- c(hist, list(step$params))
    res <- cavi_at(lik, state)
    state <- res$state
    e_new <- res$elbo[length(res$elbo)]
    trace <- c(trace, e_cur + gain, res$elbo)
    gain <- e_new - e_cur
    e_cur <- e_new
    fit$converged <- res$converged
    if (gain <= ctl$tol * abs(e_cur)) {
      converged <- TRUE
      break
    }
  }
  fit$state <- state
  fit$elbo <- trace
  fit$lik <- lik
  fit$param_rounds <- rounds
  fit$param_converged <- converged
  fit
}

# A full-batch sparse fit whose likelihood learns parameters: sparse_full() at the
# starting parameters, then sparse_learn_lik_params(); with `passes` > 1 (the
# likelihood's lik_hyper_passes()) and a kernel search, the search runs again from the
# starting kernel at the learned parameters, which are then learned again, as long as
# the final ELBO rises (as engine_fit_lik_params() does for the exact GP).
sparse_full_lik <- function(X, mu0, lik, kernel, Z, jitter, ctl, learn_hyper, learn_z,
                            passes = 1L, ...) {
  one <- function(l) {
    f <- sparse_full(X, mu0, l, kernel, Z, jitter, ctl, learn_hyper, learn_z, ...)
    sparse_learn_lik_params(f, X, mu0, l, ctl)
  }
  fit <- one(lik)
  for (pass in seq_len(passes - 1L)) {
    if (!(learn_hyper || learn_z) || ctl$hyper_maxit < 1) break
    nxt <- one(fit$lik)
    e_old <- fit$elbo[length(fit$elbo)]
    if (!(nxt$elbo[length(nxt$elbo)] > e_old + ctl$tol * abs(e_old))) break
    fit <- nxt
  }
  fit
}

# Minibatch natural-gradient SVI, `iters` steps (svi_steps()). `state` (whitened under
# the starting kernel and Z) warm-starts q(u); kernel steps start after SVI_HYPER_WARMUP epochs (at most half the
# iterations), with a decaying Adam rate and a +-SVI_HYPER_BOX box in log scale around
# the starting kernel (sparse.h, SviOptions). The fit ends with one full-data pass
# for the ELBO (final_elbo = TRUE). SVI has no convergence test: svi_trend records
# whether the minibatch ELBO estimates were still clearly rising over the last epoch
# (R/diagnostics.R).
sparse_svi <- function(X, mu0, lik, kernel, Z, jitter, ctl, learn_hyper, learn_z, iters, state = NULL) {
  n <- nrow(X)
  sch <- svi_schedule(n, ctl, iters)
  starts0 <- sch$starts0
  hyper_start <- as.integer(min(floor(iters / 2), round(SVI_HYPER_WARMUP * length(starts0))))
  # Large data: collect the R garbage of the stages before (row samples of length n) and
  # return the C++ heap's free memory before the pass that holds the data in blocks.
  release_large(n, ncol(X))
  res <- .sparse_svi_cpp(X, mu0, lik, sch$bs, kernel_flatten(kernel), Z, jitter, state,
                         sch$starts, sch$bpb, ctl$step_tau, ctl$step_kappa,
                         if (learn_hyper || learn_z) ctl$lr else 0, learn_hyper && ctl$lr > 0,
                         learn_z && ctl$lr > 0, hyper_start, SVI_LR_DECAY, SVI_HYPER_BOX,
                         as.integer(ctl$threads), progress_svi_callback(), sch$perm)
  sch <- NULL
  kernel <- kernel_set_params(kernel, res$theta)
  elbo_full <- NA_real_
  marginals <- NULL
  if (ctl$final_elbo) {
    marginals <- sparse_marginals(X, mu0, lik, kernel, res$Z, res$jitter, res$state, ctl)
    elbo_full <- marginals$elbo
  }
  list(kernel = kernel, Z = res$Z, jitter = res$jitter, state = res$state, elbo = res$elbo,
       elbo_full = elbo_full, marginals = marginals, converged = NA, hyper_converged = NA,
       svi_trend = svi_trend(res$elbo, min(length(starts0), iters / 3)), hyper_evals = 0L,
       epochs = iters / length(starts0), iterations = iters, hyper_start = hyper_start)
}

# Whether a minibatch fit runs the direct-ELBO epochs (sparse_svi_direct()): with
# refine = "auto" for the likelihoods whose kernel is chosen by the direct ELBO
# (hyper_objective "direct": the augmented bound is loose), with a positive refine
# setting for every likelihood that provides the expected derivatives (refine_plan()
# has checked that). Not for likelihoods that learn their parameters on the augmented
# bound (learn_lik): an explicit setting is then an error.
svi_direct_planned <- function(lik, n, ctl, learn_lik = NULL) {
  auto <- identical(ctl$refine, "auto")
  if (!auto && ctl$refine == 0L) return(FALSE)
  if (!is.null(learn_lik)) {
    if (auto) return(FALSE)
    stop(paste0("`control$refine`: minibatch (SVI) fits of a likelihood that learns its ",
                "parameters do not support the direct-ELBO epochs; use refine = FALSE or ",
                "a full-batch fit."), call. = FALSE)
  }
  if (auto) {
    identical(ctl$hyper_objective, "direct") && is.null(refine_unavailable(lik, n, NULL, ctl))
  } else {
    TRUE
  }
}

# The minibatch steps of a fit on n rows: svi_iter if given, else svi_epochs passes over
# the batches, at most SVI_MAX_STEPS. A fit with direct-ELBO epochs (svi_direct_planned())
# first takes one more pass on the augmented bound (at most SVI_MAX_STEPS / 3 steps),
# where the closed-form sites move q(u) from the subsample's warm start cheaply and
# stably, and then those steps on the direct ELBO (sparse_svi_direct()); with svi_iter
# given, the first quarter of them is the augmented pass. Returns c(augmented, direct)
# step counts.
svi_steps <- function(n, ctl, direct) {
  per_epoch <- length(svi_batches(n, ctl)$starts0)
  total <- if (is.null(ctl$svi_iter)) min(ceiling(ctl$svi_epochs * per_epoch), SVI_MAX_STEPS) else ctl$svi_iter
  total <- as.integer(max(1, total))
  if (!direct) return(c(total, 0L))
  if (!is.null(ctl$svi_iter)) {
    if (total < 2L) return(c(total, 0L))
    aug <- max(1L, as.integer(round(total / 4)))
    return(c(aug, total - aug))
  }
  c(as.integer(min(per_epoch, SVI_MAX_STEPS / 3)), total)
}

# The minibatches of n rows: blocks of block_size rows, batch_size / block_size blocks
# per batch (bpb); starts0: the first block (0-based) of each batch of one epoch.
svi_batches <- function(n, ctl) {
  bs <- as.integer(min(ctl$block_size, ctl$batch_size))
  bpb <- max(1L, as.integer(round(ctl$batch_size / bs)))
  list(bs = bs, bpb = bpb, starts0 = seq(0L, ceiling(n / bs) - 1L, by = bpb))
}

# The schedule of `iters` SVI steps on n rows: the blocks in a random order of the rows
# (perm, 0-based; C++ reads the rows in that order), and the batches of svi_batches()
# visited epoch by epoch, each epoch in its own random order (starts: the first block
# of each step's batch).
svi_schedule <- function(n, ctl, iters) {
  b <- svi_batches(n, ctl)
  perm <- sample.int(n) - 1L
  s0 <- b$starts0
  starts <- unlist(lapply(seq_len(ceiling(iters / length(s0))),
                          function(e) s0[sample.int(length(s0))]))[seq_len(iters)]
  c(b, list(perm = perm, starts = as.integer(starts)))
}

# The direct-ELBO epochs of a minibatch fit (svi_direct_planned()): from the augmented
# SVI fit `f`, `iters` minibatch steps (svi_steps()) on the direct ELBO
# E_q[log p(y | f)] - KL(q(u) || p(u)) itself. Each step moves q(u) by a natural-gradient
# step towards the minibatch estimate of the refinement's target (the sites
# E_q[-d2 log p], E_q[d log p] + E_q[-d2 log p] m of sparse_cvi_refine, the expectations
# over SVI_DIRECT_DRAWS fixed-seed draws per point), at the rate (t + SVI_DIRECT_TAU)^-kappa,
# and, when the kernel (or Z) is learned, takes an Adam step along the minibatch gradient
# of the direct ELBO (rate SVI_DIRECT_LR, decaying like the natural-gradient steps, each
# log parameter within SVI_DIRECT_BOX of its value at the start of these epochs).
# The augmented bound's optimum in the kernel lies on the near-linear ridge short of the
# direct ELBO's (the same gap that the exact and full-batch fits' direct-ELBO ladder
# closes), and the augmented q(u) is too narrow where the bound is loose: these epochs
# move both. A last pass over all the data gives the marginals of f and the direct ELBO
# (SVI_DIRECT_ELBO_DRAWS draws per point). Returns `f` with the new kernel, Z, state,
# marginals, elbo_full (the direct ELBO) and svi_direct = list(trace (minibatch
# estimates of the direct ELBO), epochs, iterations, draws).
SVI_DIRECT_DRAWS <- 50L
SVI_DIRECT_ELBO_DRAWS <- 200L
SVI_DIRECT_TAU <- 10
SVI_DIRECT_LR <- 0.1
SVI_DIRECT_BOX <- 8
sparse_svi_direct <- function(X, mu0, lik, f, ctl, learn_hyper, learn_z, iters) {
  n <- nrow(X)
  sch <- svi_schedule(n, ctl, iters)
  epochs <- iters / length(sch$starts0)
  learn <- (learn_hyper || learn_z) && ctl$lr > 0
  res <- .sparse_svi_cpp(X, mu0, lik, sch$bs, kernel_flatten(f$kernel), f$Z, f$jitter,
                         f$state[c("Lam", "h")], sch$starts, sch$bpb, SVI_DIRECT_TAU, ctl$step_kappa,
                         if (learn) SVI_DIRECT_LR else 0, learn && learn_hyper, learn && learn_z, 0L,
                         TRUE, SVI_DIRECT_BOX, as.integer(ctl$threads), progress_svi_callback(),
                         sch$perm, direct_elbo_normals(SVI_DIRECT_DRAWS, lik$q))
  sch <- NULL
  f$kernel <- kernel_set_params(f$kernel, res$theta)
  f$Z <- res$Z
  f$jitter <- res$jitter
  # one pass: the marginals and the direct ELBO of the final q(u)
  fin <- refine_sparse(X, mu0, lik, f$kernel, f$Z, f$jitter, res$state, 0L, ctl, SVI_DIRECT_ELBO_DRAWS)
  f$state <- fin$state
  f$marginals <- list(mean = fin$mean, var = fin$var, elbo = fin$direct[1])
  f$elbo_full <- fin$direct[1]
  f$svi_direct <- list(trace = res$elbo, epochs = epochs,
                       iterations = iters, draws = SVI_DIRECT_DRAWS)
  f
}

# q(u) of a full-batch fit on nsub of the n points, as a start for SVI on all of
# them: the data terms of the natural parameters scaled by n / nsub (a rho = 1
# natural-gradient step with the subsample as the minibatch). Same kernel, Z and
# jitter, so the whitening is unchanged. NULL (prior start) if not positive definite.
sparse_scale_state <- function(state, ratio) {
  Lam <- lapply(state$Lam, function(L) {
    m <- nrow(L)
    A <- diag(m) + ratio * (L - diag(m))
    (A + t(A)) / 2
  })
  ok <- all(vapply(Lam, function(A) !inherits(tryCatch(chol(A), error = function(e) e), "error"), TRUE))
  if (!ok) return(NULL)
  list(Lam = Lam, h = lapply(state$h, function(h) ratio * h))
}

# Warm start for SVI on all n points: CAVI sweeps on the subsample idx (from
# `state`, whitened under kernel k and Z, or the prior) at kernel k, then the data
# terms scaled by n / nsub. Every CAVI sweep leaves Lam = I + Phi' W Phi, so the
# scaled Lam stays positive definite. NULL (prior start) on failure.
sparse_warm_state <- function(X, mu0, lik, idx, k, Z, jitter, state, sweeps, ctl) {
  r0 <- tryCatch(.sparse_cavi_cpp(X[idx, , drop = FALSE], sparse_mean0_rows(mu0, idx),
                                  sparse_lik_subset(lik, idx), as.integer(ctl$block_size),
                                  kernel_flatten(k), Z, jitter, state, as.integer(max(1L, sweeps)),
                                  ctl$tol, as.integer(ctl$threads)), error = function(e) NULL)
  if (is.null(r0) || r0$jitter != jitter) return(NULL)
  sparse_scale_state(r0$state, nrow(X) / length(idx))
}

# Between the given kernel and the median-distance start, keep the one with the
# better ELBO after a few CAVI sweeps on (a subsample of) the data.
sparse_pick_start <- function(kernel, X, mu0, lik, Z, jitter, ctl) {
  alt <- kernel_median_start(kernel, X)
  n <- nrow(X)
  idx <- if (n > 2000) sort(sample.int(n, 2000)) else seq_len(n)
  score <- function(k) {
    r <- tryCatch(.sparse_cavi_cpp(X[idx, , drop = FALSE], sparse_mean0_rows(mu0, idx),
                                   sparse_lik_subset(lik, idx), as.integer(ctl$block_size),
                                   kernel_flatten(k), Z, jitter, NULL, 5L, ctl$tol,
                                   as.integer(ctl$threads)), error = function(e) NULL)
    if (is.null(r)) -Inf else r$elbo[length(r$elbo)]
  }
  if (score(alt) > score(kernel)) alt else kernel
}

# Fit a sparse variational GP. `lik` is an engine likelihood list (type, q, data);
# without it a binomial likelihood is built from y and trials.
augp_sparse_engine <- function(X, y = NULL, trials = NULL, kernel, inducing, control = list(),
                               seed = NULL, mean0 = 0, lik = NULL, learn_lik = NULL) {
  # a standardised augp_design (the front end's) is read in place and was checked there
  if (!inherits(X, "augp_design")) X <- kernel_as_matrix(X, "X")
  n <- nrow(X)
  if (is.list(lik) && !is.null(lik$type) && is.null(lik$q)) {
    lik$q <- if (is.matrix(lik$y)) ncol(lik$y) else 1L
  }
  lik <- engine_resolve_lik(n, y, trials, lik)
  q <- lik$q
  if (!is_kernel(kernel)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  kernel_check_dims(kernel, ncol(X))
  ctl <- as_augp_control(control)
  sparse_check_batch(ctl, n)
  # Progress of a direct call (run_engine() starts the reporter of a front-end fit).
  own <- progress_begin(ctl$verbose, sprintf("augp sparse engine: variational inference on %d observations", n))
  if (own) on.exit(progress_close(), add = TRUE)
  if (q > 1 && !ctl$shared_hyper) {
    stop(paste0("`shared_hyper = FALSE` (per-class kernel hyperparameters) is not ",
                "supported with sparse GPs (`inducing`); use the exact GP or ",
                "shared_hyper = TRUE."), call. = FALSE)
  }
  mu0 <- sparse_mean0(mean0, n, q)
  if (is.matrix(X) && !is.double(X)) storage.mode(X) <- "double"
  if (!is.double(mu0)) storage.mode(mu0) <- "double"
  seeds <- new_seed(seed)
  rng_seed <- seeds[1]
  withr::local_preserve_seed()
  set.seed(rng_seed)
  Z <- sparse_inducing(inducing, X, ctl$inducing_method)
  learn_hyper <- ctl$learn_hyper
  learn_z <- ctl$learn_inducing
  jitter <- ctl$jitter * max(1e-300, mean(kernel_diag(kernel, Z)))
  full <- sparse_full_batch(ctl, n)
  if (!full && is.null(ctl$batch_size)) ctl$batch_size <- min(n, 1000)
  # The full-data ELBO ranks restarts, so SVI restarts always compute it.
  if (ctl$restarts > 1) ctl$final_elbo <- TRUE
  # One fit from starting kernel k; restart r (1-based) draws its subsample and
  # minibatch order from its own stream (r = 1: the stream of a single fit).
  fit_one <- function(k, r = 1L) {
    set.seed((rng_seed + r - 1) %% 2147483647)
    if (learn_hyper) k <- sparse_pick_start(k, X, mu0, lik, Z, jitter, ctl)
    if (full) {
      direct <- identical(ctl$hyper_objective, "direct")
      if (!is.null(learn_lik)) {
        return(sparse_full_lik(X, mu0, lik, k, Z, jitter, ctl, learn_hyper, learn_z,
                               passes = learn_lik$passes, direct = direct))
      }
      return(sparse_full(X, mu0, lik, k, Z, jitter, ctl, learn_hyper, learn_z, direct = direct))
    }
    Zr <- Z
    jr <- jitter
    st <- NULL
    sub <- NULL
    sec <- progress_section(0, 0.3, "subsample fit")
    lk <- lik
    if ((learn_hyper || !is.null(learn_lik)) && ctl$hyper_subsample > 0) {
      # Starting hyperparameters (and q(u), scaled up) from a full-batch fit on a
      # random subsample; a likelihood that learns parameters learns them there, and
      # SVI runs at those values.
      idx <- sort(sample.int(n, min(n, ctl$hyper_subsample)))
      sub_ctl <- utils::modifyList(ctl, list(maxit = min(ctl$maxit, 60)))
      sub_lik <- sparse_lik_subset(lik, idx)
      sub <- if (is.null(learn_lik)) {
        sparse_full(X[idx, , drop = FALSE], sparse_mean0_rows(mu0, idx), sub_lik, k, Zr, jr,
                    sub_ctl, learn_hyper, learn_z, levels = FALSE)
      } else {
        sparse_full_lik(X[idx, , drop = FALSE], sparse_mean0_rows(mu0, idx), sub_lik, k, Zr, jr,
                        sub_ctl, learn_hyper, learn_z, passes = learn_lik$passes, levels = FALSE)
      }
      if (!is.null(learn_lik)) lk <- lik_with_params(lik, sub$lik)
      k <- sub$kernel
      Zr <- sub$Z
      jr <- sub$jitter
      # sub$state may come straight from an L-BFGS step (re-whitened to the new
      # kernel, so Lam - I need not be positive semi-definite and scaling it by
      # n / nsub can break positive definiteness): a few CAVI sweeps at the final
      # kernel first.
      if (SVI_WARM_START) st <- sparse_warm_state(X, mu0, lk, idx, k, Zr, jr, sub$state, 10L, ctl)
    } else if (SVI_WARM_START && ctl$hyper_subsample > 0) {
      # Fixed kernel: warm-start q(u) from full-data CAVI on a random subsample.
      idx <- sort(sample.int(n, min(n, ctl$hyper_subsample)))
      st <- sparse_warm_state(X, mu0, lik, idx, k, Zr, jr, NULL, as.integer(min(ctl$maxit, 60)), ctl)
    }
    progress_restore(sec)
    direct <- svi_direct_planned(lik, n, ctl, learn_lik)
    steps <- svi_steps(n, ctl, direct)
    sec <- progress_section(0.3, if (direct) 0.5 else 1, "SVI", announce = TRUE,
                            line = "stochastic variational inference")
    # (with direct-ELBO epochs, their last pass gives the full-data ELBO)
    f <- sparse_svi(X, mu0, lk, k, Zr, jr, utils::modifyList(ctl, list(final_elbo = ctl$final_elbo && !direct)),
                    learn_hyper, learn_z, steps[1], st)
    progress_restore(sec)
    if (direct) {
      sec <- progress_section(0.5, 1, "SVI on the direct ELBO", announce = TRUE,
                              line = "stochastic variational inference on the direct ELBO")
      f <- sparse_svi_direct(X, mu0, lk, f, ctl, learn_hyper, learn_z, steps[2])
      progress_restore(sec)
    }
    if (!is.null(learn_lik)) {
      f$lik <- lk
      f$param_rounds <- if (is.null(sub)) 0L else sub$param_rounds
      f$param_converged <- if (is.null(sub)) NA else sub$param_converged
    }
    f$kernel_start <- k
    f$warm_started <- !is.null(st)
    # Without kernel steps (lr = 0) the kernel is the subsample search's result.
    if (!is.null(sub) && !(ctl$lr > 0)) f$hyper_converged <- sub$hyper_converged
    f
  }
  fit <- if (ctl$restarts > 1) {
    future_vi_restarts(fit_one, kernel, ctl$restarts, seeds, ctl$parallel,
                       score = function(f) if (full) f$elbo[length(f$elbo)] else f$elbo_full,
                       indexed = TRUE)
  } else {
    fit_one(kernel, 1L)
  }
  if (!is.null(fit$lik)) lik <- fit$lik
  out <- list(kernel = fit$kernel, X = X, y = lik$y, trials = lik$trials, lik = lik, q = q,
              method = "vi", Z = fit$Z, state = fit$state[c("Lam", "h")],
              elbo = fit$elbo, elbo_full = if (full) fit$elbo[length(fit$elbo)] else fit$elbo_full,
              converged = fit$converged, hyper_converged = fit$hyper_converged,
              svi_trend = fit$svi_trend, draws = NULL, jitter = fit$jitter,
              jitter_increased = isTRUE(fit$jitter > jitter * (1 + 1e-8)), mean0 = mu0, sparse = list(
                batch_size = if (full) n else ctl$batch_size, full_batch = full,
                hyper_evals = fit$hyper_evals, levels = fit$levels, epochs = fit$epochs,
                iterations = fit$iterations,
                hyper_start = fit$hyper_start, kernel_start = fit$kernel_start,
                warm_started = if (full) NA else isTRUE(fit$warm_started)),
              restarts = fit$restarts, control = ctl, seed = seeds,
              param_rounds = fit$param_rounds, param_converged = fit$param_converged)
  if (!is.null(fit$svi_direct)) {
    out$svi_direct <- fit$svi_direct
    out$elbo_direct <- fit$elbo_full
  }
  class(out) <- c("augp_sparse_engine", "augp_engine")
  pr <- if (!is.null(fit$marginals)) fit$marginals else
    sparse_marginals(X, mu0, lik, out$kernel, out$Z, out$jitter, out$state, ctl)
  if (!is.null(learn_lik) && !full) {
    # Minibatch fits: the parameters learned on the subsample take one more step at the
    # marginals of the final q(u) on all the data (q(u) unchanged; the ELBO rises by
    # the step's gain).
    step <- .lik_learn_params_cpp(lik, pr$mean, pr$var)
    if (isTRUE(step$gain > 0)) {
      for (nm in names(step$params)) lik[[nm]] <- as.numeric(step$params[[nm]])
      out$lik <- lik
      out$elbo_full <- out$elbo_full + step$gain
    }
  }
  # (one latent column: plain vectors; dropping dim() does not copy them)
  out$mean <- pr$mean
  out$var <- pr$var
  rm(pr)
  if (q == 1) dim(out$mean) <- dim(out$var) <- NULL
  if (own) progress_finish()
  out
}

# The ELBO at q(u) (`state`) and the marginals of f at the data (n x q), one pass.
sparse_marginals <- function(X, mu0, lik, kernel, Z, jitter, state, ctl) {
  .sparse_marginals_cpp(X, mu0, lik, as.integer(ctl$block_size), kernel_flatten(kernel), Z, jitter,
                        state[c("Lam", "h")], as.integer(ctl$threads))
}

# Threads of a fit's control (1 when it has none).
sparse_threads <- function(ctl) if (is.null(ctl$threads)) 1L else as.integer(ctl$threads)

sparse_predict_raw <- function(fit, Xnew, mu0new, chunk = 1e5) {
  nnew <- nrow(Xnew)
  q <- fit$q
  mean <- matrix(0, nnew, q)
  var <- matrix(0, nnew, q)
  spec <- kernel_flatten(fit$kernel)
  for (s in seq(1, max(nnew, 1), by = chunk)) {
    if (nnew == 0) break
    idx <- s:min(nnew, s + chunk - 1)
    r <- .sparse_predict_cpp(spec, fit$Z, fit$jitter, fit$state, Xnew[idx, , drop = FALSE],
                             sparse_mean0_rows(mu0new, idx), sparse_threads(fit$control))
    mean[idx, ] <- r$mean
    var[idx, ] <- r$var
  }
  list(mean = mean, var = var)
}

# Predictive marginals of the latent f at new inputs (nnew x q matrices for q > 1).
#' @export
augp_engine_predict.augp_sparse_engine <- function(fit, Xnew, draws = FALSE, mean0 = NULL,
                                                    ids = NULL) {
  Xnew <- kernel_as_matrix(Xnew, "Xnew")
  if (ncol(Xnew) != ncol(fit$X)) {
    stop("`Xnew` must have the same number of columns as the training inputs.", call. = FALSE)
  }
  nnew <- nrow(Xnew)
  q <- fit$q
  if (is.null(mean0)) {
    m0 <- fit$mean0
    if (any(abs(m0 - matrix(m0[1, ], nrow(m0), q, byrow = TRUE)) > 0)) {
      stop("The fit has a non-constant prior mean: supply `mean0` for the new points.", call. = FALSE)
    }
    mu0new <- matrix(m0[1, ], 1L, q)
  } else {
    mu0new <- sparse_mean0(mean0, nnew, q)
  }
  pr <- sparse_predict_raw(fit, Xnew, mu0new)
  if (q == 1) return(list(mean = as.numeric(pr$mean), var = as.numeric(pr$var), draws = NULL))
  list(mean = pr$mean, var = pr$var, draws = NULL)
}

# Full-data ELBO of a sparse fit (used by tests and benchmarks).
sparse_elbo <- function(fit) {
  o <- .sparse_cavi_cpp(fit$X, fit$mean0, fit$lik, as.integer(fit$control$block_size),
                        kernel_flatten(fit$kernel), fit$Z, fit$jitter, fit$state, 1L, 0,
                        as.integer(fit$control$threads))
  o$elbo[1]
}

# Inducing locations given to augp_fit() on the original predictor scale: drop the
# columns the front end dropped and standardise like the predictors.
sparse_front_inducing <- function(inducing, std, xnames) {
  if (is.data.frame(inducing)) inducing <- as.matrix(inducing)
  if (!is.matrix(inducing)) return(inducing)
  if (!is.numeric(inducing)) stop("`inducing` must be a count or a numeric matrix.", call. = FALSE)
  if (ncol(inducing) != length(xnames)) {
    stop(sprintf("`inducing` must have %d columns (one per predictor).", length(xnames)), call. = FALSE)
  }
  Z <- inducing[, !(xnames %in% std$dropped), drop = FALSE]
  sweep(sweep(Z, 2, std$centre, "-"), 2, std$scale, "/")
}
