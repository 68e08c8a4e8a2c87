# Predictions integrated over the hyperparameters of an exact Gaussian-likelihood fit
# (augp_control(integrate_hyper = TRUE), gaussian_noise() on the exact GP).
#
# The type-II fit conditions on one value of phi, the log parameters the search learned
# (the kernel's, log sigma): the mode phi* of the search's objective
#   L(phi) = log p(y | phi) + log p_ARD(phi)
# (the ARD term, the search's log-normal shrinkage of per-input lengthscales, is there
# only when the search expanded the kernel; L is flat in every other log parameter).
# Integrating over phi replaces p(f | y, phi*) by
#   p(f | y) ~= (1 / J) sum_j p(f | y, phi_j),   phi_j ~ N(phi*, Sigma),
# the Laplace approximation of the posterior of phi under the flat prior on the log
# scale: Sigma = (-H)^-1, H the Hessian of L at phi* by central differences of the exact
# gradient (2 p evaluations, one Cholesky factorisation each). The J points come in
# antithetic pairs phi* +- R z_j (R R' = Sigma), so the mixture's spread is centred on
# phi*; the z_j are a Latin hypercube sample of J / 2 standard normal vectors (seeded from
# the fit's seed), which covers each direction more evenly than independent draws. Each
# p(f | y, phi_j) is the exact
# Gaussian posterior at phi_j (one factorisation), so a prediction at new inputs is the
# average of J exact GP predictions.
#
# Safeguards: an eigen-direction of -H with curvature below 1 / LAPLACE_MAX_SD^2 (L flat
# or curving upwards along it) gets the variance LAPLACE_MAX_SD^2 (LAPLACE_MAX_SD on the
# log scale, a factor of e^2 either way at two sd); a log parameter that ended within
# LAPLACE_AT_BOUND of a bound of the search stays at its value; points are clipped to
# the bounds.
#
# Diagnostic: the importance ratios exp(L(phi_j)) / N(phi_j; phi*, Sigma) (L(phi_j) comes
# with the posterior at phi_j) and their effective number (sum w)^2 / sum w^2 out of J.
# Near J the posterior of phi is close to the Gaussian; a small share means it is not,
# and augp() warns (full Bayes, method = "gibbs" with sample_hyper = TRUE, samples it
# instead).
#
# The fit keeps the J posteriors as engine$mixture (gaussian_hyper_mixture()); the
# engine's own fields stay those of the mode phi* (kernel, alpha, omega, lik), except
# `mean` and `var`, the mixture's moments at the training rows. Predictions, draws and
# simulations go through vi_marginals(): draw s belongs to point mixture_component(s),
# and lik_with_draws() gives each draw its point's likelihood parameters.
LAPLACE_MAX_SD <- 1
# integrate_hyper = "auto" integrates the fits it applies to up to this many observations
IH_AUTO_N <- 500
LAPLACE_AT_BOUND <- 1e-6
LAPLACE_STEP <- 1e-3
LAPLACE_MIN_ESS_SHARE <- 0.1

