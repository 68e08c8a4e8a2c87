# The inference engine behind augp(): variational (CAVI) and Gibbs inference for
# a GP prior f ~ N(mean0, K) with a Polya-Gamma augmented binomial likelihood.
# Internal: the front end (augp_fit) calls augp_engine() and augp_engine_predict().

engine_control_defaults <- function() {
  list(maxit = 200, tol = 1e-8, learn_hyper = TRUE, hyper_maxit = 50, hyper_tol = 1e-3,
       hyper_polish = 0,
       iter = 1000,
       warmup = 500, thin = 1, chains = 2, threads = NULL, jitter = 1e-8, verbose = FALSE)
}

engine_control <- function(control) {
  ctl <- engine_control_defaults()
  if (!is.null(control)) {
    if (!is.list(control)) stop("`control` must be a list.", call. = FALSE)
    for (nm in intersect(names(control), names(ctl))) {
      if (!is.null(control[[nm]])) ctl[[nm]] <- control[[nm]]
    }
    if ("threads" %in% names(control)) ctl$threads <- control$threads
  }
  ctl$maxit <- check_count(ctl$maxit, "control$maxit")
  ctl$hyper_maxit <- check_count(ctl$hyper_maxit, "control$hyper_maxit")
  ctl$hyper_polish <- check_count(ctl$hyper_polish, "control$hyper_polish")
  ctl$iter <- check_count(ctl$iter, "control$iter")
  ctl$warmup <- check_count(ctl$warmup, "control$warmup")
  ctl$thin <- max(1, check_count(ctl$thin, "control$thin"))
  ctl$chains <- max(1, check_count(ctl$chains, "control$chains"))
  ctl$tol <- check_positive(ctl$tol, "control$tol")
  ctl$hyper_tol <- check_positive(ctl$hyper_tol, "control$hyper_tol")
  ctl$jitter <- check_numeric(ctl$jitter, "control$jitter")
  if (length(ctl$jitter) != 1 || ctl$jitter < 0) {
    stop("`control$jitter` must be a single number >= 0.", call. = FALSE)
  }
  ctl$learn_hyper <- check_flag(ctl$learn_hyper, "control$learn_hyper")
  ctl$verbose <- check_flag(ctl$verbose, "control$verbose")
  ctl$threads <- resolve_threads(ctl$threads)
  ctl
}

# Smallest jitter (control$jitter times powers of ten) for which K + jitter I
# has a Cholesky factor.
engine_find_jitter <- function(K, jitter) {
  res <- .gp_chol_jitter_cpp(K, jitter)
  if (!res$ok) {
    stop("The kernel matrix is not positive definite even with jitter ",
         format(res$jitter), ".", call. = FALSE)
  }
  res$jitter
}

# A data-driven alternative start for the lengthscales: the median pairwise
# distance (per column for ARD kernels), used when it gives a better bound.
kernel_median_start <- function(kernel, X) {
  idx <- if (nrow(X) > 500) round(seq(1, nrow(X), length.out = 500)) else seq_len(nrow(X))
  Xs <- X[idx, , drop = FALSE]
  med_all <- stats::median(as.numeric(stats::dist(Xs)))
  med_col <- apply(Xs, 2, function(col) stats::median(as.numeric(stats::dist(col))))
  fix <- function(v, fallback) ifelse(is.finite(v) & v > 0, v, fallback)
  set <- function(k) {
    if (k$type %in% c("sum", "prod")) {
      k$k1 <- set(k$k1)
      k$k2 <- set(k$k2)
    } else if (k$type %in% c("se", "matern")) {
      k$lengthscale <- if (length(k$lengthscale) == 1) fix(med_all, k$lengthscale) else
        fix(med_col, k$lengthscale)
    }
    k
  }
  set(kernel)
}

# Hyperparameter objective for fixed q(omega) (the ELBO maximised over q(f), up to
# terms free of K) and its gradient in the kernel's log parameters.
augp_engine_elbo_grad <- function(kernel, X, kappa, omega, mean0 = 0, jitter = 1e-8,
                                  gradient = TRUE) {
  .gp_hyper_obj_cpp(kernel_flatten(kernel), X, jitter, as.double(kappa), as.double(omega),
                    as.double(mean0), gradient)
}

engine_lik <- function(y, trials) {
  list(type = "binomial", y = as.double(y), trials = as.double(trials))
}

engine_K <- function(kernel, X, jitter) {
  K <- kernel_matrix(kernel, X)
  diag(K) <- diag(K) + jitter
  K
}

