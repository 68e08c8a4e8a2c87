# The exact GP regression fit with the Gaussian likelihood (gaussian_noise()): the
# kernel hyperparameters and the noise scale sigma are learned together by maximising
# the exact log marginal likelihood log p(y | theta, sigma) (the ELBO of the variational
# fit at its optimum). The maths, the gradient and the posterior live in C++
# (src/gaussian_exact.h): a persistent model holds the data, and each evaluation costs
# one Cholesky factorisation and the inverse from it, with no CAVI sweeps and no n x n
# derivative matrices. The posterior at the best evaluation is the fit: no further
# fit at the learned values.
#
# Search (gaussian_exact_search()), on log parameters: the kernel's, then log sigma,
# by the dense quasi-Newton search hyper_bfgs() (R/hyper.R).
# * Levels: for n >= 2 GAUSS_LEVEL_MIN the search runs first on nested, evenly spaced
#   subsets of about half the size each (from GAUSS_LEVEL_MIN to 2 GAUSS_LEVEL_MIN rows
#   upwards), each starting from the previous optimum with the previous inverse-Hessian
#   estimate scaled by the ratio of the sizes (the log marginal likelihood is a sum over
#   the rows, so its curvature grows in proportion); an evaluation costs O(m^3) in the
#   subset size m. The full data then polish the last optimum with a few quasi-Newton
#   iterations, fewer as the data grow (gaussian_polish_iter(): 8 at n = 1000, 1 at
#   n = 2000; or hyper_polish, if larger): with the carried curvature the first step is
#   close to a Newton step. A subset level stops once a full quasi-Newton step gains
#   less than GAUSS_SUBSET_TOL nats per 1000 rows: it only starts the next level, whose
#   optimum lies further away than that.
# * Iterations: each level other than the polish allows GAUSS_MAXIT_FACTOR x hyper_maxit
#   iterations: an evaluation is exact and cheap next to a CAVI fit, and searches with
#   one lengthscale per input need more iterations than isotropic ones.
# * ARD: kernel leaves marked in `ard` (squared exponential or Matern leaves whose one
#   lengthscale was left at its default, see gaussian_ard_leaves()) are searched first
#   with their one lengthscale (isotropic), then, on the first level, with one
#   lengthscale per input starting from the isotropic optimum (the same kernel). The ARD
#   search maximises log p(y | theta, sigma) plus a log-normal prior on each ARD
#   lengthscale, centred at the isotropic optimum l0 with sd GAUSS_ARD_SD on the log
#   scale (a shrinkage towards the isotropic kernel: ARD adds d - 1 free parameters,
#   and their maximum-likelihood values overfit small data), and bounds each at
#   GAUSS_ARD_RANGE times the range of its input (beyond it the kernel is nearly flat
#   along that input, and the likelihood drifts there without changing the fit). With
#   ard_mode "auto" the ARD kernel is kept when its leave-one-out log predictive density
#   (free from alpha and diag(A^-1)) beats the isotropic one's; TRUE always keeps it.
#   Later levels and the polish search the kernel kept, with the same prior.
# * Bounds: each kernel log parameter within +-8 of its starting value (as the CAVI
#   searches); log sigma within [log sd(y) - 9, log sd(y) + 3].
GAUSS_LEVEL_MIN <- 400
GAUSS_MAXIT_FACTOR <- 5L
GAUSS_POLISH_ITER <- 8L
GAUSS_POLISH_N <- 1000
GAUSS_SUBSET_TOL <- 0.1
GAUSS_ARD_SD <- 1
GAUSS_ARD_RANGE <- 2

# The leaves (left to right) of the user's kernel that the ARD search may give one
# lengthscale per input: squared exponential and Matern leaves with one lengthscale left
# at its default (lengthscale = NULL, one standard deviation of each input).
gaussian_ard_leaves <- function(kernel) {
  if (kernel$type %in% c("sum", "prod")) {
    return(c(gaussian_ard_leaves(kernel$k1), gaussian_ard_leaves(kernel$k2)))
  }
  kernel$type %in% c("se", "matern") && length(kernel$lengthscale) == 1L &&
    "lengthscale" %in% kernel$sd_units && length(kernel$dims) != 1L
}

