# augp_control(integrate_hyper = TRUE): predictions averaged over the Laplace
# approximation of the hyperparameter posterior of a gaussian_noise() exact fit
# (R/hyper_integrate.R). Every check recomputes the mixture independently, in R, from the
# dense formulas of GP regression.

ih_data <- function(n = 40, seed = 11) {
  set.seed(seed)
  x <- sort(runif(n, -2, 2))
  data.frame(x = x, y = sin(2 * x) + 0.3 * x + rnorm(n, sd = 0.3))
}

ih_fit <- function(df = ih_data(), ..., points = 12) {
  augp(y ~ x, df, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 5,
       control = augp_control(threads = 1, integrate_hyper = TRUE, hyper_points = points, ...))
}

# The dense log marginal likelihood log N(y; mu0, K + (jitter + sigma^2) I) at the log
# parameters `par` (the kernel's, then log sigma) of the fit's standardised problem.
ih_lml <- function(fit, par) {
  eng <- fit$engine
  nk <- length(par) - 1L
  k <- asNamespace("augmentedGP")$engine_set_params(eng$kernel, par[seq_len(nk)])
  X <- as.matrix(fit$x)
  A <- kernel_matrix(k, X) + diag(eng$jitter + exp(2 * par[nk + 1L]), nrow(X))
  r <- eng$lik$y - rep_len(eng$mean0, nrow(X))
  L <- chol(A)
  z <- backsolve(L, r, transpose = TRUE)
  -0.5 * sum(z^2) - sum(log(diag(L))) - 0.5 * nrow(X) * log(2 * pi)
}

# The Hessian of ih_lml() at `mode` by central differences of step h (values only).
ih_hessian <- function(fit, mode, h = 1e-3) {
  p <- length(mode)
  H <- matrix(0, p, p)
  for (i in seq_len(p)) for (j in seq_len(p)) {
    e <- function(a, b) {
      q <- mode
      q[i] <- q[i] + a * h
      q[j] <- q[j] + b * h
      ih_lml(fit, q)
    }
    H[i, j] <- (e(1, 1) - e(1, -1) - e(-1, 1) + e(-1, -1)) / (4 * h^2)
  }
  H
}

# The dense posterior mean and variance of f at standardised inputs Xs, at `par`: new
# inputs, or (train) the training inputs, whose prior covariance includes the jitter.
ih_predict <- function(fit, par, Xs, train = FALSE) {
  eng <- fit$engine
  nk <- length(par) - 1L
  k <- asNamespace("augmentedGP")$engine_set_params(eng$kernel, par[seq_len(nk)])
  X <- as.matrix(fit$x)
  A <- kernel_matrix(k, X) + diag(eng$jitter + exp(2 * par[nk + 1L]), nrow(X))
  jit <- if (train) eng$jitter else 0
  Ks <- kernel_matrix(k, Xs, X) + if (train) diag(jit, nrow(X)) else 0
  mu0 <- eng$mean0[1]
  m <- mu0 + drop(Ks %*% solve(A, eng$lik$y - mu0))
  v <- diag(kernel_matrix(k, Xs)) + jit - rowSums((Ks %*% solve(A)) * Ks)
  list(m = m, v = v)
}

test_that("the Laplace covariance is the inverse negative Hessian of the dense log marginal likelihood", {
  fit <- ih_fit()
  mx <- fit$engine$mixture
  expect_false(is.null(mx))
  mode <- mx$mode
  p <- length(mode)
  h <- 1e-3
  H <- ih_hessian(fit, mode, h)
  # the search found the mode: the gradient is ~ 0 there
  g <- vapply(seq_len(p), function(i) {
    q1 <- q2 <- mode
    q1[i] <- q1[i] + h
    q2[i] <- q2[i] - h
    (ih_lml(fit, q1) - ih_lml(fit, q2)) / (2 * h)
  }, 0)
  expect_lt(max(abs(g)), 1e-2)
  Sigma <- solve(-H)
  expect_equal(mx$sd, sqrt(diag(Sigma)), tolerance = 1e-3)
  # the points come in antithetic pairs about the mode, and reproduce Sigma's scale
  Th <- cbind(mx$theta, log(mx$lik_values[, 1]))
  J <- nrow(Th)
  expect_equal(J, 12L)
  expect_equal(Th[1:6, ] + Th[7:12, ], matrix(2 * mode, 6, p, byrow = TRUE), tolerance = 1e-12)
  # each point's stored posterior is the exact posterior at its hyperparameters
  X <- as.matrix(fit$x)
  for (j in c(1, 8)) {
    d <- ih_predict(fit, Th[j, ], X, train = TRUE)
    expect_equal(mx$mean[, j], d$m, tolerance = 1e-6)
    expect_equal(mx$var[, j], d$v, tolerance = 1e-6)
  }
})

