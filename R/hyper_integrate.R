# Predictions integrated over the hyperparameters of a fit on the exact GP
# (augp_control(integrate_hyper = TRUE)): the conjugate Gaussian fit (gaussian_noise())
# and the variational fits of the other likelihoods.
#
# The type-II fit conditions on one value of phi, the log parameters the search learned:
# the mode phi* of the search's objective L(phi). Integrating over phi replaces
# p(f | y, phi*) by
#   p(f | y) ~= (1 / J) sum_j p(f | y, phi_j),   phi_j ~ N(phi*, Sigma),
# the Laplace approximation of the posterior of phi under the flat prior on the log
# scale: Sigma = (-H)^-1, H the Hessian of L at phi* by central differences of its
# gradient (2 p gradient evaluations). The J points come in antithetic pairs
# phi* +- R z_j (R R' = Sigma), so the mixture's spread is centred on phi*; the z_j are a
# Latin hypercube sample of J / 2 standard normal vectors (seeded from the fit's seed),
# which covers each direction more evenly than independent draws. A prediction at new
# inputs is the average of the J points' predictions.
#
# One builder, hyper_mixture(), does this for any engine; the engine supplies L's
# gradient and the fit at given log parameters (its `problem`):
# * gaussian_noise() (gaussian_hyper_mixture()): phi = the kernel's log parameters and
#   log sigma; L(phi) = log p(y | phi) + log p_ARD(phi) (the ARD term, the search's
#   log-normal shrinkage of per-input lengthscales, is there only when the search
#   expanded the kernel); each point is the exact posterior at phi_j (one Cholesky
#   factorisation), and sigma varies between the points.
# * other likelihoods (vi_hyper_mixture()): phi = the kernel's log parameters;
#   L(phi) = the profiled ELBO max_q ELBO(q, phi) that the kernel search maximises, at
#   the likelihood parameters the fit learned (held at their values); its gradient by
#   CAVI to convergence and the envelope theorem; each point is the variational q(f) at
#   phi_j (CAVI, refined as the fit was). phi* is the fit's kernel: for a likelihood
#   whose parameters were learned after the kernel search (negative_binomial(),
#   poisson_logistic()) it is the search's optimum at the starting parameters, where the
#   gradient at the learned ones need not vanish; the mixture stays centred on the
#   kernel the fit predicts with.
#
# Safeguards: an eigen-direction of -H with curvature below 1 / LAPLACE_MAX_SD^2 (L flat
# or curving upwards along it) gets the variance LAPLACE_MAX_SD^2 (LAPLACE_MAX_SD on the
# log scale, a factor of e^2 either way at two sd); a log parameter that ended within
# LAPLACE_AT_BOUND of a bound of the search stays at its value; points are clipped to
# the bounds.
#
# Diagnostic: the importance ratios exp(L(phi_j)) / N(phi_j; phi*, Sigma) (L(phi_j) comes
# with the fit at phi_j; along floored directions the floor's Gaussian counts as a prior
# on both sides and cancels) and their effective number (sum w)^2 / sum w^2 out of J.
# Near J the posterior of phi is close to the Gaussian; a small share means it is not,
# and augp() warns (full Bayes, method = "gibbs" with sample_hyper = TRUE, samples it
# instead).
#
# The fit keeps the J fits as engine$mixture; the engine's own fields stay those of the
# mode phi* (kernel, alpha, omega, lik), except `mean` and `var`, the mixture's moments
# at the training rows. Predictions, draws and simulations go through vi_marginals():
# draw s belongs to point mixture_component(s), and lik_with_draws() gives each draw
# its point's likelihood parameters.
LAPLACE_MAX_SD <- 1
# integrate_hyper = "auto" integrates the fits it applies to (lik_integrate_auto_n()) up
# to this many observations times latent columns
IH_AUTO_N <- 500
LAPLACE_AT_BOUND <- 1e-6
LAPLACE_STEP <- 1e-3
LAPLACE_MIN_ESS_SHARE <- 0.1

