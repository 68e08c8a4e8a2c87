# The inference engine behind augp(): variational (CAVI) and Gibbs inference for
# q latent GPs f_j ~ N(mean0_j, K_j) under an augmented likelihood
# (binomial-logistic, logistic-softmax, stick-breaking; see src/likelihood.h).
# Internal: the front end (augp_fit) calls augp_engine() and augp_engine_predict().
#
# Kernels: by default one kernel (K_j = K) is shared by all q latent columns. With
# control$shared_hyper = FALSE (or a list of q kernels as `kernel`) and q > 1, every
# column has its own kernel (an "augp_kernels" list of q augp_kernel objects); the
# kernel matrices then travel to C++ as a list of q matrices, the collapsed bound is
# the sum of the per-column bounds and the hyperparameter search runs on the
# concatenated log parameters. fit$kernel is then that list.
#
# Control: an augp_control object, or a partial list of its settings completed with
# augp_control()'s defaults (as_augp_control()).
#
# Shapes: with q = 1 latent column the fit's mean/var/alpha/omega are vectors and
# Gibbs draws are [draws, chains, n]; with q > 1 they are n x q matrices and draws
# are [draws, chains, n * q] (latent column j of point i at i + n * (j - 1)), where
# draws = floor((iter - warmup) / thin) is the number each chain keeps.

# Per-column kernels: a list of q augp_kernel objects (one per latent column).
new_kernel_list <- function(kernels) structure(unname(kernels), class = "augp_kernels")
is_kernel_list <- function(x) inherits(x, "augp_kernels")
kernel_replicate <- function(kernel, q) new_kernel_list(rep(list(kernel), q))