# CAVI to convergence with SQUAREM extrapolation (Varadhan and Roland's squared
# extrapolation, SqS3 step length) of the variational site parameters
# p = (kappa, log omega): two plain sweeps from p0 give p1, p2; the extrapolated sites
# p0 - 2 a r + a^2 v (r = p1 - p0, v = p2 - 2 p1 + p0, a = -|r| / |v|) are kept only if
# the sweep from them does not lower the ELBO. Every sweep starts from valid sites and
# yields a valid q(f), so the recorded (accepted) ELBO trace never decreases. Returns
# the same list as .gp_cavi_cpp.
engine_cavi <- function(K, lik, mean0, kappa, omega, maxit, tol) {
  sweep1 <- function(st) {
    .gp_cavi_cpp(K, lik, mean0, st$kappa, st$omega, 1L, tol, NA_real_)
  }
  if (maxit < 1) return(.gp_cavi_cpp(K, lik, mean0, kappa, omega, 0L, tol, NA_real_))
  st <- if (is.null(kappa) || is.null(omega)) NULL else list(kappa = kappa, omega = omega)
  if (is.null(st)) {
    init <- .gp_cavi_cpp(K, lik, mean0, NULL, NULL, 0L, tol, NA_real_)
    st <- list(kappa = init$kappa, omega = init$omega)
  }
  trace <- numeric(0)
  converged <- FALSE
  last <- NULL
  done <- function(e) {
    length(trace) > 0 && abs(e - trace[length(trace)]) <= tol * abs(trace[length(trace)])
  }
  pack <- function(s) {
    pos <- s$omega > 0
    c(as.numeric(s$kappa), log(ifelse(pos, s$omega, 1)))
  }
  while (length(trace) < maxit) {
    r1 <- sweep1(st)
    e1 <- r1$elbo
    conv <- done(e1)
    trace <- c(trace, e1)
    last <- r1
    if (conv || length(trace) >= maxit) {
      converged <- conv
      break
    }
    s1 <- list(kappa = r1$kappa, omega = r1$omega)
    r2 <- sweep1(s1)
    e2 <- r2$elbo
    conv <- done(e2)
    trace <- c(trace, e2)
    last <- r2
    if (conv || length(trace) >= maxit) {
      converged <- conv
      break
    }
    s2 <- list(kappa = r2$kappa, omega = r2$omega)
    p0 <- pack(st)
    p1 <- pack(s1)
    p2 <- pack(s2)
    rr <- p1 - p0
    vv <- p2 - 2 * p1 + p0
    nv <- sqrt(sum(vv * vv))
    st <- s2
    if (nv > 0 && all(is.finite(vv))) {
      a <- min(-1, -sqrt(sum(rr * rr)) / nv)
      p3 <- p0 - 2 * a * rr + a * a * vv
      nk <- length(st$kappa)
      pos <- s2$omega > 0
      om3 <- ifelse(pos, exp(p3[nk + seq_len(nk)]), s2$omega)
      s3 <- list(kappa = array(p3[seq_len(nk)], dim(as.matrix(s2$kappa))),
                 omega = array(om3, dim(as.matrix(s2$omega))))
      if (all(is.finite(s3$kappa)) && all(is.finite(s3$omega))) {
        r3 <- tryCatch(sweep1(s3), error = function(e) NULL)
        if (!is.null(r3) && length(r3$elbo) == 1 && is.finite(r3$elbo) && r3$elbo >= e2) {
          conv <- done(r3$elbo)
          trace <- c(trace, r3$elbo)
          last <- r3
          st <- list(kappa = r3$kappa, omega = r3$omega)
          if (conv) {
            converged <- TRUE
            break
          }
        }
      }
    }
  }
  last$elbo <- trace
  last$converged <- converged
  last
}