# The mixture over the Laplace approximation of the log-parameter posterior of a fit,
# for any engine: `problem` says how to evaluate the fit's hyperparameter objective L and
# how to fit q(f) at given log parameters, and hyper_mixture() does the rest (Hessian,
# safeguards, points, importance ratios). problem: list(
#   mode: the log parameters at the fit (the kernel's first, nk of them, then any
#     likelihood parameters the mixture moves);
#   nk: the number of kernel log parameters;
#   learned, lower, upper: which entries the search learned, and its bounds;
#   gradient(par): the gradient of L at par (all entries; non-finite when L cannot be
#     evaluated there);
#   fit(par): the posterior or variational q(f) at par, list(value = L(par), m, v,
#     alpha, omega: vectors of the n q values, latent column after column);
#   lik_names, lik_index: the likelihood parameters (engine spec fields and elements)
#     taken from the entries after the kernel's, exp() of them; none: character(0)).
# `what`: how the error messages name the objective. Returns the engine field
# `mixture`: list(J, theta (J x nk), lik_names, lik_index, lik_values (J x their
# number), mean, var, alpha, omega ((n q) x J), mix_mean, mix_var (the mixture's
# moments at the training rows), mode and sd (each log parameter's value at the mode and
# Laplace sd, 0 for those held), ess (the importance ESS), log_ratio (J)).
hyper_mixture <- function(problem, seed, J, what) {
  mode <- problem$mode
  np <- length(mode)
  nk <- problem$nk
  free <- which(problem$learned & mode > problem$lower + LAPLACE_AT_BOUND &
                  mode < problem$upper - LAPLACE_AT_BOUND)
  p <- length(free)
  R <- matrix(0, np, max(p, 1L))
  sd <- rep(0, np)
  floored <- rep(FALSE, max(p, 1L))
  if (p > 0) {
    H <- matrix(0, p, p)
    for (k in seq_len(p)) {
      up <- dn <- mode
      up[free[k]] <- up[free[k]] + LAPLACE_STEP
      dn[free[k]] <- dn[free[k]] - LAPLACE_STEP
      gu <- problem$gradient(up)[free]
      gd <- problem$gradient(dn)[free]
      if (!all(is.finite(c(gu, gd)))) {
        stop(sprintf(paste0("`control`: integrate_hyper = TRUE could not evaluate %s around ",
                            "the learned hyperparameters; fit with integrate_hyper = FALSE."),
                     what), call. = FALSE)
      }
      H[, k] <- (gu - gd) / (2 * LAPLACE_STEP)
    }
    e <- eigen(-(H + t(H)) / 2, symmetric = TRUE)
    floored <- e$values < 1 / LAPLACE_MAX_SD^2
    lam <- pmax(e$values, 1 / LAPLACE_MAX_SD^2)
    R[free, seq_len(p)] <- e$vectors %*% diag(1 / sqrt(lam), p)
    sd[free] <- sqrt(rowSums(R[free, seq_len(p), drop = FALSE]^2))
  }
  half <- J %/% 2L
  # a Latin hypercube sample of J / 2 standard normal vectors: in each coordinate one
  # value in each of J / 2 strata of equal probability, in random order
  Z <- withr::with_seed(seed, vapply(seq_len(max(p, 1L)), function(k) {
    stats::qnorm((sample.int(half) - stats::runif(half)) / half)
  }, numeric(half)))
  Z <- matrix(Z, half)
  if (p == 0) Z[] <- 0
  Z <- rbind(Z, -Z)
  pts <- sweep(Z %*% t(R), 2, mode, "+")
  pts <- sweep(sweep(pts, 2, problem$lower, pmax), 2, problem$upper, pmin)
  posts <- lapply(seq_len(J), function(j) problem$fit(pts[j, ]))
  value <- vapply(posts, function(o) as.numeric(o$value), 0)
  if (!all(is.finite(value))) {
    stop(sprintf(paste0("`control`: integrate_hyper = TRUE could not evaluate %s at ",
                        "hyperparameters near the learned ones; fit with ",
                        "integrate_hyper = FALSE."), what), call. = FALSE)
  }
  # L at the points against the log density of the Gaussian they were drawn from (up to
  # constants). Along a floored eigen-direction the Gaussian is not an approximation of L
  # but a prior N(0, LAPLACE_MAX_SD^2) put there: the target is L times that prior, and
  # the direction drops out of the ratio.
  log_ratio <- value + 0.5 * rowSums(Z[, !floored, drop = FALSE]^2)
  w <- exp(log_ratio - max(log_ratio))
  nq <- length(posts[[1]]$m)
  col <- function(nm) vapply(posts, function(o) as.numeric(o[[nm]]), numeric(nq))
  M <- col("m")
  V <- pmax(col("v"), 0)
  mean <- rowMeans(M)
  nl <- length(problem$lik_names)
  list(J = as.integer(J), theta = pts[, seq_len(nk), drop = FALSE],
       lik_names = as.character(problem$lik_names), lik_index = as.integer(problem$lik_index),
       lik_values = exp(pts[, nk + seq_len(nl), drop = FALSE]),
       mean = M, var = V, alpha = col("alpha"), omega = col("omega"),
       mix_mean = mean, mix_var = pmax(rowMeans(V + M^2) - mean^2, 0),
       mode = mode, sd = sd, ess = sum(w)^2 / sum(w^2), log_ratio = log_ratio)
}