# A single kernel, or a list of q kernels (made an augp_kernels list), checked
# against the number of latent columns q and input dimension d.
engine_check_kernel <- function(kernel, q, d) {
  if (is.list(kernel) && !is_kernel(kernel) && length(kernel) && all(vapply(kernel, is_kernel, TRUE))) {
    if (length(kernel) != q) {
      stop(sprintf("`kernel`: a list of kernels needs one per latent column (%d).", q),
           call. = FALSE)
    }
    for (k in kernel) kernel_check_dims(k, d)
    return(new_kernel_list(kernel))
  }
  if (!is_kernel(kernel)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  kernel_check_dims(kernel, d)
  kernel
}

# Log parameters: one kernel's, or the per-column kernels' concatenated.
engine_get_params <- function(kernel) {
  if (!is_kernel_list(kernel)) return(kernel_get_params(kernel))
  unlist(lapply(seq_along(kernel), function(j) {
    th <- kernel_get_params(kernel[[j]])
    stats::setNames(th, paste0(names(th), "[", j, "]"))
  }))
}

engine_set_params <- function(kernel, theta) {
  if (!is_kernel_list(kernel)) return(kernel_set_params(kernel, theta))
  p <- vapply(kernel, function(k) length(kernel_get_params(k)), 1L)
  if (length(theta) != sum(p)) {
    stop(sprintf("`theta` must have %d elements.", sum(p)), call. = FALSE)
  }
  end <- cumsum(p)
  new_kernel_list(lapply(seq_along(kernel), function(j) {
    kernel_set_params(kernel[[j]], theta[(end[j] - p[j] + 1L):end[j]])
  }))
}

# The flattened kernel specs the C++ core takes: one kernel, or one per latent column.
engine_specs <- function(kernel) {
  if (is_kernel_list(kernel)) lapply(kernel, kernel_flatten) else list(kernel_flatten(kernel))
}

# Smallest jitter (`jitter` times powers of ten) for which k(X, X) + jitter I has a
# Cholesky factor (per-column kernels: the largest over the columns' matrices). The
# kernel matrices are built and factorised in C++.
engine_find_jitter <- function(kernel, X, jitter) {
  res <- .gp_find_jitter_cpp(engine_specs(kernel), X, jitter)
  if (!res$ok) {
    stop("The kernel matrix is not positive definite even with jitter ",
         format(res$jitter), ".", call. = FALSE)
  }
  res$jitter
}

# A data-driven alternative start for the lengthscales: the median pairwise
# distance in the leaf's inputs (per input for ARD kernels), used when it gives a better
# bound.
kernel_median_start <- function(kernel, X) {
  idx <- if (nrow(X) > 500) round(seq(1, nrow(X), length.out = 500)) else seq_len(nrow(X))
  Xs <- X[idx, , drop = FALSE]
  med <- function(cols) stats::median(as.numeric(stats::dist(Xs[, cols, drop = FALSE])))
  med_all <- med(seq_len(ncol(Xs)))
  med_col <- vapply(seq_len(ncol(Xs)), med, 0)
  fix <- function(v, fallback) ifelse(is.finite(v) & v > 0, v, fallback)
  kernel_map_leaves(kernel, function(k) {
    if (k$type %in% c("se", "matern")) {
      cols <- kernel_leaf_cols(k, ncol(Xs))
      k$lengthscale <- if (length(k$lengthscale) > 1) {
        fix(med_col[cols], k$lengthscale)
      } else if (length(cols) == ncol(Xs)) {
        fix(med_all, k$lengthscale)
      } else {
        fix(med(cols), k$lengthscale)
      }
    }
    k
  })
}

# Hyperparameter objective for fixed q(omega) (the ELBO maximised over q(f), up to
# terms free of K) and its gradient in the kernel's log parameters.
# kappa and omega: vectors (q = 1) or n x q matrices; mean0 as in augp_engine().
# With per-column kernels (an augp_kernels list of q kernels) the objective is the
# sum of the per-column bounds, each with its own kernel, and the gradient the
# concatenation of the per-column gradients (in the order of engine_get_params()).
# The columns' bounds are computed in parallel (`threads`; per-column kernels only).
augp_engine_elbo_grad <- function(kernel, X, kappa, omega, mean0 = 0, jitter = 1e-8,
                                  gradient = TRUE, threads = 1L) {
  kappa <- as.matrix(kappa)
  omega <- as.matrix(omega)
  storage.mode(kappa) <- storage.mode(omega) <- "double"
  if (is_kernel_list(kernel)) {
    q <- ncol(kappa)
    if (length(kernel) != q) stop("Need one kernel per latent column.", call. = FALSE)
    res <- .gp_hyper_obj_cols_cpp(lapply(kernel, kernel_flatten), X, jitter, kappa, omega,
                                  as.double(mean0), gradient, as.integer(threads))
    val <- sum(res$value)
    if (gradient) attr(val, "gradient") <- unlist(res$gradient)
    return(val)
  }
  .gp_hyper_obj_cpp(kernel_flatten(kernel), X, jitter, kappa, omega,
                    as.double(mean0), gradient)
}

# The engine likelihood list for n observations: `lik` checked, or the
# binomial-logistic likelihood of (y, trials) when lik is NULL.
engine_resolve_lik <- function(n, y, trials, lik) {
  if (is.null(lik)) {
    y <- check_numeric(y, "y")
    trials <- check_numeric(trials, "trials")
    if (length(y) != n || length(trials) != n) {
      stop("`y` and `trials` must have one element per row of `X`.", call. = FALSE)
    }
    if (any(trials < 0) || any(y < 0) || any(y > trials)) {
      stop("Need 0 <= y <= trials.", call. = FALSE)
    }
    return(engine_lik(y, trials))
  }
  if (!is.list(lik) || is.null(lik$type) || is.null(lik$q)) {
    stop("`lik` must be an engine likelihood list with `type` and `q`.", call. = FALSE)
  }
  lik$q <- as.integer(lik$q)
  if (!is.null(lik$Y) && nrow(lik$Y) != n) {
    stop("`lik$Y` must have one row per row of `X`.", call. = FALSE)
  }
  lik
}

engine_lik <- function(y, trials) {
  list(type = "binomial", q = 1L, y = as.double(y), trials = as.double(trials))
}

# The prior mean as an n x q matrix (scalar, length q, length n when q = 1, or n x q).
engine_mean0_matrix <- function(mean0, n, q) {
  mean0 <- check_numeric(mean0, "mean0")
  if (is.matrix(mean0) && nrow(mean0) == n && ncol(mean0) == q) return(mean0)
  if (length(mean0) == 1) return(matrix(mean0, n, q))
  if (q > 1 && length(mean0) == q) return(matrix(rep(mean0, each = n), n, q))
  if (length(mean0) == n * q) return(matrix(as.double(mean0), n, q))
  stop(sprintf("`mean0` must be a single number, one per latent column (%d) or an n x q matrix.",
               q), call. = FALSE)
}

# Vectors for one latent column (the binary shapes), matrices otherwise.
engine_shape <- function(M, q) if (q == 1) as.numeric(M) else M

# The kernel matrix plus jitter I in R: one matrix, or a list of one per column for
# per-column kernels (the fits build theirs in C++; this serves checks on small data).
engine_K <- function(kernel, X, jitter) {
  if (is_kernel_list(kernel)) return(lapply(kernel, function(k) engine_K(k, X, jitter)))
  X <- kernel_as_matrix(X, "X")
  kernel_check_dims(kernel, ncol(X))
  .gp_kernel_matrix_cpp(kernel_flatten(kernel), X, X, jitter)
}

# CAVI to convergence with SQUAREM extrapolation (Varadhan and Roland's squared
# extrapolation, SqS3 step length) of the variational site parameters
# p = (kappa, log omega): two plain sweeps from p0 give p1, p2; the extrapolated sites
# p0 - 2 a r + a^2 v (r = p1 - p0, v = p2 - 2 p1 + p0, a = -|r| / |v|) are kept only if
# the sweep from them does not lower the ELBO. Every sweep starts from valid sites and
# yields a valid q(f), so the recorded (accepted) ELBO trace never decreases. The loop
# runs in C++ (cavi_squarem in src/cavi.cpp; interrupts are checked every cycle) and
# returns the same list as .gp_cavi_cpp.
engine_cavi <- function(K, lik, mean0, kappa, omega, maxit, tol, threads = 1L) {
  .gp_cavi_cpp(K, lik, mean0, kappa, omega, as.integer(max(0, maxit)), tol, NA_real_,
               as.integer(threads), accelerate = TRUE)
}

# The same with K = k(X, X) + jitter I built in C++ from the kernel (one, or an
# augp_kernels list of one per latent column): the n x n matrices stay there.
# accelerate = FALSE: plain sweeps (maxit 0: the starting sites and the prior q(f)).
engine_cavi_kernel <- function(kernel, X, jitter, lik, mean0, kappa, omega, maxit, tol,
                               threads = 1L, accelerate = TRUE) {
  .gp_cavi_kernel_cpp(engine_specs(kernel), X, jitter, lik, mean0, kappa, omega,
                      as.integer(max(0, maxit)), tol, as.integer(threads), accelerate)
}

# Kernel hyperparameters by maximising the profiled ELBO
#   L*(theta) = max_q ELBO(q, theta)
# with L-BFGS-B (hyper_optimise). The evaluations run in a persistent C++ model
# (engine_model) holding X, the likelihood, the prior mean and the best CAVI state:
# each builds K at theta and runs CAVI to convergence, warm-started from the best state
# seen so far; at the CAVI fixed point the gradient of L* equals the gradient of the
# collapsed bound for the converged q(omega) (envelope theorem). For n above
# `level_min` the search runs first on nested, evenly spaced subsets of half the size
# (a cheap start: the cost is cubic in the subset size); each level starts from the
# previous optimum and the full data set only polishes it. CAVI at each evaluation
# stops at a relative ELBO change of min(tol, 1e-6): the optimum moves far less than
# its own uncertainty at tighter tolerances, which cost more sweeps per evaluation.
# hyper_converged: whether the last search run with `hyper_maxit` iterations (the
# largest level searched; the `polish` iterations on the full data are a fixed budget
# and do not count) stopped before that cap. Progress: each searched level gets a
# part of the current progress section in proportion to its cubic cost.
engine_hyper_learn <- function(X, lik, kernel, ctl, mean0, jitter, level_min = 400,
                               polish = 0) {
  path <- numeric(0)  # increasing ELBO values of the improving evaluations on all n
  n <- nrow(X)
  sizes <- n
  # A sweep costs q factorisations of the subset size m, so the smallest level
  # shrinks with q (equal cost q m^3): 400 for q = 1, 252 for q = 4, 137 for q = 25.
  level_min <- level_min / max(1, ncol(mean0))^(1 / 3)
  while (sizes[1] >= 2 * level_min) sizes <- c(ceiling(sizes[1] / 2), sizes)
  th <- engine_get_params(kernel)
  th_start <- th
  lower <- th - 8
  upper <- th + 8
  evals <- 0L
  model <- engine_model(X, lik, kernel, mean0, jitter, ctl)
  # The profiled ELBO of the kernel engine_set_params() makes of par (its log
  # parameters as the kernel object stores them, which the search returns).
  eval <- function(par) .model_dense_eval(model, unname(engine_get_params(engine_set_params(kernel, par))))
  searched <- if (length(sizes) > 1 && polish < 1) sizes[-length(sizes)] else sizes
  share <- c(0, cumsum(searched^3) / sum(searched^3))
  hyper_converged <- NA
  for (lev in seq_along(sizes)) {
    m <- sizes[lev]
    idx <- if (m < n) unique(round(seq(1, n, length.out = m))) else seq_len(n)
    # Full data after subset levels: q starts from the last subset fit's predictions,
    # then at most `polish` L-BFGS iterations polish theta (0: keep the subset optimum).
    warm <- lev == length(sizes) && length(sizes) > 1
    .model_dense_level(model, idx, warm)
    if (warm && polish < 1) break
    # The previous level's optimum can be a poor start on more data (its CAVI fit
    # worse than the starting kernel's): the search starts from the better of the two.
    sec <- progress_section(share[lev], share[lev + 1])
    opt <- hyper_optimise(eval, th, lower, upper, ctl,
                          maxit = if (warm) polish else ctl$hyper_maxit,
                          alt = if (lev > 1 && !identical(th, th_start)) th_start,
                          label = if (length(sizes) > 1) sprintf("n = %d", m) else "",
                          evals = evals)
    progress_restore(sec)
    if (!warm) hyper_converged <- opt$converged
    evals <- opt$evals
    if (m == n) path <- c(path, opt$path)
    th <- opt$par
  }
  list(kernel = engine_set_params(kernel, th), state = .model_dense_state(model), evals = evals,
       levels = sizes, path = path, hyper_converged = hyper_converged,
       bounds = list(lower = unname(lower), upper = unname(upper)))
}

# The persistent C++ model of the exact search: X, the likelihood and the prior mean
# (n x q) cross to C++ once; the kernel (one shared, or an augp_kernels list of one
# per latent column) gives the structure whose log parameters the evaluations set.
engine_model <- function(X, lik, kernel, mean0, jitter, ctl) {
  specs <- engine_specs(kernel)
  storage.mode(X) <- storage.mode(mean0) <- "double"
  .model_dense_new(X, lik, mean0, jitter, specs, as.integer(ctl$maxit), min(ctl$tol, 1e-6),
                   as.integer(ctl$threads))
}

# The hyperparameter search's stopping rule: an L-BFGS-B iteration that raises the
# ELBO by less than this many nats ends it. hyper_tol, but not below the accuracy of
# the evaluations themselves: each runs CAVI to a relative ELBO change of
# min(tol, 1e-6), so smaller gains are within the noise of the objective, and a search
# stopped by hyper_tol alone can creep along a flat ridge for many evaluations.
hyper_stop <- function(ctl, f0) {
  max(ctl$hyper_tol, min(ctl$tol, 1e-6) * abs(f0))
}

# Per-column kernels requested (shared_hyper = FALSE or a kernel list) and q > 1:
# the kernel as an augp_kernels list of q kernels; otherwise a single kernel.
engine_percol_kernel <- function(kernel, q, ctl) {
  if (q > 1 && !is_kernel_list(kernel) && !isTRUE(ctl$shared_hyper)) {
    return(kernel_replicate(kernel, q))
  }
  if (is_kernel_list(kernel) && q == 1) return(kernel[[1]])
  kernel
}

engine_vi <- function(X, lik, kernel, ctl, mean0) {
  q <- lik$q
  kernel <- engine_percol_kernel(kernel, q, ctl)
  jitter <- engine_find_jitter(kernel, X, ctl$jitter)
  learn <- ctl$learn_hyper && ctl$hyper_maxit > 0
  state <- list(kappa = NULL, omega = NULL)
  hyper_evals <- 0L
  hyper_converged <- NA
  if (learn) {
    sec <- progress_section(0, 0.9, "hyperparameter search", announce = TRUE)
    init <- engine_cavi_kernel(kernel, X, jitter, lik, mean0, NULL, NULL, 0L, ctl$tol,
                               ctl$threads, accelerate = FALSE)
    # Between the given start and the median-distance one, keep the better bound
    # (column by column for per-column kernels).
    pick <- function(k, cols) {
      alt <- kernel_median_start(k, X)
      kap <- init$kappa[, cols, drop = FALSE]
      om <- init$omega[, cols, drop = FALSE]
      m0 <- mean0[, cols, drop = FALSE]
      b_cur <- augp_engine_elbo_grad(k, X, kap, om, m0, jitter, FALSE)
      b_alt <- augp_engine_elbo_grad(alt, X, kap, om, m0, jitter, FALSE)
      if (is.finite(b_alt) && (!is.finite(b_cur) || b_alt > b_cur)) alt else k
    }
    kernel <- if (is_kernel_list(kernel)) {
      new_kernel_list(lapply(seq_len(q), function(j) pick(kernel[[j]], j)))
    } else {
      pick(kernel, seq_len(q))
    }
    hl <- engine_hyper_learn(X, lik, kernel, ctl, mean0, jitter,
                             polish = ctl$hyper_polish)
    progress_restore(sec)
    kernel <- hl$kernel
    hyper_evals <- hl$evals
    hyper_converged <- hl$hyper_converged
    if (!is.null(hl$state)) state <- hl$state
    if (identical(ctl$hyper_objective, "direct")) {
      sec <- progress_section(0.9, 0.95, "direct-ELBO ladder", announce = TRUE)
      dl <- engine_direct_ladder(X, lik, kernel, ctl, mean0, jitter, state)
      progress_restore(sec)
      if (!identical(dl$kernel, kernel)) hl$path <- numeric(0)  # another kernel's trace
      kernel <- dl$kernel
      state <- dl$state
      hyper_evals <- hyper_evals + dl$evals
    }
  }
  sec <- progress_section(if (learn) 0.9 else 0, 1, "variational updates", announce = TRUE)
  res <- engine_cavi_kernel(kernel, X, jitter, lik, mean0, state$kappa, state$omega,
                            as.integer(ctl$maxit), ctl$tol, ctl$threads)
  trace <- res$elbo
  if (learn && length(hl$path)) {
    # The search's improving ELBO values on the full data, then the final sweeps
    # (which start from the best state, so the trace stays non-decreasing).
    path <- hl$path
    trace <- c(path[path <= if (length(trace)) trace[1] else Inf], trace)
  }
  if (length(trace)) {
    progress_set(1, sprintf("%d sweeps, ELBO %.6f", length(res$elbo), trace[length(trace)]))
  }
  progress_restore(sec)
  list(kernel = kernel, mean = engine_shape(res$m, q), var = engine_shape(res$v, q),
       alpha = engine_shape(res$alpha, q), omega = engine_shape(res$omega_q, q),
       kappa = engine_shape(res$kappa, q), kl = if (length(res$elbo)) res$kl else NA_real_,
       elbo = trace, converged = isTRUE(res$converged),
       hyper_converged = hyper_converged, jitter = jitter, hyper_evals = hyper_evals,
       hyper_bounds = if (learn) hl$bounds)
}

# The direct ELBO of a variational q(f) with means m and marginal variances v (n x q)
# and KL(q(f) || p(f)) = kl (summed over the latent columns, as the CAVI sweep computes
# it): E_q[log p(y | f)] - kl with the un-augmented likelihood, the expectation under
# the Gaussian marginals of q(f) (the likelihood's expected_loglik: exact or quadrature
# where it has one, else Monte Carlo over S fixed-seed standard-normal rows, the same
# for every call so that kernels compare with common random numbers). Like the
# augmented ELBO it is a lower bound on log p(y | kernel) for the same q(f), and never
# below it: the augmented bound subtracts from E_q[log p(y | f)] the expected KL of the
# mean-field q(aux) from the exact conditional p(aux | y, f).
engine_direct_elbo <- function(lik, m, v, kl, S = 1000L) {
  m <- as.matrix(m)
  v <- as.matrix(v)
  storage.mode(m) <- storage.mode(v) <- "double"
  sum(.lik_expected_loglik_cpp(lik, m, v, direct_elbo_normals(S, ncol(m)))) - kl
}

# The S x q fixed-seed standard normals of engine_direct_elbo(), made once per (S, q)
# in the session and kept (every rung of a ladder, and every fit, reads the same ones).
direct_elbo_cache <- new.env(parent = emptyenv())
direct_elbo_normals <- function(S, q) {
  key <- paste(S, q)
  Z <- direct_elbo_cache[[key]]
  if (is.null(Z)) {
    Z <- withr::with_seed(20261123L, matrix(stats::rnorm(S * q), S, q))
    direct_elbo_cache[[key]] <- Z
  }
  Z
}

# Whether augp_control(refine = ) can apply to a variational fit of the engine
# likelihood `spec` (n observations) under control `ctl`: whether the likelihood
# provides the expected derivatives of log p(y | f) (asked of its first observation at
# zero moments). NULL when it can, else the reason (an error message naming the
# setting).
refine_unavailable <- function(spec, n, inducing, ctl) {
  q <- as.integer(spec$q)
  z1 <- matrix(0, 1L, q)
  d <- tryCatch(.lik_expected_derivs_cpp(sparse_lik_subset(spec, 1L), z1, z1, z1),
                error = function(e) .lik_expected_derivs_cpp(spec, matrix(0, n, q), matrix(0, n, q), z1))
  if (is.null(d)) {
    return(sprintf(paste0("`control$refine`: the %s likelihood does not provide the expected ",
                          "derivatives the refinement of q(f) needs; use refine = FALSE."),
                   spec$type))
  }
  NULL
}

# The refinement rounds of a variational fit under control `ctl`: an explicit number
# of rounds must be available (an error naming the setting otherwise); "auto" gives
# REFINE_AUTO_ROUNDS where available, else 0. Returns list(rounds, auto).
refine_plan <- function(spec, n, inducing, ctl) {
  auto <- identical(ctl$refine, "auto")
  if (!auto && ctl$refine == 0L) return(list(rounds = 0L, auto = FALSE))
  why <- refine_unavailable(spec, n, inducing, ctl)
  if (!is.null(why)) {
    if (auto) return(list(rounds = 0L, auto = TRUE))
    stop(why, call. = FALSE)
  }
  # Minibatch (SVI) fits refine inside the sparse engine (svi_direct_planned()).
  if (!is.null(inducing) && !sparse_full_batch(ctl, n)) return(list(rounds = 0L, auto = auto))
  list(rounds = if (auto) REFINE_AUTO_ROUNDS else as.integer(ctl$refine), auto = auto)
}

# refine = "auto": the rounds, and the smallest gap (nats per observation) between the
# direct ELBO of the coordinate-ascent q(f) and the augmented bound at which they run.
# The gap says how loose the augmented bound is at the fit: where the augmentation is
# nearly tight (Polya-Gamma for the logistic link) the coordinate-ascent q(f) is close to
# the direct ELBO's optimum and the refinement gains next to nothing, while the
# logistic-softmax augmentation leaves gaps an order of magnitude above the threshold.
REFINE_AUTO_ROUNDS <- 60L
REFINE_AUTO_GAP <- 0.02

# The variational engine fit `eng` refined as planned (refine_plan()): with an explicit
# number of rounds always; with "auto" only when the direct ELBO of its q(f) exceeds its
# augmented ELBO by more than REFINE_AUTO_GAP per observation (eng$aug_gap records
# that gap either way).
engine_refine_planned <- function(eng, plan, ctl) {
  if (plan$rounds == 0L) return(eng)
  ctl$refine <- plan$rounds
  if (plan$auto) {
    gap <- (engine_direct_now(eng, ctl) - eng$elbo[length(eng$elbo)]) / nrow(eng$X)
    eng$aug_gap <- gap
    if (!is.finite(gap) || gap <= REFINE_AUTO_GAP) return(eng)
  }
  eng <- engine_refine(eng, ctl)
  eng$refine$auto <- plan$auto
  eng
}

# The direct ELBO E_q[log p(y | f)] - KL of a variational engine fit's q(f) as it
# stands: from its marginals and KL for the exact GP; by a refinement of no rounds
# (one pass over the data) for a sparse one.
engine_direct_now <- function(eng, ctl, S = 1000L) {
  if (inherits(eng, "augp_sparse_engine")) {
    ctl$refine <- 0L
    return(engine_refine_sparse(eng, ctl, S)$elbo_direct)
  }
  engine_direct_elbo(eng$lik, eng$mean, eng$var, eng$kl, S)
}

# The first round's step of the refinement (later rounds: src/refine_step.h).
REFINE_STEP <- 0.5

# augp_control(refine = ) on a variational exact-GP engine fit `eng`: q(f) refined by
# natural-gradient steps on the direct ELBO at the fit's kernel and likelihood
# (src/cavi.cpp, cvi_refine), the expectations over the direct ELBO's fixed-seed draws.
# The fit's mean, var, alpha (K^-1 (m - mu0)), omega (site precisions), kappa and kl
# become the refined q(f)'s, so prediction and the other methods use it unchanged.
# elbo_direct: the direct ELBO of the refined q(f) (elbo() reports it);
# refine: list(rounds accepted, direct ELBO trace from the CAVI q(f) on, cap: the rounds
# allowed). The augmented trace `elbo` stays that of the CAVI fit (the bound that fit
# maximised).
engine_refine <- function(eng, ctl, S = 1000L) {
  if (inherits(eng, "augp_sparse_engine")) return(engine_refine_sparse(eng, ctl, S))
  q <- eng$q
  n <- nrow(eng$X)
  mat <- function(x) {
    x <- matrix(as.double(x), n, q)
    x
  }
  res <- refine_exact(eng$kernel, eng$X, eng$jitter, eng$lik, engine_mean0_matrix(eng$mean0, n, q),
                      mat(eng$mean), mat(eng$alpha), mat(eng$omega), ctl$refine, ctl, S)
  eng <- engine_take_q(eng, res, res$omega, q)
  eng$elbo_direct <- res$direct[length(res$direct)]
  eng$refine <- list(rounds = res$rounds, direct = res$direct, cap = as.integer(ctl$refine))
  eng
}

# engine_refine() for a full-batch sparse engine fit: q(u) refined by natural-gradient
# steps on the direct ELBO sum_i E_q[log p(y_i | f_i)] - KL(q(u) || p(u)) at the fit's
# kernel, inducing points and likelihood (src/sparse.cpp, sparse_cvi_refine), over the
# direct ELBO's fixed-seed draws. The fit's state (q(u)) and the marginals mean, var at
# the data become the refined ones; elbo_direct and refine as for the exact GP.
engine_refine_sparse <- function(eng, ctl, S = 1000L) {
  q <- eng$q
  n <- nrow(eng$X)
  res <- refine_sparse(eng$X, sparse_mean0(eng$mean0, n, q), eng$lik, eng$kernel, eng$Z, eng$jitter,
                       eng$state, ctl$refine, ctl, S)
  eng$state <- res$state[c("Lam", "h")]
  eng$mean <- res$mean
  eng$var <- res$var
  if (q == 1) dim(eng$mean) <- dim(eng$var) <- NULL
  eng$elbo_direct <- res$direct[length(res$direct)]
  eng$refine <- list(rounds = res$rounds, direct = res$direct, cap = as.integer(ctl$refine))
  eng
}

# The refinement's C++ passes from a coordinate-ascent q(f) (exact: its mean m, sites
# alpha and precisions omega) or q(u) (sparse: its state), `rounds` rounds at most, over
# the direct ELBO's S fixed-seed draws per point.
refine_exact <- function(kernel, X, jitter, lik, mean0, m, alpha, omega, rounds, ctl, S = 1000L) {
  .gp_cvi_kernel_cpp(engine_specs(kernel), X, jitter, lik, mean0, m, alpha, omega,
                     direct_elbo_normals(S, lik$q), as.integer(rounds), REFINE_STEP, ctl$tol,
                     as.integer(ctl$threads))
}
refine_sparse <- function(X, mu0, lik, kernel, Z, jitter, state, rounds, ctl, S = 1000L) {
  .sparse_refine_cpp(X, mu0, lik, as.integer(ctl$block_size), kernel_flatten(kernel), Z, jitter,
                     state, direct_elbo_normals(S, lik$q), as.integer(rounds), REFINE_STEP,
                     ctl$tol, sparse_threads(ctl))
}

# Kernel selection by the direct ELBO (control hyper_objective = "direct"): from the
# augmented-ELBO optimum `kernel` (CAVI state `state`: its sites kappa, omega), CAVI and
# the direct ELBO along a ladder of kernels.
# 1. Along the near-linear ridge: every lengthscale multiplied by 2^-k and every
#    variance by 4^-k, k = 1..5. A stationary kernel of long lengthscale l and variance
#    v is close to a linear kernel of slope variance v / l^2, so these rungs keep that
#    linear part and add curvature.
# 2. Every lengthscale multiplied by 2^-k, k = 1..4, at the best variances.
# 3. At the best lengthscales, every variance multiplied by 2, 4 (while that improves),
#    and by 1/2, 1/4 if doubling did not improve.
# Each climb stops at the first rung below the best so far. The augmented bound's gap
# to log p(y | kernel) grows with the kernel's flexibility, so its optimum leans to long
# lengthscales and, where it ends on the ridge, to very large variances; the ladder
# walks from there towards shorter ones. Each rung's CAVI starts from the sites of the
# best rung so far and stops at a relative ELBO change of `rung_tol`: the direct ELBO
# is a lower bound on log p(y | kernel) for any Gaussian q(f) the sites define,
# converged or not, so a looser tolerance only lowers the rung's value a little (the
# final fit then converges to the control's tol). When the fit is to be refined, each
# rung is scored after ladder_refine_rounds() rounds of the refinement from its CAVI
# fit (the rungs still start from CAVI states). Kernels without lengthscale or variance
# parameters skip those rungs. Returns list(kernel, state, evals, values): the kernel
# of the highest direct ELBO, its sites, the number of rungs and their direct ELBO
# values.
engine_direct_ladder <- function(X, lik, kernel, ctl, mean0, jitter, state, rung_tol = 1e-4) {
  rounds <- ladder_refine_rounds(lik, nrow(X), ctl)
  rung <- function(k, from) {
    res <- tryCatch(
      engine_cavi_kernel(k, X, jitter, lik, mean0, from$kappa, from$omega,
                         as.integer(ctl$maxit), max(min(ctl$tol, 1e-6), rung_tol), ctl$threads),
      error = function(e) NULL)
    if (is.null(res) || !length(res$elbo)) return(list(value = -Inf, state = NULL))
    value <- engine_direct_elbo(lik, res$m, res$v, res$kl)
    if (rounds > 0L) {
      rf <- tryCatch(refine_exact(k, X, jitter, lik, mean0, res$m, res$alpha, res$omega_q, rounds, ctl),
                     error = function(e) NULL)
      if (!is.null(rf) && length(rf$direct)) value <- max(value, rf$direct[length(rf$direct)])
    }
    list(value = value, state = list(kappa = res$kappa, omega = res$omega))
  }
  direct_ladder(kernel, state, rung)
}

# The refinement rounds by which each ladder rung is scored (0: the direct ELBO of the
# coordinate-ascent q(f) itself) when the fit is to be refined. Where the augmented bound
# is loose, the coordinate-ascent q(f) of a flexible kernel is far from the best q(f) of
# that kernel (the refinement gains hundreds of nats more on it than on a near-linear
# one), so unrefined rungs would rank kernels by how loose the bound is at each; a few
# rounds put them in the order of the refined fits.
LADDER_REFINE_ROUNDS <- 5L
ladder_refine_rounds <- function(lik, n, ctl) {
  plan <- tryCatch(refine_plan(lik, n, NULL, ctl), error = function(e) list(rounds = 0L))
  as.integer(min(LADDER_REFINE_ROUNDS, plan$rounds))
}

# The ladder itself, for any engine: rung(kernel, from) fits q at `kernel` starting from
# the state `from` (the best rung's so far) and returns list(value = its direct ELBO,
# state). Returns list(kernel, state, evals, values) as engine_direct_ladder().
direct_ladder <- function(kernel, state, rung) {
  th0 <- engine_get_params(kernel)
  is_ls <- grepl("lengthscale", names(th0), fixed = TRUE)
  is_var <- grepl("variance", names(th0), fixed = TRUE)
  values <- numeric(0)
  run <- function(th, from) {
    r <- rung(engine_set_params(kernel, th), from)
    val <- if (is.finite(r$value)) r$value else -Inf
    values <<- c(values, val)
    list(value = val, th = th, state = r$state)
  }
  best <- run(th0, state)
  if (!is.finite(best$value)) {
    return(list(kernel = kernel, state = state, evals = length(values), values = values))
  }
  # Rungs th0 + steps[i] * direction until one falls below the best; TRUE if any improved.
  climb <- function(direction, steps) {
    base <- best$th
    for (st in steps) {
      cur <- run(base + st * direction, best$state)
      if (!(cur$value > best$value)) return(!identical(base, best$th))
      best <<- cur
    }
    TRUE
  }
  if (any(is_ls) && any(is_var)) climb(-log(2) * (is_ls + 2 * is_var), 1:5)
  if (any(is_ls)) climb(-log(2) * is_ls, 1:4)
  if (any(is_var) && !climb(log(2) * is_var, 1:2)) climb(-log(2) * is_var, 1:2)
  list(kernel = engine_set_params(kernel, best$th), state = best$state, evals = length(values),
       values = values)
}

# Run Gibbs chains `ids` (0-based stream indices out of n_streams) with a fixed
# kernel (one, or an augp_kernels list; K = k(X, X) is built in C++); the same seeds
# and ids give the same draws however the chains are split. init_sd NULL: the prior
# standard deviations. Progress (R/progress.R): the C++ loop calls back between chunks
# of iterations when a reporter runs; the draws do not depend on it.
# hyper: NULL, or the sampler's hyperparameter settings (see .gp_gibbs_cpp).
# lik_prior: NULL, or the sampled likelihood parameters' priors (lik_prior_table()).
# reference: NULL, or list(mean, prec) (n x q each), the variational fit's Gaussian
# approximation of the posterior (means and site precisions at `kernel`), which the
# likelihood's Gibbs move may use as a fixed reference (see .gp_gibbs_cpp).
engine_gibbs_chains <- function(kernel, X, lik, mean0, init_mean, init_sd, ctl, seeds, ids,
                                n_streams, jitter, hyper = NULL, lik_prior = NULL,
                                reference = NULL) {
  lp <- if (!is.null(lik_prior)) {
    list(name = lik_prior$name, index = as.integer(lik_prior$index),
         family = as.double(lik_prior$code), a = as.double(lik_prior$a), b = as.double(lik_prior$b),
         location = if (is.null(lik_prior$location)) rep(FALSE, nrow(lik_prior)) else
           as.logical(lik_prior$location))
  }
  .gp_gibbs_cpp(engine_specs(kernel), X, lik, mean0, init_mean, init_sd,
                as.integer(ctl$warmup), control_kept_draws(ctl), as.integer(ctl$thin),
                as.integer(ids), as.integer(n_streams), seeds, as.integer(ctl$threads),
                jitter, progress_gibbs_callback(), hyper, lp, reference)
}

# Spread (log scale) of the chains' starting kernel log parameters around the
# variational fit's, so that split R-hat can see chains that have not mixed.
HYPER_INIT_SD <- 0.3

# Metropolis-Hastings steps for the kernel hyperparameters per Gibbs sweep. A step
# factors B = I + W^1/2 K W^1/2 at the current hyperparameters (the auxiliaries changed;
# the same factor serves the draw of f when nothing is accepted), B at its proposal and,
# after warmup, B at a second, delayed-rejection proposal when the first is rejected,
# and K at an accepted proposal (the draw of f needs a square root of K): between 2 and
# 4 factorisations of the n x n matrix per step (src/hyper_sampler.h). The second stage
# gives most of what a second full step would add to the effective sample size per
# sweep, for fewer factorisations. Blocks with at least five sampled parameters (one
# lengthscale per input) take an HMC trajectory per step instead: B at the current
# hyperparameters, B at each leapfrog position (with B^-1 for the gradient, two
# triangular passes of the same order of work) and K when the end point is accepted.
# A kernel with a sampled overall variance v (K = v C + jitter I, the jitter absolute)
# adds, for the non-centred moves of v (joint_scale_move and block_scale_move in
# src/param_sampler.h), an eigendecomposition of C when its other parameters changed
# since the last one, and the factor of K after v moved.
HYPER_MOVES <- 1L

# Passes per sweep of the likelihood's parameter flow (a map of the latent values
# with one sampled parameter that leaves the likelihood unchanged, e.g. the maximal rate of
# poisson_logistic() against f at fixed rates, moved with the kernel variance;
# param_flow_move in src/param_sampler.h), when the likelihood has one and its parameter
# is sampled; 0: off. The option augmentedGP.flow_moves sets the passes. Off by default:
# with the joint gradient move below (HMC_STEPS) it adds nothing measurable on the count
# sets benchmarked (bench/counts/results_poisson.md). The kernel variance stays out of the
# move by default (FLOW_VARIANCE; the option augmentedGP.flow_variance = TRUE puts it in):
# with the variance in it a chain on over-dispersed counts (InsectSprays) can run off to
# variances at which the latent values overflow the auxiliary draws.
FLOW_MOVES <- 0L
FLOW_VARIANCE <- FALSE

# Leapfrog steps per sweep of the joint gradient move (HMC) of the whitened latent values and
# the likelihood's sampled positive parameters, of the un-augmented posterior at the current
# kernel (src/latent_hmc.h), when the likelihood gives the gradients (poisson_logistic(),
# negative_binomial());
# 0: off. The option augmentedGP.hmc_steps sets it. Cost per step: two products with the
# factor of K and two with the adapted metric (O(n^2)), no factorisation.
HMC_STEPS <- 32L

# The Gaussian approximation of the posterior that a likelihood's Gibbs move takes as
# its fixed reference (likelihood spec field gibbs_reference = TRUE): the variational
# fit `vi` (engine_vi()) refined as a variational fit under `ctl` would be
# (refine_plan(), engine_refine_planned(): by default where the augmented bound is
# loose). Where the augmented bound is loose the coordinate-ascent q(f) is a poor
# Gaussian fit of the un-augmented posterior (logistic-softmax at a low prior mean: its
# means miss the posterior's and its marginal variances are several times too small),
# while the refined q(f) maximises the direct ELBO. Returns a list with the
# approximation's mean and site precisions omega (n x q); `vi` itself when there is
# nothing to refine or the refinement fails. The chains still start from `vi`.
engine_reference_q <- function(vi, X, lik, ctl, mean0) {
  plan <- tryCatch(refine_plan(lik, nrow(X), NULL, ctl), error = function(e) list(rounds = 0L))
  if (plan$rounds == 0L) return(vi)
  eng <- c(vi, list(X = X, lik = lik, mean0 = mean0, q = lik$q))
  tryCatch(engine_refine_planned(eng, plan, ctl), error = function(e) vi)
}

# Gibbs chains. With ctl$sample_hyper the kernel hyperparameters are sampled too, under
# `prior` (an augp_prior or NULL for the defaults; its attribute "latent_scale" is the
# unit of the sd prior): the result then also has theta (the draws of the log
# parameters, [iterations, chains, parameters] named as engine_get_params()), accept
# (acceptance rates, chains x blocks), chol_per_sweep (Cholesky factorisations of n x n
# matrices per sweep, warmup included, one per chain), eig_per_sweep (eigendecompositions
# of n x n matrices per sweep, for the moves of the kernel variances) and prior_table
# (hyper_prior_table()); its kernel
# is the one at the posterior medians of the log parameters.
# With ctl$sample_hyper and attr(prior, "lik_prior") (lik_prior_table()), the likelihood's
# parameters are sampled too: lik_draws holds their draws [iterations, chains, elements]
# (named by the table's labels) and lik_prior the table; the returned likelihood list
# `lik` has the posterior medians as its parameter values.
engine_gibbs <- function(X, lik, kernel, ctl, seed, mean0, prior = NULL) {
  seeds <- new_seed(seed)
  q <- lik$q
  kernel <- engine_percol_kernel(kernel, q, ctl)
  vi <- NULL
  # The variational fit gives the chains' starts and, for a likelihood whose moves take
  # a fixed reference (gibbs_reference), that reference: it is made at a fixed kernel
  # too (learn_hyper = FALSE), where it is the only variational fit.
  if (ctl$learn_hyper || isTRUE(lik$gibbs_reference)) {
    sec <- progress_section(0, 0.2)
    vi <- engine_vi(X, lik, kernel, ctl, mean0)
    progress_restore(sec)
    kernel <- vi$kernel
  }
  n <- nrow(X)
  reference <- NULL
  if (!is.null(vi)) {
    init_mean <- matrix(vi$mean, n, q)
    init_sd <- matrix(sqrt(pmax(vi$var, 0)), n, q)
    if (!is.null(vi$omega)) {
      rq <- if (isTRUE(lik$gibbs_reference)) engine_reference_q(vi, X, lik, ctl, mean0) else vi
      reference <- list(mean = matrix(rq$mean, n, q), prec = matrix(rq$omega, n, q))
    }
  } else {
    init_mean <- mean0
    init_sd <- NULL  # the prior standard deviations
  }
  jitter <- if (is.null(vi)) ctl$jitter else max(ctl$jitter, vi$jitter)
  sec <- progress_section(if (is.null(vi)) 0 else 0.2, 1, "Gibbs", announce = TRUE,
                          line = sprintf("Gibbs sampling, %d chain(s) x %d iterations",
                                         ctl$chains, ctl$iter))
  hyper <- ptab <- NULL
  if (isTRUE(ctl$sample_hyper)) {
    ls <- attr(prior, "latent_scale")
    ptab <- hyper_prior_table(kernel, prior, X, if (is.null(ls)) 1 else ls)
    hyper <- list(prior = hyper_prior_matrix(ptab), init_sd = HYPER_INIT_SD,
                  moves = HYPER_MOVES,
                  flow_moves = as.integer(getOption("augmentedGP.flow_moves", FLOW_MOVES)),
                  flow_variance = isTRUE(getOption("augmentedGP.flow_variance", FLOW_VARIANCE)),
                  hmc_steps = as.integer(getOption("augmentedGP.hmc_steps", HMC_STEPS)))
  }
  lik_prior <- if (isTRUE(ctl$sample_hyper)) attr(prior, "lik_prior")
  res <- future_gibbs_chains(function(ids) {
    cc <- ctl
    if (ctl$parallel == "future") cc$threads <- 1L
    engine_gibbs_chains(kernel, X, lik, mean0, init_mean, init_sd, cc, seeds, ids, ctl$chains,
                        jitter, hyper, lik_prior, reference)
  }, ctl$chains, ctl$parallel)
  progress_restore(sec)
  lik_draws <- NULL
  if (!is.null(lik_prior)) {
    lik_draws <- res$lik_params
    dimnames(lik_draws) <- list(NULL, NULL, lik_prior$label)
    med <- apply(lik_draws, 3, stats::median)
    for (nm in unique(lik_prior$name)) {
      k <- lik_prior$name == nm
      lik[[nm]][lik_prior$index[k]] <- med[k]
    }
  }
  draws <- res$draws
  theta <- NULL
  if (!is.null(hyper)) {
    theta <- res$theta
    dimnames(theta) <- list(NULL, NULL, ptab$name)
    kernel <- engine_set_params(kernel, apply(theta, 3, stats::median))
  }
  # means and variances over all draws of every chain, one latent value at a time (no
  # copy of the draws)
  mean <- colMeans(draws, dims = 2)
  var <- if (prod(dim(draws)[1:2]) > 1) {
    vapply(seq_len(n * q), function(k) stats::var(as.vector(draws[, , k])), 0)
  } else {
    rep(NA_real_, n * q)
  }
  list(kernel = kernel, draws = draws,
       mean = engine_shape(matrix(mean, n, q), q), var = engine_shape(matrix(var, n, q), q),
       elbo = if (is.null(vi)) numeric(0) else vi$elbo,
       converged = if (is.null(vi)) TRUE else vi$converged,
       hyper_converged = if (is.null(vi)) NA else vi$hyper_converged,
       jitter = max(res$jitter, if (is.null(vi)) 0 else vi$jitter), seed = seeds,
       theta = theta, accept = res$accept, chol_per_sweep = res$chol_per_sweep,
       eig_per_sweep = res$eig_per_sweep,
       prior_table = ptab, lik = lik, lik_draws = lik_draws, lik_prior = lik_prior,
       gradient_move = if (!is.null(res$grad_eps)) {
         # per chain: the gradient move's final step size, mean acceptance and adapted
         # metric's variances (src/gradient_move.h; step size 0 and no variances without it)
         list(step_size = res$grad_eps, accept = res$grad_accept, metric = res$grad_metric)
       })
}

# Fit the latent GP(s). `lik`: an engine likelihood list (type, q, data); without
# it, the binomial-logistic likelihood of (y, trials). See the notes at the top.
augp_engine <- function(X, y = NULL, trials = NULL, kernel, method = c("vi", "gibbs"),
                        control = list(), seed = NULL, mean0 = 0, lik = NULL, prior = NULL) {
  method <- match.arg(method)
  X <- kernel_as_matrix(X, "X")
  n <- nrow(X)
  lik <- engine_resolve_lik(n, y, trials, lik)
  q <- lik$q
  kernel <- engine_check_kernel(kernel, q, ncol(X))
  mean0_in <- mean0
  mean0 <- engine_mean0_matrix(mean0, n, q)
  ctl <- as_augp_control(control)
  # Progress of a direct call (run_engine() starts the reporter of a front-end fit).
  own <- progress_begin(ctl$verbose, sprintf("augp engine: %s on %d observations", method, n))
  if (own) on.exit(progress_close(), add = TRUE)
  fit <- if (method == "vi" && ctl$restarts > 1) {
    future_vi_restarts(function(k) engine_vi(X, lik, k, ctl, mean0), kernel, ctl$restarts,
                       new_seed(seed), ctl$parallel)
  } else if (method == "vi") {
    engine_vi(X, lik, kernel, ctl, mean0)
  } else {
    engine_gibbs(X, lik, kernel, ctl, seed, mean0, prior)
  }
  out <- list(kernel = fit$kernel, X = X, y = y, trials = trials, lik = lik, q = q,
              method = method,
              mean = fit$mean, var = fit$var, elbo = fit$elbo, converged = fit$converged,
              hyper_converged = fit$hyper_converged, draws = if (method == "gibbs") fit$draws else NULL,
              jitter = fit$jitter, jitter_increased = fit$jitter > ctl$jitter,
              mean0 = if (q == 1 && length(mean0_in) %in% c(1, n)) as.numeric(mean0_in) else mean0,
              alpha = fit$alpha, omega = fit$omega, kl = fit$kl, control = ctl,
              hyper_evals = fit$hyper_evals, shared_hyper = !is_kernel_list(fit$kernel),
              theta = fit$theta, accept = fit$accept, chol_per_sweep = fit$chol_per_sweep,
              eig_per_sweep = fit$eig_per_sweep,
              prior_table = fit$prior_table,
              lik_draws = fit$lik_draws, lik_prior = fit$lik_prior, hyper_bounds = fit$hyper_bounds,
              gradient_move = fit$gradient_move)
  if (!is.null(fit$lik_draws)) out$lik <- fit$lik
  if (own) progress_finish()
  structure(out, class = "augp_engine")
}

# Prior means at new points as an nnew x q matrix: from `mean0` if given, else
# from the fit's prior mean when it is constant in each column.
engine_mean0_new <- function(fit, nnew, mean0) {
  q <- if (is.null(fit$q)) 1L else fit$q
  if (!is.null(mean0)) {
    mean0 <- check_numeric(mean0, "mean0")
    if (length(mean0) == q && q > 1) return(matrix(rep(mean0, each = nnew), nnew, q))
    if (length(mean0) %in% c(1, nnew * q)) return(matrix(rep_len(mean0, nnew * q), nnew, q))
    stop("`mean0` must be a single number, one per latent column or one per new point.",
         call. = FALSE)
  }
  m0 <- fit$mean0
  if (length(m0) == 1) return(matrix(m0, nnew, q))
  M <- matrix(m0, ncol = q)
  const <- apply(M, 2, function(col) diff(range(col)) <= 1e-12 * max(1, abs(col)))
  if (!all(const)) {
    stop("The fit has a non-constant prior mean: supply `mean0` for the new points.",
         call. = FALSE)
  }
  matrix(rep(M[1, ], each = nnew), nnew, q)
}

#' Predictive distribution of the latent GP(s) at new inputs (internal generic)
#' @noRd
augp_engine_predict <- function(fit, Xnew, draws = FALSE, mean0 = NULL, ids = NULL) {
  UseMethod("augp_engine_predict")
}

#' @export
augp_engine_predict.default <- function(fit, Xnew, draws = FALSE, mean0 = NULL, ids = NULL) {
  stop("`fit` must be an augp_engine object.", call. = FALSE)
}

#' @export
augp_engine_predict.augp_engine <- function(fit, Xnew, draws = FALSE, mean0 = NULL, ids = NULL) {
  Xnew <- kernel_as_matrix(Xnew, "Xnew")
  if (ncol(Xnew) != ncol(fit$X)) {
    stop("`Xnew` must have the same number of columns as the training inputs.", call. = FALSE)
  }
  q <- if (is.null(fit$q)) 1L else fit$q
  n <- nrow(fit$X)
  nnew <- nrow(Xnew)
  m0new <- engine_mean0_new(fit, nnew, mean0)
  storage.mode(m0new) <- "double"
  threads <- if (is.null(fit$control$threads)) 1L else as.integer(fit$control$threads)
  specs <- engine_specs(fit$kernel)
  # The predictive maths (predict_dense in src/predict.cpp): for VI fits from the sites
  # and alpha; for Gibbs fits the conditional of f* given each posterior draw.
  if (fit$method == "vi") {
    res <- .gp_predict_cpp(specs, fit$X, Xnew, fit$jitter, m0new, FALSE,
                           matrix(as.double(fit$alpha), n, q), matrix(as.double(fit$omega), n, q),
                           NULL, 0L, NULL, NULL, threads)
    return(list(mean = engine_shape(res$mean, q), var = engine_shape(res$var, q), draws = NULL))
  }
  # Gibbs fits predict from the stored draws `ids` only (NULL: all), so a request for a
  # few draws costs a few predictions
  if (!is.null(ids)) fit <- engine_keep_draws(fit, ids)
  d <- dim(fit$draws)
  S <- d[1] * d[2]
  m0 <- matrix(as.double(fit$mean0), n, q)
  # Standard normals for the predictive draws from R's generator: S x nnew per latent
  # column, column after column.
  Z <- if (draws) stats::rnorm(S * nnew * q)
  res <- if (is.null(fit$theta)) {
    .gp_predict_cpp(specs, fit$X, Xnew, fit$jitter, m0new, TRUE, NULL, NULL,
                    fit$draws, as.integer(S), m0, Z, threads)
  } else {
    engine_predict_hyper_draws(fit, Xnew, m0new, m0, Z, threads)
  }
  out <- list(mean = engine_shape(res$mean, q), var = engine_shape(res$var, q), draws = NULL)
  if (draws) {
    out$draws <- if (q == 1) res$draws else array(res$draws, c(S, nnew, q))
  }
  out
}

# A Gibbs engine reduced to its stored draws `ids` (draw s = iteration + iterations *
# (chain - 1)), as one chain in that order: the latent draws and, when sampled, the
# kernel's log parameters.
engine_keep_draws <- function(fit, ids) {
  keep <- function(a) {
    d <- dim(a)
    array(matrix(a, d[1] * d[2], d[3])[ids, , drop = FALSE], c(length(ids), 1L, d[3]))
  }
  fit$draws <- keep(fit$draws)
  if (!is.null(fit$theta)) fit$theta <- keep(fit$theta)
  fit
}

# The predictive distribution of a Gibbs fit with sampled hyperparameters: the draws
# that share one value of the kernel's log parameters (a Metropolis step keeps the value
# when it rejects) go through the fixed-kernel prediction together, and the groups
# combine by the law of total variance: mean = sum_g S_g mean_g / S and
# var = sum_g S_g (var_g + (mean_g - mean)^2) / S, where var_g already holds the spread
# of group g's conditional means with divisor S_g. Draws (when Z is given) keep their
# positions. Returns list(mean, var, draws) as .gp_predict_cpp().
engine_predict_hyper_draws <- function(fit, Xnew, m0new, m0, Z, threads) {
  q <- if (is.null(fit$q)) 1L else fit$q
  n <- nrow(fit$X)
  nnew <- nrow(Xnew)
  d <- dim(fit$draws)
  S <- d[1] * d[2]
  flat <- matrix(fit$draws, S, n * q)
  th <- matrix(fit$theta, S, dim(fit$theta)[3])
  key <- theta_key(th)
  groups <- split(seq_len(S), factor(key, levels = unique(key)))
  Zarr <- if (!is.null(Z)) array(Z, c(S, nnew, q))
  mean <- matrix(0, nnew, q)
  second <- matrix(0, nnew, q)
  out_draws <- if (!is.null(Z)) matrix(0, S, nnew * q)
  for (idx in groups) {
    k <- engine_set_params(fit$kernel, th[idx[1], ])
    zg <- if (!is.null(Z)) as.numeric(Zarr[idx, , , drop = FALSE])
    res <- .gp_predict_cpp(engine_specs(k), fit$X, Xnew, fit$jitter, m0new, TRUE, NULL, NULL,
                           as.numeric(flat[idx, , drop = FALSE]), length(idx), m0, zg, threads)
    mg <- matrix(res$mean, nnew, q)
    vg <- matrix(res$var, nnew, q)
    w <- length(idx) / S
    mean <- mean + w * mg
    second <- second + w * (vg + mg^2)
    if (!is.null(Z)) out_draws[idx, ] <- matrix(res$draws, length(idx), nnew * q)
  }
  list(mean = mean, var = pmax(second - mean^2, 0),
       draws = if (!is.null(Z)) (if (q == 1) out_draws else as.numeric(out_draws)))
}

# The Gaussian q(f) of a C++ result (its mean m, variances v, alpha = K^-1 (m - mean0), site
# precisions `omega`, linear terms kappa and KL to the prior) into the engine state, shaped as
# the engine keeps them for q latent functions.
engine_take_q <- function(eng, res, omega, q) {
  eng$mean <- engine_shape(res$m, q)
  eng$var <- engine_shape(res$v, q)
  eng$alpha <- engine_shape(res$alpha, q)
  eng$omega <- engine_shape(omega, q)
  eng$kappa <- engine_shape(res$kappa, q)
  eng$kl <- res$kl
  eng
}