test_that("predictions, fitted values and intervals are those of the mixture of exact posteriors", {
  df <- ih_data()
  fit <- ih_fit(df)
  mx <- fit$engine$mixture
  Th <- cbind(mx$theta, log(mx$lik_values[, 1]))
  nd <- data.frame(x = c(-1.5, 0.2, 1.9))
  Xs <- (nd$x - fit$centre) / fit$scale
  parts <- lapply(seq_len(nrow(Th)), function(j) ih_predict(fit, Th[j, ], matrix(Xs)))
  M <- sapply(parts, `[[`, "m")
  V <- sapply(parts, `[[`, "v")
  mean <- rowMeans(M)
  sdv <- sqrt(rowMeans(V + M^2) - mean^2)
  pl <- predict(fit, nd, type = "link", se.fit = TRUE)
  expect_equal(pl$fit, mean, tolerance = 1e-6)
  expect_equal(pl$se.fit, sdv, tolerance = 1e-6)
  # the Gaussian's response mean is f: the same mean and sd, exactly (no Monte Carlo)
  pr <- predict(fit, nd, se.fit = TRUE)
  expect_equal(pr$fit, mean, tolerance = 1e-6)
  expect_equal(pr$se.fit, sdv, tolerance = 1e-6)
  # fitted(): the mixture mean at the training rows
  Xt <- as.matrix(fit$x)
  Mt <- sapply(seq_len(nrow(Th)), function(j) ih_predict(fit, Th[j, ], Xt, train = TRUE)$m)
  expect_equal(unname(fitted(fit)), rowMeans(Mt), tolerance = 1e-6)
  expect_equal(unname(residuals(fit)), df$y - rowMeans(Mt), tolerance = 1e-6)
  # prediction intervals hold the mixture's probability: the mixture CDF of y at the bounds
  # (quantiles of 1000 simulated responses: Monte Carlo sd of the CDF about 0.01)
  pi <- predict(fit, nd, interval = "prediction", level = 0.8)
  S2 <- V + matrix(mx$lik_values[, 1]^2, nrow(V), ncol(V), byrow = TRUE)
  cdf <- function(y, i) mean(pnorm(y, M[i, ], sqrt(S2[i, ])))
  for (i in seq_len(nrow(nd))) {
    expect_lt(abs(cdf(pi$lwr[i], i) - 0.1), 0.035)
    expect_lt(abs(cdf(pi$upr[i], i) - 0.9), 0.035)
  }
  # credible intervals of f: the mixture of Gaussians' quantiles (1000 draws)
  ci <- predict(fit, nd, type = "link", interval = "credible", level = 0.9)
  for (i in seq_len(nrow(nd))) {
    expect_lt(abs(mean(pnorm(ci$lwr[i], M[i, ], sqrt(V[i, ]))) - 0.05), 0.025)
    expect_lt(abs(mean(pnorm(ci$upr[i], M[i, ], sqrt(V[i, ]))) - 0.95), 0.025)
  }
})

test_that("draws carry their point's hyperparameters: log_lik, as_draws and hyper_draws agree", {
  df <- ih_data()
  fit <- ih_fit(df)
  mx <- fit$engine$mixture
  J <- mx$J
  S <- 3L * J
  F <- posterior_linpred(fit, ndraws = S)
  ll <- log_lik(fit, ndraws = S)
  comp <- ((seq_len(S) - 1L) %% J) + 1L
  sig <- mx$lik_values[comp, 1]
  expect_equal(ll, dnorm(matrix(df$y, S, nrow(df), byrow = TRUE), F, sig, log = TRUE), tolerance = 1e-10,
               ignore_attr = TRUE)
  # each draw of f comes from its point's marginal: standardised draws have mean 0, sd 1
  Z <- (F - t(mx$mean[, comp])) / sqrt(t(mx$var[, comp]))
  expect_lt(abs(mean(Z)), 0.05)
  expect_equal(sd(as.vector(Z)), 1, tolerance = 0.05)
  d <- posterior::as_draws_matrix(posterior::as_draws_array(fit, ndraws = S))
  expect_equal(as.numeric(d[, "sigma"]), sig)
  expect_equal(matrix(as.numeric(d[, sprintf("f[%d]", seq_len(nrow(df)))]), S), unname(F),
               ignore_attr = TRUE)
  h <- posterior::as_draws_matrix(hyper_draws(fit))
  expect_equal(nrow(h), J)
  expect_equal(as.numeric(h[, "sigma"]), mx$lik_values[, 1])
  # the loo of the mixture works from these draws
  expect_s3_class(suppressWarnings(loo::loo(fit)), "loo")
  # simulate(): one response per draw, from that draw's sigma
  sims <- simulate(fit, nsim = 4, seed = 3)
  expect_equal(dim(sims), c(nrow(df), 4L))
  expect_true(all(is.finite(as.matrix(sims))))
})