# The kernel with the leaves marked in `leaves` (left to right) given one lengthscale
# per input (d of them), each at the leaf's current value.
kernel_expand_ard <- function(kernel, d, leaves) {
  pos <- 0L
  expand <- function(k) {
    if (k$type %in% c("sum", "prod")) {
      k$k1 <- expand(k$k1)
      k$k2 <- expand(k$k2)
      return(k)
    }
    pos <<- pos + 1L
    if (isTRUE(leaves[pos]) && length(k$lengthscale) == 1L) {
      k$lengthscale <- rep(k$lengthscale, length(kernel_leaf_cols(k, d)))
    }
    k
  }
  expand(kernel)
}

# Quasi-Newton iterations of the polish on all n rows: GAUSS_POLISH_ITER at n =
# GAUSS_POLISH_N, fewer in proportion to the cost of an evaluation (n^3) above it, at
# least one (and at least hyper_polish).
gaussian_polish_iter <- function(n, hyper_polish = 0L) {
  as.integer(max(1L, hyper_polish, floor(GAUSS_POLISH_ITER * (GAUSS_POLISH_N / n)^3)))
}

# The role of each log parameter of a kernel (in the order of engine_get_params()):
# a data frame with role ("variance", "lengthscale" or "period"), leaf (the leaf's
# number, left to right) and col (the input column of a lengthscale of a leaf with one
# per input; NA otherwise).
gaussian_param_roles <- function(kernel) {
  leaf <- 0L
  walk <- function(k) {
    if (k$type %in% c("sum", "prod")) return(rbind(walk(k$k1), walk(k$k2)))
    leaf <<- leaf + 1L
    nl <- length(k$lengthscale)
    per <- k$type == "periodic"
    # the input column of each ARD lengthscale (the leaf's active inputs, or all)
    cols <- if (nl > 1L) {
      idx <- kernel_leaf_idx(k)
      if (length(idx)) idx else seq_len(nl)
    } else NA_integer_
    data.frame(role = c("variance", rep("lengthscale", nl), if (per) "period"),
               leaf = leaf,
               col = c(NA_integer_, cols, if (per) NA_integer_),
               stringsAsFactors = FALSE)
  }
  walk(kernel)
}

# The log prior of the ARD search (up to a constant) at the per-input log lengthscales
# `th`, N(to, GAUSS_ARD_SD^2) each: list(value, gradient in th).
gaussian_ard_prior <- function(th, to) {
  dv <- th - to
  list(value = -sum(dv^2) / (2 * GAUSS_ARD_SD^2), gradient = -dv / GAUSS_ARD_SD^2)
}

# The nested, evenly spaced subsets of 1..n the search runs on: their sizes, each about
# half the next, the last n.
gaussian_level_sizes <- function(n, level_min = GAUSS_LEVEL_MIN) {
  sizes <- n
  while (sizes[1] >= 2 * level_min) sizes <- c(ceiling(sizes[1] / 2), sizes)
  sizes
}

# The weighted standard deviation of y (1 if it is 0).
gaussian_sd_y <- function(y, w) {
  mu <- sum(w * y) / sum(w)
  s <- sqrt(sum(w * (y - mu)^2) / sum(w))
  if (s > 0) s else 1
}