# The engine fit `vi` (a list in the engine's shape, q latent columns) with the mixture
# `mx` (hyper_mixture()) attached: its mean and var become the mixture's moments at the
# training rows (in the engine's shape), the other fields stay the mode's. Warns when the
# importance ESS is below LAPLACE_MIN_ESS_SHARE of the points.
mixture_attach <- function(vi, mx, q) {
  n <- length(mx$mix_mean) %/% q
  vi$mean <- engine_shape(matrix(mx$mix_mean, n, q), q)
  vi$var <- engine_shape(matrix(mx$mix_var, n, q), q)
  mx$mix_mean <- mx$mix_var <- NULL
  vi$mixture <- mx
  if (mx$ess < LAPLACE_MIN_ESS_SHARE * mx$J) {
    warning(sprintf(paste0("integrate_hyper: the posterior of the hyperparameters is far from ",
                           "the Laplace approximation (importance ESS %.1f of %d points); ",
                           "method = \"gibbs\" with sample_hyper = TRUE samples it."), mx$ess, mx$J),
            call. = FALSE)
  }
  vi
}

# The seed of the mixture's points: from the fit's seed, or from seed 1 for a fit without
# one (as it predicts), so that the same data give the same fit.
mixture_seed <- function(seed) new_seed(if (is.null(seed)) 1L else seed)[1]

# The number of mixture points of control `ctl`: hyper_points rounded up to pairs.
mixture_points <- function(ctl) 2L * ((ctl$hyper_points + 1L) %/% 2L)

# The mixture of exact posteriors over the Laplace approximation of the hyperparameters
# of the Gaussian exact fit `fit` (gaussian_exact_vi(): par, objective, lik), at J
# points: L is the exact log marginal likelihood plus the ARD term, and sigma the one
# likelihood parameter that varies between the points. X, spec, mean0: the fit's
# standardised inputs, engine likelihood list and prior mean. Returns hyper_mixture()'s
# list.
gaussian_hyper_mixture <- function(X, spec, fit, ctl, mean0, seed, J) {
  ob <- fit$objective
  n <- nrow(X)
  mu0 <- rep_len(as.double(mean0), n)
  model <- .gauss_exact_new(X, as.double(spec$y), as.double(spec$trials), mu0, ctl$jitter,
                            kernel_flatten(fit$kernel), as.integer(ctl$threads))
  a <- ob$shrink_idx
  problem <- list(
    mode = fit$par, nk = length(fit$par) - 1L, learned = ob$learned, lower = ob$lower,
    upper = ob$upper, lik_names = "sigma", lik_index = 1L,
    gradient = function(par) {
      g <- .gauss_exact_eval(model, par, TRUE)$gradient
      if (length(a)) g[a] <- g[a] + gaussian_ard_prior(par[a], ob$shrink_to)$gradient
      g
    },
    fit = function(par) {
      o <- .gauss_exact_posterior(model, par)
      prior <- if (length(a)) gaussian_ard_prior(par[a], ob$shrink_to)$value else 0
      list(value = o$value + prior, m = o$m, v = o$v, alpha = o$alpha, omega = o$omega)
    })
  hyper_mixture(problem, seed, J,
                "the marginal likelihood (a kernel matrix without Cholesky factor)")
}