# Kernel hyperparameters by maximising the profiled ELBO
#   L*(theta) = max_q ELBO(q, theta)
# with L-BFGS-B. Each evaluation runs CAVI to convergence at theta, warm-started
# from the best state seen so far; at the CAVI fixed point the gradient of L* equals
# the gradient of the collapsed bound for the converged q(omega) (envelope theorem),
# which one call of the collapsed bound returns. For n above `level_min` the search
# runs first on nested, evenly spaced subsets of half the size (a cheap start: the
# cost is cubic in the subset size); each level starts from the previous optimum and
# the full data set only polishes it.
engine_hyper_learn <- function(X, y, trials, kernel, ctl, mean0, jitter, level_min = 400,
                               polish = 0) {
  prev <- NULL
  path <- numeric(0)  # increasing ELBO values of the improving evaluations on all n
  n <- nrow(X)
  sizes <- n
  while (sizes[1] >= 2 * level_min) sizes <- c(ceiling(sizes[1] / 2), sizes)
  th <- kernel_get_params(kernel)
  lower <- th - 8
  upper <- th + 8
  evals <- 0L
  state <- NULL
  for (lev in seq_along(sizes)) {
    m <- sizes[lev]
    idx <- if (m < n) unique(round(seq(1, n, length.out = m))) else seq_len(n)
    Xs <- X[idx, , drop = FALSE]
    m0 <- if (length(mean0) == 1) mean0 else mean0[idx]
    lik <- engine_lik(y[idx], trials[idx])
    best <- new.env(parent = emptyenv())
    best$value <- -Inf
    best$th <- th
    if (!is.null(state) && m == n) best$state <- state
    cache <- new.env(parent = emptyenv())
    eval_at <- function(par) {
      if (identical(cache$th, par)) return(cache$v)
      k <- kernel_set_params(kernel, par)
      K <- engine_K(k, Xs, jitter)
      st <- best$state
      res <- tryCatch(engine_cavi(K, lik, m0, st$kappa, st$omega, as.integer(ctl$maxit),
                                  min(ctl$tol, 1e-8)),
                      error = function(e) NULL)
      evals <<- evals + 1L
      v <- NULL
      if (!is.null(res) && length(res$elbo)) {
        val <- res$elbo[length(res$elbo)]
        g <- attr(augp_engine_elbo_grad(k, Xs, res$kappa, res$omega, m0, jitter), "gradient")
        if (is.finite(val) && all(is.finite(g))) {
          v <- structure(val, gradient = g)
          if (val > best$value) {
            best$value <- val
            best$th <- par
            best$state <- list(kappa = res$kappa, omega = res$omega)
            best$res <- res
            if (m == n) path <<- c(path, val)
          }
        }
      }
      if (is.null(v)) v <- structure(-1e300, gradient = rep(0, length(par)))
      if (ctl$verbose) {
        message(sprintf("VI: hyperparameter search (n = %d), evaluation %d, ELBO %.6f",
                        m, evals, as.numeric(v)))
      }
      cache$th <- par
      cache$v <- v
      v
    }
    final <- lev == length(sizes)
    if (final && length(sizes) > 1) {
      # Full data: start q from the last subset fit's predictions, then polish
      # theta with at most `polish` L-BFGS iterations (0: keep the subset optimum).
      state <- engine_warm_sites(prev, X, lik, mean0, jitter)
      if (polish < 1) break
      best$state <- state
    }
    f0 <- as.numeric(eval_at(th))
    factr <- ctl$hyper_tol / (max(1, abs(f0)) * .Machine$double.eps)
    tryCatch(
      stats::optim(th, function(par) -as.numeric(eval_at(par)),
                   function(par) -attr(eval_at(par), "gradient"), method = "L-BFGS-B",
                   lower = lower, upper = upper,
                   control = list(maxit = if (final && length(sizes) > 1) polish else
                     ctl$hyper_maxit, factr = factr, pgtol = 0)),
      error = function(e) NULL)
    th <- best$th
    prev <- list(kernel = kernel_set_params(kernel, th), X = Xs, mean0 = m0, res = best$res,
                 jitter = jitter)
    if (final) state <- best$state
  }
  list(kernel = kernel_set_params(kernel, th), state = state, evals = evals,
       levels = sizes, path = path)
}

# Variational sites (kappa, E omega) on the full data from a subset fit: q(f) at the
# subset's optimum predicted at every input (VI predictive mean and variance).
engine_warm_sites <- function(prev, X, lik, mean0, jitter) {
  if (is.null(prev$res)) return(NULL)
  n <- nrow(X)
  Ks <- kernel_matrix(prev$kernel, prev$X, X)
  sw <- sqrt(pmax(as.numeric(prev$res$omega_q), 0))
  K <- engine_K(prev$kernel, prev$X, prev$jitter)
  B <- sw * K * rep(sw, each = length(sw))
  diag(B) <- diag(B) + 1
  R <- tryCatch(chol(B), error = function(e) NULL)
  if (is.null(R)) return(NULL)
  V <- backsolve(R, sw * Ks, transpose = TRUE)
  m0 <- rep_len(mean0, n)
  mu <- m0 + drop(crossprod(Ks, as.numeric(prev$res$alpha)))
  v <- pmax(kernel_diag(prev$kernel, X) + jitter - colSums(V * V), 1e-12)
  e <- .gp_lik_eval_cpp(lik, matrix(mu, n, 1), matrix(v, n, 1), matrix(mu, n, 1))
  list(kappa = e$kappa, omega = e$omega)
}