# The search. X: standardised inputs (n x d); spec: the engine likelihood list
# (type "gaussian": y, trials, sigma: the starting or fixed noise scale); kernel: the
# starting kernel (standardised inputs); mean0: the prior mean (scalar or n-vector);
# learn_sigma: search sigma too; ard: the leaves to expand (gaussian_ard_leaves(), may
# be all FALSE); ard_mode: "auto", TRUE or FALSE. Returns list(kernel, sigma, par, value,
# evals, levels, path (the exact log marginal likelihood of the improving evaluations on
# all n), hyper_converged, model, ard (the isotropic/ARD comparison on the first level:
# list(mode, chosen, n (its rows), params (lengthscales added), lml_iso, lml_ard,
# loo_iso, loo_ard); NULL when no leaf was expanded)). level_min: the smallest subset
# size (gaussian_level_sizes()).
gaussian_exact_search <- function(X, spec, kernel, ctl, mean0, learn_sigma, ard, ard_mode,
                                  level_min = GAUSS_LEVEL_MIN) {
  n <- nrow(X)
  d <- ncol(X)
  y <- as.double(spec$y)
  w <- as.double(spec$trials)
  mu0 <- rep_len(as.double(mean0), n)
  model <- .gauss_exact_new(X, y, w, mu0, ctl$jitter, kernel_flatten(kernel), as.integer(ctl$threads))
  ls_y <- log(gaussian_sd_y(y, w))
  log_sigma <- log(spec$sigma)
  learn_kernel <- isTRUE(ctl$learn_hyper) && ctl$hyper_maxit > 0
  expand <- learn_kernel && d > 1L && any(ard) && !isFALSE(ard_mode)
  th_start <- engine_get_params(kernel)
  # the search vector: the kernel's log parameters (if learned), then log sigma (if learned)
  pack <- function(th, ls) c(if (learn_kernel) th, if (learn_sigma) ls)
  unpack <- function(par, k) {
    nk <- length(engine_get_params(k))
    list(th = if (learn_kernel) par[seq_len(nk)] else engine_get_params(k),
         ls = if (learn_sigma) par[length(par)] else log_sigma)
  }
  # one lengthscale per input: the range of each input (its upper bound)
  rng <- if (expand) apply(X, 2, function(v) diff(range(v)))
  is_ard <- function(k) {
    r <- gaussian_param_roles(k)
    r$role == "lengthscale" & !is.na(r$col)
  }
  # the bounds of every log parameter (the kernel's, then log sigma), learned or not
  bounds_full <- function(k) {
    th0 <- th_start
    if (length(engine_get_params(k)) != length(th0)) {
      th0 <- engine_get_params(kernel_expand_ard(kernel, d, ard))
    }
    up <- th0 + 8
    a <- is_ard(k)
    if (expand && any(a)) {
      col <- gaussian_param_roles(k)$col[a]
      up[a] <- pmax(log(GAUSS_ARD_RANGE * pmax(rng[col], 1e-8)), th0[a])
    }
    list(lower = c(th0 - 8, ls_y - 9), upper = c(up, ls_y + 3))
  }
  bounds <- function(k) {
    b <- bounds_full(k)
    nk <- length(b$lower) - 1L
    list(lower = pack(b$lower[seq_len(nk)], b$lower[nk + 1L]),
         upper = pack(b$upper[seq_len(nk)], b$upper[nk + 1L]))
  }
  # The objective: log p(y | theta, sigma), plus, once the search has expanded the kernel
  # (shrink_to set), the log prior of the ARD lengthscales, N(shrink_to, GAUSS_ARD_SD^2)
  # on the log scale. rec$exact records the exact log marginal likelihood of the
  # evaluations that improve on the level's best objective (the fit's trace).
  shrink_to <- NULL
  rec <- new.env(parent = emptyenv())
  make_eval <- function(k) {
    nk <- length(engine_get_params(k))
    keep <- c(if (learn_kernel) seq_len(nk), if (learn_sigma) nk + 1L)
    a <- which(is_ard(k))
    rec$best <- -Inf
    rec$exact <- numeric(0)
    function(par, grad = TRUE) {
      u <- unpack(par, k)
      o <- .gauss_exact_eval(model, c(unname(u$th), u$ls), grad)
      if (grad) o$gradient <- o$gradient[keep]
      if (!is.finite(o$value)) return(o)
      exact <- o$value
      if (!is.null(shrink_to) && length(a) && learn_kernel) {
        pr <- gaussian_ard_prior(u$th[a], shrink_to)
        o$value <- o$value + pr$value
        if (grad) o$gradient[a] <- o$gradient[a] + pr$gradient
      }
      if (o$value > rec$best && (!grad || all(is.finite(o$gradient)))) {
        rec$best <- o$value
        rec$exact <- c(rec$exact, exact)
      }
      o
    }
  }
  sizes <- if (learn_kernel) gaussian_level_sizes(n, level_min) else n
  polish <- gaussian_polish_iter(n, ctl$hyper_polish)
  maxit <- if (learn_kernel) GAUSS_MAXIT_FACTOR * ctl$hyper_maxit else 100L
  evals <- 0L
  path <- numeric(0)
  hyper_converged <- NA
  cur <- kernel
  par <- pack(th_start, log_sigma)
  value <- -Inf
  ard_info <- NULL
  share <- c(0, cumsum(sizes^3) / sum(sizes^3))
  search <- function(k, par0, maxit, alt = NULL, label = "", H0 = NULL, need_H = TRUE, tol = NULL) {
    b <- bounds(k)
    # sigma alone: a one-dimensional search, converged to the accuracy of the value
    if (!learn_kernel) tol <- 1e-10
    opt <- hyper_bfgs(make_eval(k), par0, b$lower, b$upper, ctl, maxit = maxit, H0 = H0, alt = alt,
                      label = label, evals = evals, tol = tol, need_H = need_H)
    evals <<- opt$evals
    opt
  }
  H <- NULL
  for (lev in seq_along(sizes)) {
    m <- sizes[lev]
    idx <- if (m < n) unique(round(seq(1, n, length.out = m))) else seq_len(n)
    .gauss_exact_level(model, idx)
    last <- lev == length(sizes)
    polishing <- last && length(sizes) > 1L
    label <- if (length(sizes) > 1L) sprintf("n = %d", m) else ""
    sec <- progress_section(share[lev], share[lev + 1])
    # the first level also tries the median-distance lengthscales as a start
    alt <- if (lev == 1L && learn_kernel) {
      pack(engine_get_params(kernel_median_start(cur, X)), log_sigma)
    }
    # the curvature of the previous level, scaled to this one's size (the log marginal
    # likelihood is a sum over the rows)
    if (!is.null(H)) H <- H * sizes[lev - 1L] / m
    # the curvature is carried to the next level, except from the last one
    # A subset level only starts the next one, whose optimum lies further than a fraction
    # of a nat per row: it stops at a gain of GAUSS_SUBSET_TOL nats per 1000 rows.
    tol <- if (!last) max(hyper_stop(ctl, 0), GAUSS_SUBSET_TOL * m / 1000)
    opt <- search(cur, par, if (polishing) polish else maxit, alt, label, H,
                  need_H = !last || (lev == 1L && expand), tol = tol)
    if (lev == 1L && expand) {
      # isotropic optimum, then one lengthscale per input from it
      iso <- opt
      k_iso <- engine_set_params(cur, unpack(iso$par, cur)$th)
      k_ard <- kernel_expand_ard(k_iso, d, ard)
      th_iso <- unpack(iso$par, cur)$th
      # each ARD lengthscale is shrunk towards its leaf's isotropic value
      ri <- gaussian_param_roles(k_iso)
      ra <- gaussian_param_roles(k_ard)
      iso_ls <- th_iso[ri$role == "lengthscale"]
      names(iso_ls) <- ri$leaf[ri$role == "lengthscale"]
      shrink_to <- unname(iso_ls[as.character(ra$leaf[is_ard(k_ard)])])
      .gauss_exact_kernel(model, kernel_flatten(k_ard))
      opt_ard <- search(k_ard, pack(engine_get_params(k_ard), unpack(iso$par, cur)$ls), maxit,
                        label = paste0(label, if (nzchar(label)) ", ", "ARD"), tol = tol)
      # the two optima compared by their leave-one-out log predictive densities
      full_par <- function(o, k) {
        u <- unpack(o$par, k)
        c(unname(u$th), u$ls)
      }
      p_ard <- .gauss_exact_posterior(model, full_par(opt_ard, k_ard))
      .gauss_exact_kernel(model, kernel_flatten(cur))
      p_iso <- .gauss_exact_posterior(model, full_par(iso, cur))
      keep_ard <- isTRUE(ard_mode) || isTRUE(p_ard$loo > p_iso$loo)
      ard_info <- list(mode = ard_mode, chosen = keep_ard, n = m,
                       params = length(engine_get_params(k_ard)) - length(th_iso),
                       lml_iso = p_iso$value, lml_ard = p_ard$value, loo_iso = p_iso$loo,
                       loo_ard = p_ard$loo)
      if (keep_ard) {
        cur <- k_ard
        opt <- opt_ard
        .gauss_exact_kernel(model, kernel_flatten(cur))
      }
    }
    progress_restore(sec)
    if (!polishing) hyper_converged <- opt$converged
    if (last) path <- rec$exact
    par <- opt$par
    value <- opt$value
    H <- opt$H
  }
  u <- unpack(par, cur)
  # The search's objective on all rows, for the integration over the hyperparameters
  # (gaussian_hyper_mixture()): which log parameters were learned, their bounds, and the
  # ARD prior (the entries of the kernel's log parameters it applies to, its centres).
  nk <- length(u$th)
  a <- if (!is.null(shrink_to) && learn_kernel) which(is_ard(cur)) else integer(0)
  objective <- c(bounds_full(cur),
                 list(learned = c(rep(learn_kernel, nk), learn_sigma), shrink_idx = a,
                      shrink_to = if (length(a)) shrink_to else numeric(0)))
  list(kernel = engine_set_params(cur, u$th), sigma = exp(u$ls), par = c(unname(u$th), u$ls),
       value = value, evals = evals, levels = sizes, path = path,
       hyper_converged = if (learn_kernel) hyper_converged else NA, model = model, ard = ard_info,
       objective = objective)
}