# The mixture of exact posteriors over the Laplace approximation of the hyperparameters
# of the Gaussian exact fit `fit` (gaussian_exact_vi(): par, objective, lik), at J
# points. X, spec, mean0: the fit's standardised inputs, engine likelihood list and prior
# mean. Returns the engine field `mixture`: list(J, theta (J x kernel log parameters),
# lik_names, lik_index (the likelihood parameters that vary between the points, here
# sigma), lik_values (J x their number), mean, var, alpha, omega (n x J), mode and sd
# (each log parameter's value at the mode and Laplace sd, 0 for those held: the kernel's,
# then the logs of lik_values), ess (the importance ESS), log_ratio (J)).
gaussian_hyper_mixture <- function(X, spec, fit, ctl, mean0, seed, J) {
  ob <- fit$objective
  n <- nrow(X)
  mu0 <- rep_len(as.double(mean0), n)
  model <- .gauss_exact_new(X, as.double(spec$y), as.double(spec$trials), mu0, ctl$jitter,
                            kernel_flatten(fit$kernel), as.integer(ctl$threads))
  mode <- fit$par
  np <- length(mode)
  nk <- np - 1L
  # the search's objective L(phi) and its gradient at the full vector of log parameters
  objective <- function(par, grad = TRUE) {
    o <- .gauss_exact_eval(model, par, grad)
    a <- ob$shrink_idx
    if (length(a) && is.finite(o$value)) {
      dv <- par[a] - ob$shrink_to
      o$value <- o$value - sum(dv^2) / (2 * GAUSS_ARD_SD^2)
      if (grad) o$gradient[a] <- o$gradient[a] - dv / GAUSS_ARD_SD^2
    }
    o
  }
  free <- which(ob$learned & mode > ob$lower + LAPLACE_AT_BOUND &
                  mode < ob$upper - LAPLACE_AT_BOUND)
  p <- length(free)
  R <- matrix(0, np, max(p, 1L))
  sd <- rep(0, np)
  if (p > 0) {
    H <- matrix(0, p, p)
    for (k in seq_len(p)) {
      up <- dn <- mode
      up[free[k]] <- up[free[k]] + LAPLACE_STEP
      dn[free[k]] <- dn[free[k]] - LAPLACE_STEP
      gu <- objective(up)$gradient[free]
      gd <- objective(dn)$gradient[free]
      if (!all(is.finite(c(gu, gd)))) {
        stop(paste0("`control`: integrate_hyper = TRUE could not evaluate the marginal ",
                    "likelihood around the learned hyperparameters (a kernel matrix without ",
                    "Cholesky factor); fit with integrate_hyper = FALSE."), call. = FALSE)
      }
      H[, k] <- (gu - gd) / (2 * LAPLACE_STEP)
    }
    e <- eigen(-(H + t(H)) / 2, symmetric = TRUE)
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
  pts <- sweep(sweep(pts, 2, ob$lower, pmax), 2, ob$upper, pmin)
  posts <- lapply(seq_len(J), function(j) .gauss_exact_posterior(model, pts[j, ]))
  value <- vapply(posts, function(o) o$value, 0)
  if (!all(is.finite(value))) {
    stop(paste0("`control`: integrate_hyper = TRUE met hyperparameters without a Cholesky ",
                "factor of the kernel matrix near the learned ones; fit with ",
                "integrate_hyper = FALSE."), call. = FALSE)
  }
  # L at the points (the ARD term added to the exact log marginal likelihood), against the
  # log density of the Gaussian they were drawn from (up to constants)
  a <- ob$shrink_idx
  lv <- value - if (length(a)) rowSums(sweep(pts[, a, drop = FALSE], 2, ob$shrink_to)^2) /
    (2 * GAUSS_ARD_SD^2) else 0
  log_ratio <- lv + 0.5 * rowSums(Z^2)
  w <- exp(log_ratio - max(log_ratio))
  col <- function(nm) vapply(posts, function(o) as.numeric(o[[nm]]), numeric(n))
  M <- col("m")
  V <- pmax(col("v"), 0)
  mean <- rowMeans(M)
  list(J = as.integer(J), theta = pts[, seq_len(nk), drop = FALSE], lik_names = "sigma",
       lik_index = 1L, lik_values = matrix(exp(pts[, np]), J, 1L),
       mean = M, var = V, alpha = col("alpha"), omega = col("omega"),
       mix_mean = mean, mix_var = pmax(rowMeans(V + M^2) - mean^2, 0),
       mode = mode, sd = sd, ess = sum(w)^2 / sum(w^2), log_ratio = log_ratio)
}

# The point of the mixture that draw `ids` (1, 2, ...) belongs to: the J points in turn,
# so that any run of J consecutive draws holds each point once.
mixture_component <- function(ids, J) ((as.integer(ids) - 1L) %% as.integer(J)) + 1L

# The engine of point j of a mixture: the plain exact posterior at that point's
# hyperparameters.
mixture_member <- function(eng, j) {
  mx <- eng$mixture
  eng$kernel <- engine_set_params(eng$kernel, mx$theta[j, ])
  for (nm in c("alpha", "omega", "mean", "var")) eng[[nm]] <- mx[[nm]][, j]
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
  S <- object$control$pred_draws
  if (is.null(S)) S <- 1000L
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
  S <- object$control$pred_draws
  if (is.null(S)) S <- 1000L
  q <- object$q
  r <- sum(lp$ok)
  Z <- withr::with_seed(pred_seed(object), matrix(stats::rnorm(S * q), S, q))
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