# The point of the mixture that draw `ids` (1, 2, ...) belongs to: the J points in turn,
# so that any run of J consecutive draws holds each point once.
mixture_component <- function(ids, J) ((as.integer(ids) - 1L) %% as.integer(J)) + 1L

# The engine of point j of a mixture: the plain exact posterior or variational q(f) at
# that point's hyperparameters, its fields in the engine's shape (engine_shape()).
mixture_member <- function(eng, j) {
  mx <- eng$mixture
  eng$kernel <- engine_set_params(eng$kernel, mx$theta[j, ])
  q <- if (is.null(eng$q)) 1L else eng$q
  for (nm in c("alpha", "omega", "mean", "var")) {
    eng[[nm]] <- engine_shape(matrix(mx[[nm]][, j], ncol = q), q)
  }
  for (k in seq_along(mx$lik_names)) eng$lik[[mx$lik_names[k]]][mx$lik_index[k]] <- mx$lik_values[j, k]
  eng$mixture <- NULL
  eng
}

# The Gaussian marginals of a variational fit at the training rows (X NULL) or at the rows
# `ok` of a new design X (new_design()): list(M, V), (r q) x J matrices of means and
# variances, one column per point of the fit's mixture (J = 1 without one).
vi_marginals <- function(object, X = NULL, ok = NULL) {
  eng <- object$engine
  mx <- eng$mixture
  if (is.null(mx)) {
    pr <- if (is.null(X)) eng else engine_predict_new(object, X, ok)
    return(list(M = matrix(as.numeric(pr$mean)), V = matrix(pmax(as.numeric(pr$var), 0))))
  }
  if (is.null(X)) return(list(M = mx$mean, V = mx$var))
  r <- sum(ok) * object$q
  parts <- lapply(seq_len(mx$J), function(j) {
    o <- object
    o$engine <- mixture_member(eng, j)
    engine_predict_new(o, X, ok)
  })
  list(M = vapply(parts, function(p) as.numeric(p$mean), numeric(r)),
       V = vapply(parts, function(p) pmax(as.numeric(p$var), 0), numeric(r)))
}

# S draws from the marginals `mg` (vi_marginals()) as an S x r x q array: draw s from
# point mixture_component(s). The normals are drawn one draw (all rows and latent
# columns) after the other, so draw s is the same whatever the number of draws after it.
vi_marginal_draws <- function(mg, S, q) {
  rq <- nrow(mg$M)
  Z <- matrix(stats::rnorm(rq * S), rq, S)
  if (ncol(mg$M) == 1L) {
    F <- as.numeric(mg$M) + sqrt(as.numeric(mg$V)) * Z
  } else {
    comp <- mixture_component(seq_len(S), ncol(mg$M))
    F <- mg$M[, comp, drop = FALSE] + sqrt(mg$V[, comp, drop = FALSE]) * Z
  }
  array(t(F), c(S, rq / q, q))
}