engine_vi <- function(X, y, trials, kernel, ctl, mean0) {
  lik <- engine_lik(y, trials)
  jitter <- ctl$jitter
  K <- engine_K(kernel, X, 0)
  jitter <- engine_find_jitter(K, jitter)
  diag(K) <- diag(K) + jitter
  learn <- ctl$learn_hyper && ctl$hyper_maxit > 0
  state <- list(kappa = NULL, omega = NULL)
  hyper_evals <- 0L
  if (learn) {
    init <- .gp_cavi_cpp(K, lik, mean0, NULL, NULL, 0L, ctl$tol, NA_real_)
    alt <- kernel_median_start(kernel, X)
    b_cur <- augp_engine_elbo_grad(kernel, X, init$kappa, init$omega, mean0, jitter, FALSE)
    b_alt <- augp_engine_elbo_grad(alt, X, init$kappa, init$omega, mean0, jitter, FALSE)
    if (is.finite(b_alt) && (!is.finite(b_cur) || b_alt > b_cur)) kernel <- alt
    hl <- engine_hyper_learn(X, y, trials, kernel, ctl, mean0, jitter,
                             polish = ctl$hyper_polish)
    kernel <- hl$kernel
    hyper_evals <- hl$evals
    if (!is.null(hl$state)) state <- hl$state
    K <- engine_K(kernel, X, jitter)
  }
  res <- engine_cavi(K, lik, mean0, state$kappa, state$omega, as.integer(ctl$maxit), ctl$tol)
  trace <- res$elbo
  if (learn && length(hl$path)) {
    # The search's improving ELBO values on the full data, then the final sweeps
    # (which start from the best state, so the trace stays non-decreasing).
    path <- hl$path
    trace <- c(path[path <= if (length(trace)) trace[1] else Inf], trace)
  }
  if (ctl$verbose && length(trace)) {
    message(sprintf("VI: %d sweeps, ELBO %.6f", length(trace), trace[length(trace)]))
  }
  list(kernel = kernel, mean = as.numeric(res$m), var = as.numeric(res$v),
       alpha = as.numeric(res$alpha), omega = as.numeric(res$omega_q),
       kappa = as.numeric(res$kappa), elbo = trace, converged = isTRUE(res$converged),
       jitter = jitter, hyper_evals = hyper_evals)
}

engine_gibbs <- function(X, y, trials, kernel, ctl, seed, mean0) {
  seeds <- new_seed(seed)
  vi <- NULL
  if (ctl$learn_hyper) {
    vi <- engine_vi(X, y, trials, kernel, ctl, mean0)
    kernel <- vi$kernel
  }
  n <- nrow(X)
  K <- kernel_matrix(kernel, X)
  if (!is.null(vi)) {
    init_mean <- matrix(vi$mean, n, 1)
    init_sd <- matrix(sqrt(pmax(vi$var, 0)), n, 1)
  } else {
    init_mean <- matrix(if (length(mean0) == 1) rep(mean0, n) else mean0, n, 1)
    init_sd <- matrix(sqrt(pmax(diag(K), 0)), n, 1)
  }
  res <- .gp_gibbs_cpp(K, engine_lik(y, trials), mean0, init_mean, init_sd,
                       as.integer(ctl$warmup), as.integer(ctl$iter), as.integer(ctl$thin),
                       as.integer(ctl$chains), seeds, as.integer(ctl$threads),
                       if (is.null(vi)) ctl$jitter else max(ctl$jitter, vi$jitter), ctl$verbose)
  draws <- res$draws
  flat <- matrix(draws, ctl$iter * ctl$chains, n)
  list(kernel = kernel, draws = draws,
       mean = if (ctl$iter > 0) colMeans(flat) else rep(NA_real_, n),
       var = if (ctl$iter > 1) apply(flat, 2, stats::var) else rep(NA_real_, n),
       elbo = if (is.null(vi)) numeric(0) else vi$elbo,
       converged = if (is.null(vi)) TRUE else vi$converged,
       jitter = max(res$jitter, if (is.null(vi)) 0 else vi$jitter), seed = seeds)
}