test_that("the fit depends on the seed only, and says what it did", {
  df <- ih_data()
  a <- ih_fit(df)
  b <- augp(y ~ x, df, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 5,
            control = augp_control(threads = 2, integrate_hyper = TRUE, hyper_points = 12))
  nd <- data.frame(x = c(-1, 0, 1))
  expect_identical(predict(a, nd, interval = "prediction"), predict(b, nd, interval = "prediction"))
  c2 <- augp(y ~ x, df, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 6,
             control = augp_control(threads = 1, integrate_hyper = TRUE, hyper_points = 12))
  expect_false(identical(a$engine$mixture$theta, c2$engine$mixture$theta))
  out <- capture.output(print(a))
  expect_true(any(grepl("averaged over the hyperparameters: 12 points", out)))
  s <- capture.output(print(summary(a)))
  expect_true(any(grepl("Laplace approximation", s)))
  hs <- summary(a)$mixture_hyper
  expect_setequal(rownames(hs), c("se.variance", "se.lengthscale", "sigma"))
  expect_true(all(hs$q5 < hs$mode & hs$mode < hs$q95))
  # odd numbers of points round up to pairs
  expect_equal(ih_fit(df, points = 5)$engine$mixture$J, 6L)
})

test_that("a parameter held fixed or ending at a bound is not integrated over", {
  df <- ih_data()
  fit <- augp(y ~ x, df, likelihood = gaussian_noise(sigma = 0.3), kernel = kernel_se(), seed = 5,
              control = augp_control(threads = 1, integrate_hyper = TRUE, hyper_points = 6))
  mx <- fit$engine$mixture
  expect_equal(mx$sd[3], 0)
  expect_equal(mx$lik_values[, 1], rep(0.3, 6))
  expect_false("sigma" %in% rownames(summary(fit)$mixture_hyper))
  expect_false("sigma" %in% posterior::variables(hyper_draws(fit)))
})

test_that("integrate_hyper refuses what it cannot do, naming the argument", {
  df <- ih_data()
  ctl <- augp_control(threads = 1, integrate_hyper = TRUE)
  expect_error(augp(y ~ x, df, likelihood = gaussian_noise(), method = "gibbs", control = ctl),
               "integrate_hyper")
  # (other likelihoods' variational fits integrate too: test-integrate-hyper-vi.R)
  expect_error(augp(y ~ x, df, likelihood = gaussian_noise(), inducing = 10, control = ctl),
               "integrate_hyper")
  expect_error(augp(y ~ x, df, likelihood = gaussian_noise(sigma = 1),
                    control = augp_control(threads = 1, integrate_hyper = TRUE, learn_hyper = FALSE)),
               "integrate_hyper")
  expect_error(augp_control(integrate_hyper = NA), "integrate_hyper")
  expect_error(augp_control(hyper_points = 1), "hyper_points")
  expect_error(augp_control(hyper_points = 2.5), "hyper_points")
  f <- augp(y ~ x, df, likelihood = gaussian_noise(),
            control = augp_control(threads = 1, integrate_hyper = FALSE))
  expect_error(hyper_draws(f), "integrate_hyper")
})

test_that("integrate_hyper = \"auto\" integrates small exact Gaussian fits only, the same way each time", {
  df <- ih_data()
  a1 <- augp(y ~ x, df, control = augp_control(threads = 1))
  a2 <- augp(y ~ x, df, control = augp_control(threads = 1))
  expect_false(is.null(a1$engine$mixture))
  expect_identical(a1$engine$mixture$J, 40L)
  expect_true(isTRUE(a1$control$integrate_hyper))
  # without a seed the points are those of seed 1: the same data give the same fit
  expect_identical(a1$engine$mixture$theta, a2$engine$mixture$theta)
  expect_identical(predict(a1, df[1:3, ]), predict(a2, df[1:3, ]))
  s1 <- augp(y ~ x, df, seed = 1, control = augp_control(threads = 1))
  expect_identical(a1$engine$mixture$theta, s1$engine$mixture$theta)
  # not for other likelihoods, Gibbs fits, sparse fits, fixed hyperparameters or n > 500
  ctl <- augp_control(threads = 1)
  expect_null(augp(y ~ x, df, likelihood = student_t(), control = ctl)$engine$mixture)
  expect_null(augp(y ~ x, df, inducing = 10, control = ctl)$engine$mixture)
  expect_null(augp(y ~ x, df, likelihood = gaussian_noise(sigma = 0.3), kernel = kernel_se(),
                   control = augp_control(threads = 1, learn_hyper = FALSE))$engine$mixture)
  expect_null(suppressWarnings(augp(y ~ x, df, method = "gibbs",
                   control = augp_control(threads = 1, iter = 40, chains = 1)))$engine$mixture)
  big <- ih_data(501)
  fb <- augp(y ~ x, big, control = ctl)
  expect_null(fb$engine$mixture)
  expect_false(fb$control$integrate_hyper)
  expect_error(augp_control(integrate_hyper = "yes"), "integrate_hyper")
})