# latent_posterior() of a fit with a mixture: the mixture's moments (mean, var, r x q),
# S = pred_draws draws from it (the fit's seed), ids = 1..S, and the points' marginals
# `parts` (vi_marginals()).
mixture_latent_posterior <- function(object, X, ok, rn) {
  q <- object$q
  r <- sum(ok)
  mg <- vi_marginals(object, X, ok)
  mean <- rowMeans(mg$M)
  var <- pmax(rowMeans(mg$V + mg$M^2) - mean^2, 0)
  S <- pred_draw_count(object)
  draws <- withr::with_seed(pred_seed(object), vi_marginal_draws(mg, S, q))
  list(mean = matrix(mean, r, q), var = matrix(var, r, q), draws = draws, ok = ok,
       rownames = rn, ids = seq_len(S), parts = mg)
}

# response_summary() of a fit with a mixture: the mean and sd of the response mean by the
# likelihood's rule at each point, combined by the law of total variance; interval bounds
# from the draws of `lp`.
mixture_response_summary <- function(object, lp, level, sd) {
  eng <- object$engine
  J <- eng$mixture$J
  q <- object$q
  r <- sum(lp$ok)
  Z <- pred_normals(object)
  thr <- resolve_threads(object$control$threads)
  first <- second <- 0
  for (j in seq_len(J)) {
    lik <- sparse_lik_subset(mixture_member(eng, j)$lik, 1L)
    s <- .lik_response_cpp(lik, matrix(lp$parts$M[, j], r, q), matrix(lp$parts$V[, j], r, q),
                           Z, 0, thr, TRUE)
    first <- first + s$mean / J
    second <- second + (s$sd^2 + s$mean^2) / J
  }
  out <- list(mean = first, sd = if (sd) sqrt(pmax(second - first^2, 0)) else first[0, , drop = FALSE])
  if (level > 0) {
    d <- .lik_response_draws_cpp(lik_with_draws(eng, lp$ids), lp$draws, level)
    out$lwr <- d$lwr
    out$upr <- d$upr
  }
  out
}

# How print() and summary() describe the integration (NULL without one).
mixture_label <- function(object) {
  mx <- object$engine$mixture
  if (is.null(mx)) return(NULL)
  sprintf(paste0("Predictions averaged over the hyperparameters: %d points of the Laplace ",
                 "approximation of their posterior (importance ESS %.0f of %d)"),
          mx$J, mx$ess, mx$J)
}

# The Laplace approximation of each hyperparameter's posterior for summary(): a data frame
# (data units, one row per learned hyperparameter as coef() names it, then the likelihood's
# parameters, such as sigma) with the mode and the 5% and 95% quantiles of the approximate
# marginal (the mode -+ 1.645 sd of its logarithm); NULL without a mixture.
mixture_hyper_summary <- function(x) {
  mx <- x$engine$mixture
  if (is.null(mx)) return(NULL)
  nk <- ncol(mx$theta)
  z <- stats::qnorm(0.95)
  th <- mx$mode[seq_len(nk)]
  sd <- mx$sd[seq_len(nk)]
  at <- function(shift) hyper_values(x, engine_set_params(x$kernel, th + shift * sd), "data")
  keep <- hyper_free_columns(x, sd > 0, "data")
  out <- data.frame(mode = at(0), q5 = at(-z), q95 = at(z))[keep, , drop = FALSE]
  for (k in seq_along(mx$lik_names)) {
    ls <- mx$mode[nk + k]
    s <- mx$sd[nk + k]
    if (s > 0) out <- rbind(out, data.frame(mode = exp(ls), q5 = exp(ls - z * s),
                                            q95 = exp(ls + z * s), row.names = mx$lik_names[k]))
  }
  out
}

print_mixture_hyper_summary <- function(hs, digits) {
  if (is.null(hs) || !nrow(hs)) return(invisible())
  cat("Hyperparameter posterior (Laplace approximation at the learned values; data units):\n")
  print(format(hs, digits = digits), quote = FALSE)
  invisible()
}