# Fit the latent GP. See the contract in the package's design notes.
augp_engine <- function(X, y, trials, kernel, method = c("vi", "gibbs"), control = list(),
                        seed = NULL, mean0 = 0) {
  method <- match.arg(method)
  X <- kernel_as_matrix(X, "X")
  n <- nrow(X)
  y <- check_numeric(y, "y")
  trials <- check_numeric(trials, "trials")
  if (length(y) != n || length(trials) != n) {
    stop("`y` and `trials` must have one element per row of `X`.", call. = FALSE)
  }
  if (any(trials < 0) || any(y < 0) || any(y > trials)) {
    stop("Need 0 <= y <= trials.", call. = FALSE)
  }
  if (!is_kernel(kernel)) stop("`kernel` must be an augp_kernel object.", call. = FALSE)
  kernel_check_dims(kernel, ncol(X))
  mean0 <- check_numeric(mean0, "mean0")
  if (!length(mean0) %in% c(1, n)) {
    stop("`mean0` must be a single number or one per row of `X`.", call. = FALSE)
  }
  ctl <- engine_control(control)
  fit <- if (method == "vi") {
    engine_vi(X, y, trials, kernel, ctl, mean0)
  } else {
    engine_gibbs(X, y, trials, kernel, ctl, seed, mean0)
  }
  out <- list(kernel = fit$kernel, X = X, y = y, trials = trials, method = method,
              mean = fit$mean, var = fit$var, elbo = fit$elbo, converged = fit$converged,
              draws = if (method == "gibbs") fit$draws else NULL,
              jitter = fit$jitter, jitter_increased = fit$jitter > ctl$jitter,
              mean0 = mean0, alpha = fit$alpha, omega = fit$omega, control = ctl,
              hyper_evals = fit$hyper_evals)
  structure(out, class = "augp_engine")
}

engine_mean0_new <- function(fit, nnew, mean0) {
  if (!is.null(mean0)) return(rep_len(check_numeric(mean0, "mean0"), nnew))
  if (length(fit$mean0) != 1) {
    stop("The fit has a non-constant prior mean: supply `mean0` for the new points.",
         call. = FALSE)
  }
  rep(fit$mean0, nnew)
}

# Predictive distribution of the latent f at new inputs.
augp_engine_predict <- function(fit, Xnew, draws = FALSE, mean0 = NULL) {
  if (!inherits(fit, "augp_engine")) stop("`fit` must be an augp_engine object.", call. = FALSE)
  Xnew <- kernel_as_matrix(Xnew, "Xnew")
  if (ncol(Xnew) != ncol(fit$X)) {
    stop("`Xnew` must have the same number of columns as the training inputs.", call. = FALSE)
  }
  nnew <- nrow(Xnew)
  m0new <- engine_mean0_new(fit, nnew, mean0)
  Ks <- kernel_matrix(fit$kernel, fit$X, Xnew)
  kss <- kernel_diag(fit$kernel, Xnew)
  if (fit$method == "vi") {
    sw <- sqrt(pmax(fit$omega, 0))
    K <- engine_K(fit$kernel, fit$X, fit$jitter)
    B <- sw * K * rep(sw, each = length(sw))
    diag(B) <- diag(B) + 1
    R <- chol(B)
    V <- backsolve(R, sw * Ks, transpose = TRUE)
    mu <- m0new + drop(crossprod(Ks, fit$alpha))
    v <- pmax(kss - colSums(V * V), 0)
    return(list(mean = mu, var = v, draws = NULL))
  }
  ch <- .gp_chol_jitter_cpp(kernel_matrix(fit$kernel, fit$X), fit$jitter)
  if (!ch$ok) stop("The kernel matrix is not positive definite.", call. = FALSE)
  R <- t(ch$L)
  A <- backsolve(R, Ks, transpose = TRUE)
  n <- nrow(fit$X)
  d <- dim(fit$draws)
  Fd <- matrix(fit$draws, d[1] * d[2], n)
  m0 <- rep_len(fit$mean0, n)
  C <- backsolve(R, t(Fd) - m0, transpose = TRUE)
  M <- crossprod(C, A) + rep(m0new, each = nrow(Fd))
  condvar <- pmax(kss - colSums(A * A), 0)
  S <- nrow(M)
  mu <- colMeans(M)
  v <- condvar + if (S > 1) apply(M, 2, stats::var) * (S - 1) / S else 0
  out <- list(mean = mu, var = v, draws = NULL)
  if (draws) {
    Cc <- kernel_matrix(fit$kernel, Xnew) - crossprod(A)
    Cc <- (Cc + t(Cc)) / 2
    jit <- engine_find_jitter(Cc, max(fit$jitter, 1e-10 * max(1, mean(diag(Cc)))))
    diag(Cc) <- diag(Cc) + jit
    Lc <- chol(Cc)
    Z <- matrix(stats::rnorm(S * nnew), S, nnew)
    out$draws <- M + Z %*% Lc
  }
  out
}