test_that("the importance ESS is recomputed from the dense target, and a small one warns", {
  # six points of noise: the posterior of the hyperparameters is far from Gaussian
  set.seed(11)
  d <- data.frame(x = runif(6), y = rnorm(6))
  expect_warning(
    fit <- augp(y ~ x, d, kernel = kernel_se(), seed = 1, control = augp_control(threads = 1)),
    "far from the Laplace approximation")
  mx <- fit$engine$mixture
  mode <- mx$mode
  p <- length(mode)
  P <- -ih_hessian(fit, mode)
  Th <- cbind(mx$theta, log(mx$lik_values[, 1]))
  lt <- apply(Th, 1, function(th) ih_lml(fit, th))
  lq <- apply(Th, 1, function(th) -0.5 * sum((th - mode) * (P %*% (th - mode))))
  w <- exp(lt - lq - max(lt - lq))
  expect_equal(mx$ess, sum(w)^2 / sum(w^2), tolerance = 1e-2)
  expect_lt(mx$ess, 4)
})

test_that("predict(type = \"noise\") summarises sigma over the points or draws the fit holds", {
  df <- ih_data()
  nd <- df[c(1, 20, 40), ]
  f <- ih_fit(df)
  # the points' sigma values, as hyper_draws() reports them
  s <- as.numeric(posterior::extract_variable(hyper_draws(f), "sigma"))
  expect_length(s, 12L)
  expect_gt(stats::sd(s), 0)
  ns <- predict(f, nd, type = "noise", se.fit = TRUE, interval = "credible", level = 0.8)
  expect_equal(ns$fit, rep(mean(s), 3))
  expect_equal(ns$se.fit, rep(stats::sd(s), 3))
  expect_equal(ns$lwr, rep(stats::quantile(s, 0.1, names = FALSE), 3))
  expect_equal(ns$upr, rep(stats::quantile(s, 0.9, names = FALSE), 3))
  # one fitted sigma: itself, with standard error 0
  f0 <- augp(y ~ x, df, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 5,
             control = augp_control(threads = 1, integrate_hyper = FALSE))
  n0 <- predict(f0, nd, type = "noise", se.fit = TRUE)
  expect_equal(n0$fit, rep(sigma(f0), 3))
  expect_equal(n0$se.fit, rep(0, 3))
  # full Bayes: over the sampled sigma draws
  g <- suppressWarnings(augp(y ~ x, df, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 5,
                             method = "gibbs", control = augp_control(threads = 1, sample_hyper = TRUE,
                                                                      iter = 120, warmup = 60, chains = 1)))
  sg <- as.numeric(posterior::extract_variable(posterior::as_draws_matrix(g), "sigma"))
  expect_length(sg, 60L)
  ng <- predict(g, nd, type = "noise", se.fit = TRUE)
  expect_equal(ng$fit, rep(mean(sg), 3))
  expect_equal(ng$se.fit, rep(stats::sd(sg), 3))
  # laplace(): the noise sd is sqrt(2) times the scale of each draw
  gl <- suppressWarnings(augp(y ~ x, df, likelihood = laplace(), kernel = kernel_se(), seed = 5,
                              method = "gibbs", control = augp_control(threads = 1, sample_hyper = TRUE,
                                                                       iter = 120, warmup = 60, chains = 1)))
  sl <- sqrt(2) * as.numeric(posterior::extract_variable(posterior::as_draws_matrix(gl), "scale"))
  expect_gt(stats::sd(sl), 0)
  nl <- predict(gl, nd, type = "noise", se.fit = TRUE)
  expect_equal(nl$fit, rep(mean(sl), 3))
  expect_equal(nl$se.fit, rep(stats::sd(sl), 3))
})