# The fit: the search, then the exact posterior at its optimum on all the data, in the
# shape of a variational engine fit (engine_vi()) with the likelihood parameter learned
# (engine_learn_lik_params()): kernel, mean, var, alpha, omega, kappa, kl, elbo (the
# improving log marginal likelihood values on all the data, ending at the fit's), lik
# (with the learned sigma), and the search's evals, levels and ard record.
gaussian_exact_vi <- function(X, spec, kernel, ctl, mean0, learn_sigma, ard, ard_mode) {
  sec <- progress_section(0, 0.95, "hyperparameter search", announce = TRUE)
  s <- gaussian_exact_search(X, spec, kernel, ctl, mean0, learn_sigma, ard, ard_mode)
  progress_restore(sec)
  post <- .gauss_exact_posterior(s$model, s$par)
  # the exact values of the improving evaluations on all n (their objective rose; with
  # the ARD prior the exact value can dip), kept non-decreasing and ending at the fit's
  tr <- s$path[s$path < post$value]
  trace <- c(tr[tr >= cummax(tr)], post$value)
  spec$sigma <- s$sigma
  list(kernel = s$kernel, mean = post$m, var = post$v, alpha = post$alpha, omega = post$omega,
       kappa = post$kappa, kl = post$kl, elbo = trace, converged = TRUE,
       hyper_converged = s$hyper_converged, jitter = ctl$jitter, hyper_evals = s$evals,
       lik = spec, param_rounds = 0L, param_converged = TRUE, hyper_levels = s$levels,
       ard = s$ard, exact_gaussian = TRUE, par = s$par, objective = s$objective)
}