# Variational fits (every likelihood but the conjugate Gaussian one, on the exact GP):
# L is the objective the kernel search maximised, the profiled augmented ELBO
#   L(theta) = max_q ELBO(q, theta)
# at the fit's likelihood parameters (the ones it learned, such as the dispersion of
# negative_binomial(), stay at their learned values: the mixture varies the kernel's log
# parameters only), flat on the log scale. Its gradient comes from the persistent model
# of the search (engine_model(), .model_dense_eval(): CAVI to convergence, warm-started
# from the best state so far, then the gradient of the collapsed bound), here with CAVI
# converged to IH_CAVI_TOL (within IH_CAVI_MAXIT_FACTOR times the fit's maxit sweeps) so
# that the central differences of the gradient are not noise. Point j's q(f) is CAVI at fixed theta_j to the fit's tol, started from the
# q(aux) that is optimal under the fit's own q(f); with a fit refined by the direct ELBO
# (augp_control(refine)), each point's q(f) gets the same refinement. The mode is the
# fit's kernel; the bounds are those of the search (engine_hyper_learn()). Returns
# hyper_mixture()'s list, its (n q) x J columns holding the n x q values column after
# column.
IH_CAVI_TOL <- 1e-10
IH_CAVI_MAXIT_FACTOR <- 10L
vi_hyper_mixture <- function(eng, ctl, seed, J) {
  X <- eng$X
  q <- eng$q
  n <- nrow(X)
  lik <- eng$lik
  kernel <- eng$kernel
  jitter <- eng$jitter
  mean0 <- engine_mean0_matrix(eng$mean0, n, q)
  storage.mode(mean0) <- "double"
  mode <- unname(engine_get_params(kernel))
  model <- .model_dense_new(X, lik, mean0, jitter, engine_specs(kernel),
                            as.integer(IH_CAVI_MAXIT_FACTOR * ctl$maxit), IH_CAVI_TOL,
                            as.integer(ctl$threads))
  m <- matrix(as.double(eng$mean), n, q)
  ev <- .gp_lik_eval_cpp(lik, m, matrix(as.double(eng$var), n, q), m)
  # (the model's warm start: its first evaluation, at the mode)
  .model_dense_eval(model, mode)
  rounds <- if (!is.null(eng$refine)) eng$refine$cap else 0L
  b <- eng$hyper_bounds
  problem <- list(
    mode = mode, nk = length(mode), learned = rep(!is.null(b), length(mode)),
    lower = if (is.null(b)) mode else b$lower, upper = if (is.null(b)) mode else b$upper,
    lik_names = character(0), lik_index = integer(0),
    gradient = function(par) {
      o <- .model_dense_eval(model, unname(engine_get_params(engine_set_params(kernel, par))))
      if (is.finite(o$value)) o$gradient else rep(NaN, length(par))
    },
    fit = function(par) {
      k <- engine_set_params(kernel, par)
      res <- tryCatch(engine_cavi_kernel(k, X, jitter, lik, mean0, ev$kappa, ev$omega,
                                         as.integer(ctl$maxit), ctl$tol, ctl$threads),
                      error = function(e) NULL)
      if (is.null(res) || !length(res$elbo)) return(list(value = NaN))
      value <- res$elbo[length(res$elbo)]
      omega <- res$omega_q
      if (rounds > 0L) {
        res <- tryCatch(refine_exact(k, X, jitter, lik, mean0, res$m, res$alpha, res$omega_q,
                                     rounds, ctl), error = function(e) NULL)
        if (is.null(res)) return(list(value = NaN))
        omega <- res$omega
      }
      list(value = value, m = res$m, v = res$v, alpha = res$alpha, omega = omega)
    })
  hyper_mixture(problem, seed, J, "the profiled ELBO (a variational fit failed)")
}

# The variational exact-GP engine fit `eng` (augp_engine(), its likelihood parameters
# learned and q(f) refined as the fit asks) averaged over its kernel hyperparameters:
# vi_hyper_mixture() attached by mixture_attach(). `seed`: the fit's (NULL: seed 1).
engine_integrate_hyper <- function(eng, ctl, seed) {
  mx <- vi_hyper_mixture(eng, ctl, mixture_seed(seed), mixture_points(ctl))
  mixture_attach(eng, mx, eng$q)
}