# The engine fit of augp_fit() for gaussian_noise() on the exact GP when something is
# learned (the kernel, sigma or both): gaussian_exact_vi() (with `restarts`, the best of
# that many starts, future_vi_restarts()), as an augp_engine; for method = "gibbs" the
# sampler then runs at the learned kernel and sigma (engine_gibbs_at()).
engine_fit_gaussian_exact <- function(X, spec, likelihood, kernel, method, control, seed, mean0,
                                      prior = NULL, ard = FALSE) {
  own <- progress_begin(control$verbose, progress_header(method, X))
  if (own) on.exit(progress_close(), add = TRUE)
  learn_sigma <- isTRUE(likelihood$learn_sigma)
  ard_mode <- control$ard
  sec <- progress_section(0, if (method == "vi") 1 else 0.25)
  one <- function(k) gaussian_exact_vi(X, spec, k, control, mean0, learn_sigma, ard, ard_mode)
  fit <- if (control$restarts > 1 && isTRUE(control$learn_hyper) && control$hyper_maxit > 0) {
    future_vi_restarts(one, kernel, control$restarts, new_seed(seed), control$parallel)
  } else {
    one(kernel)
  }
  progress_restore(sec)
  n <- nrow(X)
  vi <- list(kernel = fit$kernel, X = X, y = NULL, trials = NULL, lik = fit$lik, q = 1L,
             method = "vi", mean = fit$mean, var = fit$var, elbo = fit$elbo,
             converged = fit$converged, hyper_converged = fit$hyper_converged, draws = NULL,
             jitter = fit$jitter, jitter_increased = FALSE,
             mean0 = if (length(mean0) %in% c(1, n)) as.numeric(mean0) else mean0,
             alpha = fit$alpha, omega = fit$omega, kl = fit$kl, control = control,
             hyper_evals = fit$hyper_evals, shared_hyper = TRUE, restarts = fit$restarts,
             param_rounds = fit$param_rounds, param_converged = fit$param_converged,
             param_label = lik_params_label(likelihood), hyper_levels = fit$hyper_levels,
             ard = fit$ard, exact_gaussian = TRUE)
  if (isTRUE(control$integrate_hyper)) {
    # (a fit without a seed integrates with the points of seed 1, as it predicts: the
    # same data give the same fit)
    mx <- gaussian_hyper_mixture(X, spec, fit, control, mean0, mixture_seed(seed),
                                 mixture_points(control))
    vi <- mixture_attach(vi, mx, 1L)
  }
  vi <- structure(vi, class = "augp_engine")
  engine_finish_at(vi, method, X, control, seed, mean0, prior, own)
}

# How print() and summary() describe the kernel search of a Gaussian exact fit, or the
# choice of augp_control(kernel_search =) (kernel_search_line()): NULL for other fits.
kernel_search_label <- function(object) {
  if (!is.null(object$kernel_search)) return(kernel_search_line(object))
  eng <- object$engine
  if (!isTRUE(eng$exact_gaussian)) return(NULL)
  a <- eng$ard
  ctl <- object$control
  what <- c(if (isTRUE(ctl$learn_hyper) && ctl$hyper_maxit > 0) "kernel",
            if (isTRUE(object$likelihood$learn_sigma)) "sigma")
  how <- sprintf("Search: %s by the exact log marginal likelihood", paste(what, collapse = " and "))
  if (is.null(a)) return(how)
  on <- if (a$n < object$n) sprintf(" on %d of the %d rows", a$n, object$n) else ""
  kern <- if (isTRUE(a$chosen)) {
    "one lengthscale per input (ARD, with a prior shrinking them towards one common value)"
  } else {
    "one lengthscale for all inputs"
  }
  why <- if (isTRUE(a$mode)) {
    "ard = TRUE"
  } else {
    d <- a$loo_ard - a$loo_iso
    sprintf("ARD's leave-one-out log predictive density %s%s nats over one lengthscale's%s",
            if (d >= 0) "+" else "-", format(signif(abs(d), 2)), on)
  }
  sprintf("%s; %s; %s", how, kern, why)
}
