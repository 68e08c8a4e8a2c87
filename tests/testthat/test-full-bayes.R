# Full-Bayes Gibbs (augp_control(sample_hyper = TRUE)): the hyperparameter priors, the
# sampler against an independent quadrature of the same model, simulation-based
# calibration with the hyperparameters, and the front end.
fb_ns <- asNamespace("augmentedGP")

fb_lp <- function(prior, theta, on_sd = FALSE) {
  fb_ns$.hyper_log_prior_cpp(fb_ns$PRIOR_CODES[[prior$family]], prior$a, prior$b, on_sd, theta)
}

test_that("prior densities on the log parameters match R's densities and integrate to 1", {
  th <- seq(-6, 6, by = 0.37)
  cases <- list(
    list(prior_inv_gamma(3, 2), function(x) stats::dgamma(1 / x, 3, rate = 2) / x^2),
    list(prior_half_t(3, 2.5), function(x) 2 * stats::dt(x / 2.5, 3) / 2.5),
    list(prior_lognormal(0.5, 0.7), function(x) stats::dlnorm(x, 0.5, 0.7)),
    list(prior_gamma(2, 3), function(x) stats::dgamma(x, 2, rate = 3)),
    list(prior_half_normal(1.5), function(x) 2 * stats::dnorm(x, 0, 1.5)))
  for (cs in cases) {
    # the parameter itself: x = exp(theta), density times the Jacobian x
    ref <- log(cs[[2]](exp(th))) + th
    ok <- is.finite(ref)  # R's densities underflow in the far tails
    expect_equal(fb_lp(cs[[1]], th)[ok], ref[ok], tolerance = 1e-10)
    # a variance's sd: x = exp(theta / 2), Jacobian x / 2
    ref <- log(cs[[2]](exp(th / 2))) + th / 2 - log(2)
    ok <- is.finite(ref)
    expect_equal(fb_lp(cs[[1]], th, TRUE)[ok], ref[ok], tolerance = 1e-10)
    tot <- stats::integrate(function(t) exp(fb_lp(cs[[1]], t, TRUE)), -80, 80,
                            subdivisions = 1000L)$value
    expect_equal(tot, 1, tolerance = 1e-5)
  }
  expect_error(fb_ns$.hyper_log_prior_cpp(1L, -1, 1, FALSE, 0), "positive")
  expect_error(prior_inv_gamma(0, 1), "shape")
  expect_error(prior_half_t(3, -1), "scale")
  expect_error(augp_prior(sd = 2), "`sd`")
})

test_that("the default lengthscale prior puts 1% below the smallest and above the largest distance", {
  p <- fb_ns$prior_inv_gamma_tuned(0.05, 4)
  expect_equal(stats::pgamma(1 / 0.05, p$a, rate = p$b, lower.tail = FALSE), 0.01, tolerance = 1e-6)
  expect_equal(stats::pgamma(1 / 4, p$a, rate = p$b), 0.01, tolerance = 1e-6)
  X <- cbind(c(0, 1, 3), c(0, 0, 0))
  tab <- fb_ns$hyper_prior_table(kernel_se(lengthscale = 1, variance = 1), NULL, X)
  expect_equal(tab$role, c("variance", "lengthscale"))
  ig <- tab$prior[[2]]
  expect_equal(stats::pgamma(1, ig$a, rate = ig$b, lower.tail = FALSE), 0.01, tolerance = 1e-6)
  expect_equal(stats::pgamma(1 / 3, ig$a, rate = ig$b), 0.01, tolerance = 1e-6)
  # products: only the first factor's variance is sampled; linear lengthscales are fixed
  k <- kernel_se(lengthscale = 1, variance = 1) * kernel_linear(variance = 1, lengthscale = 1)
  tab <- fb_ns$hyper_prior_table(k, augp_prior(sd = prior_half_normal(2)), X)
  expect_equal(tab$code, unname(fb_ns$PRIOR_CODES[c("half_normal", "inv_gamma", "fixed", "fixed")]))
})

# Bernoulli data at three 1-D inputs; f ~ GP(0, sd^2 exp(-d^2 / (2 l^2))) with
# l ~ inv_gamma(4, 3), sd ~ half_normal(1.5).
fb_X <- matrix(c(-1, 0.2, 1.1), ncol = 1)
fb_y <- c(1, 0, 1)
fb_prior <- augp_prior(lengthscale = prior_inv_gamma(4, 3), sd = prior_half_normal(1.5))

# Independent reference: the posterior of (log v, log l) on a grid, with p(y | theta)
# by a 20-point product Gauss-Hermite rule over f = L z (no augmentation, no sampling);
# returns the posterior means of log v, log l and f_1.
fb_reference <- function() {
  gh <- gauss_hermite(20)
  z <- as.matrix(expand.grid(rep(list(sqrt(2) * gh$x), 3)))
  w <- Reduce(`*`, expand.grid(rep(list(gh$w / sqrt(pi)), 3)))
  tv <- seq(-24, 4, by = 0.1)  # the sd prior reaches down to 0: a long left tail
  tl <- seq(-2.5, 2.5, by = 0.05)
  D2 <- outer(fb_X[, 1], fb_X[, 1], "-")^2
  lpv <- fb_lp(prior_half_normal(1.5), tv, TRUE)
  lpl <- fb_lp(prior_inv_gamma(4, 3), tl)
  sgn <- 2 * fb_y - 1
  out <- matrix(0, 0, 4)
  for (i in seq_along(tv)) for (j in seq_along(tl)) {
    K <- exp(tv[i]) * exp(-D2 / (2 * exp(2 * tl[j]))) + diag(1e-6, 3)
    f <- z %*% chol(K)
    lik <- w * exp(rowSums(stats::plogis(sweep(f, 2, sgn, `*`), log.p = TRUE)))
    ml <- sum(lik)
    out <- rbind(out, c(log(ml) + lpv[i] + lpl[j], tv[i], tl[j], sum(lik * f[, 1]) / ml))
  }
  p <- exp(out[, 1] - max(out[, 1]))
  p <- p / sum(p)
  c(log_v = sum(p * out[, 2]), log_l = sum(p * out[, 3]), f1 = sum(p * out[, 4]))
}

test_that("full-Bayes Gibbs agrees with quadrature of the un-augmented model", {
  fit <- fb_ns$augp_engine(fb_X, fb_y, rep(1, 3), kernel_se(lengthscale = 1, variance = 1),
                           "gibbs", mean0 = 0, seed = 11, prior = fb_prior,
                           control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = 4,
                                          iter = 7000, warmup = 1000, threads = 1))
  ref <- fb_reference()
  th <- fit$theta
  draws <- list(log_v = th[, , 1], log_l = th[, , 2], f1 = fit$draws[, , 1])
  for (nm in names(draws)) {
    m <- draws[[nm]]
    mcse <- posterior::mcse_mean(m)
    expect_lt(abs(mean(m) - ref[[nm]]), 4 * mcse + 1e-3, label = nm)
  }
  expect_true(all(fit$accept > 0.2 & fit$accept < 0.95))
})

test_that("the factorisations per sweep are counted: B twice, K at most once, at most 4", {
  X <- matrix(seq(-2, 2, length.out = 12), ncol = 1)
  y <- c(0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0)
  run <- function(warmup, iter) {
    fb_ns$augp_engine(X, y, rep(1, 12), kernel_se(lengthscale = 1, variance = 1),
                      "gibbs", mean0 = 0, seed = 5, prior = fb_prior,
                      control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = 2,
                                     iter = iter, warmup = warmup, threads = 1))
  }
  # no warmup: random-walk proposals only, one per sweep, so per sweep B at the current
  # hyperparameters, B at the proposal, and K: at an accepted proposal, or else at the
  # current ones when the non-centred move of the variance changed K since its last
  # factor (it updates K, not the factor: K = v C + jitter I does not scale with v). An
  # eigendecomposition of C after each accepted proposal serves that move.
  fit <- run(0, 3000)
  a <- fit$accept[, 1]
  expect_length(fit$chol_per_sweep, 2)
  expect_true(all(fit$chol_per_sweep >= 2 + a - 1e-3 & fit$chol_per_sweep <= 3 + 1e-3))
  expect_gt(min(fit$chol_per_sweep), 2.9)
  expect_equal(fit$eig_per_sweep, a, tolerance = 0.02)
  # after warmup a rejected independence proposal gets a second, delayed-rejection stage:
  # one more factorisation when it comes, never more than 4 per sweep in all
  fit <- run(200, 3000)
  a <- fit$accept[, 1]
  expect_true(all(fit$chol_per_sweep > 3 & fit$chol_per_sweep <= 4))
})

test_that("the hyperparameter move leaves p(theta | auxiliaries) invariant (quadrature)", {
  # The move of one block repeated with the auxiliaries fixed is a Metropolis-Hastings
  # chain on p(theta | kappa, omega) = prior x N(kappa / omega; 0, K + W^-1) up to a
  # constant; after warmup it uses the independence proposal and its delayed-rejection
  # second stage. Reference: that density on a grid, written out here.
  X <- matrix(c(-1, -0.3, 0.2, 1.1, 2), ncol = 1)
  kappa <- matrix(c(0.5, -0.5, 0.5, 0.5, -0.5))
  omega <- matrix(c(0.21, 0.16, 0.24, 0.12, 0.19))
  jit <- 1e-6
  pm <- rbind(c(fb_ns$PRIOR_CODES[["half_normal"]], 0, 1.5, 1),
              c(fb_ns$PRIOR_CODES[["inv_gamma"]], 4, 3, 0))
  spec <- fb_ns$kernel_flatten(kernel_se(lengthscale = 1, variance = 1))
  th <- fb_ns$.hyper_block_chain_cpp(spec, X, pm, kappa, omega, jit, 1000L, 40000L, c(3, 9))
  # quadrature: for each lengthscale, B(v) = I + W^1/2 (v C + jit I) W^1/2 = D + v A with
  # D = I + jit W and A = W^1/2 C W^1/2 (the jitter absolute); D^-1/2 A D^-1/2 diagonalised
  # once, so |B| = |D| prod(1 + v e) and r' B^-1 r = sum(u^2 / (1 + v e)), u from D^-1/2 r
  tv <- seq(-26, 6, by = 0.04)
  tl <- seq(-3, 3, by = 0.02)
  r <- kappa[, 1] / sqrt(omega[, 1])
  sw <- sqrt(omega[, 1])
  D2 <- outer(X[, 1], X[, 1], "-")^2
  lpv <- fb_lp(prior_half_normal(1.5), tv, TRUE)
  lpl <- fb_lp(prior_inv_gamma(4, 3), tl)
  lt <- matrix(0, length(tv), length(tl))
  for (j in seq_along(tl)) {
    dd <- 1 / sqrt(1 + jit * omega[, 1])
    A <- (dd * sw) %o% (dd * sw) * exp(-D2 / (2 * exp(2 * tl[j])))
    e <- eigen(A, symmetric = TRUE)
    u2 <- drop(crossprod(e$vectors, dd * r))^2
    den <- 1 + outer(exp(tv), e$values)
    lt[, j] <- -0.5 * rowSums(log(den)) - 0.5 * rowSums(sweep(1 / den, 2, u2, `*`)) + lpv + lpl[j]
  }
  p <- exp(lt - max(lt))
  p <- p / sum(p)
  ref <- c(sum(p * tv), sum(p * rep(tl, each = length(tv))))
  ref2 <- c(sum(p * tv^2), sum(p * rep(tl^2, each = length(tv))))
  for (k in 1:2) {
    m <- matrix(th[, k], ncol = 1)
    expect_lt(abs(mean(m) - ref[k]), 4 * posterior::mcse_mean(m) + 2e-3, label = paste("mean", k))
    m2 <- matrix(th[, k]^2, ncol = 1)
    expect_lt(abs(mean(m2) - ref2[k]), 4 * posterior::mcse_mean(m2) + 2e-3, label = paste("second moment", k))
  }
  expect_true(attr(th, "accept") > 0.2)
})

test_that("with one lengthscale per input the move still leaves p(theta | auxiliaries) invariant", {
  # The variance and d lengthscales on four points: with d = 3 (four sampled parameters)
  # the random-walk / independence scheme, with d = 4 (five) HMC. Reference: the
  # posterior means of the log parameters by self-normalised importance sampling from
  # the prior.
  X4 <- cbind(c(-1, -0.3, 0.2, 1.1), c(0.4, -1, 1.2, 0), c(1, 0.5, -0.8, -0.2),
              c(0.3, 0.9, -0.6, -1.2))
  kappa <- matrix(c(0.5, -0.5, 0.5, 0.5))
  omega <- matrix(c(0.8, 0.6, 0.9, 0.7))
  jit <- 1e-6
  for (d in 3:4) {
    X <- X4[, seq_len(d), drop = FALSE]
    pm <- rbind(c(fb_ns$PRIOR_CODES[["half_normal"]], 0, 1.5, 1),
                matrix(c(fb_ns$PRIOR_CODES[["inv_gamma"]], 4, 3, 0), d, 4, byrow = TRUE))
    spec <- fb_ns$kernel_flatten(kernel_se(lengthscale = rep(1, d), variance = 1))
    th <- fb_ns$.hyper_block_chain_cpp(spec, X, pm, kappa, omega, jit, 1000L, 40000L, c(4, 2))
    set.seed(3)
    S <- 40000
    tv <- 2 * log(abs(stats::rnorm(S, 0, 1.5)))
    tl <- matrix(-log(stats::rgamma(d * S, 4, rate = 3)), S, d)
    r <- kappa[, 1] / sqrt(omega[, 1])
    sw <- sqrt(omega[, 1])
    D2 <- lapply(seq_len(d), function(c) outer(X[, c], X[, c], "-")^2)
    lw <- vapply(seq_len(S), function(i) {
      E <- D2[[1]] / exp(2 * tl[i, 1])
      for (c in 2:d) E <- E + D2[[c]] / exp(2 * tl[i, c])
      B <- diag(4) + (sw %o% sw) * (exp(tv[i]) * exp(-E / 2) + diag(jit, 4))
      L <- chol(B)
      u <- backsolve(L, r, transpose = TRUE)
      -sum(log(diag(L))) - 0.5 * sum(u^2)
    }, 0)
    w <- exp(lw - max(lw))
    w <- w / sum(w)
    ref <- colSums(w * cbind(tv, tl))
    ref_se <- sqrt(colSums(w^2 * (cbind(tv, tl) - rep(ref, each = S))^2))
    for (k in seq_len(d + 1)) {
      m <- matrix(th[, k], ncol = 1)
      expect_lt(abs(mean(m) - ref[k]), 4 * sqrt(posterior::mcse_mean(m)^2 + ref_se[k]^2) + 2e-3,
                label = paste("d", d, "mean", k))
    }
    expect_identical(attr(th, "hmc"), d == 4)
    expect_true(attr(th, "accept") > if (d == 4) 0.5 else 0.1)
  }
})

test_that("the hyperparameter target has an absolute jitter: K = v C + jitter I", {
  # Repeated inputs (C singular) and a jitter large enough to matter: the log target at
  # two kernel variances against a dense computation of prior x N(kappa / omega; mu0,
  # K + W^-1) with K = v C + jit I. With the jitter scaled by v (K = v (C + jit I)) the
  # difference between the two variances would be off by far more than the tolerance.
  X <- matrix(c(0, 0, 0, 1, 1, 2.5))
  n <- nrow(X)
  kappa <- matrix(c(0.5, -0.5, 0.5, 0.5, -0.5, 0.5))
  omega <- matrix(c(0.9, 0.3, 1.4, 0.6, 2.1, 0.5))
  mu0 <- matrix(c(0.2, 0.2, 0.2, -0.1, -0.1, 0.3))
  jit <- 0.05
  pm <- rbind(c(fb_ns$PRIOR_CODES[["half_normal"]], 0, 1.5, 1),
              c(fb_ns$PRIOR_CODES[["inv_gamma"]], 4, 3, 0))
  spec <- fb_ns$kernel_flatten(kernel_se(lengthscale = 1, variance = 1))
  dense <- function(th, scaled = FALSE) {
    C <- exp(-outer(X[, 1], X[, 1], "-")^2 / (2 * exp(2 * th[2])))
    K <- if (scaled) exp(th[1]) * (C + diag(jit, n)) else exp(th[1]) * C + diag(jit, n)
    z <- kappa[, 1] / omega[, 1]
    S <- K + diag(1 / omega[, 1])
    d <- z - mu0[, 1]
    -0.5 * as.numeric(determinant(S)$modulus) - 0.5 * sum(d * solve(S, d)) +
      fb_lp(prior_half_normal(1.5), th[1], TRUE) + fb_lp(prior_inv_gamma(4, 3), th[2])
  }
  lt <- function(th) as.numeric(fb_ns$.hyper_log_target_cpp(spec, X, pm, kappa, omega, mu0, jit, th))
  gr <- function(th) attr(fb_ns$.hyper_log_target_cpp(spec, X, pm, kappa, omega, mu0, jit, th), "grad")
  a <- c(log(4), 0.2)
  b <- c(log(0.05), 0.2)
  c2 <- c(log(30), -0.4)
  expect_equal(lt(a) - lt(b), dense(a) - dense(b), tolerance = 1e-8)
  expect_equal(lt(c2) - lt(b), dense(c2) - dense(b), tolerance = 1e-8)
  expect_gt(abs((dense(a, TRUE) - dense(b, TRUE)) - (dense(a) - dense(b))), 0.1)
  # the gradient in (log v, log l) matches finite differences (no jitter share in log v)
  g <- gr(a)
  fd <- vapply(1:2, function(k) {
    e <- replace(numeric(2), k, 1e-5)
    (lt(a + e) - lt(a - e)) / 2e-5
  }, 0)
  expect_equal(g, fd, tolerance = 1e-6)
})

test_that("full-Bayes Gibbs follows K = v C + jitter I with the jitter absolute", {
  # Gaussian observations (sigma known) at three inputs repeated four times, the
  # lengthscale fixed, v sampled (both the centred move and the whitened move of v), and a
  # jitter of 0.2: within an input the latent values vary with variance 0.2 whatever v. The
  # posterior of t = log v is p(t) N(y; 0, e^t C + 0.2 I + sigma^2 I) (quadrature on a
  # grid). With the jitter scaled by v (within-input variance 0.2 v) the posterior of t
  # would be far off.
  X <- matrix(rep(c(-1, 0, 1.5), each = 4))
  y <- c(1.9, 2.6, 2.2, 1.5, -0.4, 0.3, -0.9, 0.1, 2.8, 3.5, 3.1, 2.4)
  n <- length(y)
  sigma <- 0.3
  jit <- 0.2
  lik <- list(type = "gaussian", q = 1L, y = y, trials = rep(1, n), sigma = sigma)
  p <- augp_prior(lengthscale = fb_ns$new_prior_dist("fixed"), sd = prior_half_normal(3))
  fit <- fb_ns$augp_engine(X, kernel = kernel_se(lengthscale = 1, variance = 1), method = "gibbs",
                           lik = lik, mean0 = 0, seed = 3, prior = p,
                           control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = 4,
                                          iter = 3000, warmup = 500, threads = 1, jitter = jit))
  expect_equal(fit$jitter, jit)
  C <- exp(-outer(X[, 1], X[, 1], "-")^2 / 2)
  tv <- seq(-6, 6, by = 0.01)
  post <- function(scaled) {
    lp <- vapply(tv, function(t) {
      K <- if (scaled) exp(t) * (C + diag(jit, n)) else exp(t) * C + diag(jit, n)
      S <- K + diag(sigma^2, n)
      -0.5 * as.numeric(determinant(S)$modulus) - 0.5 * sum(y * solve(S, y))
    }, 0) + fb_lp(prior_half_normal(3), tv, TRUE)
    w <- exp(lp - max(lp))
    w <- w / sum(w)
    c(mean = sum(w * tv), sd = sqrt(sum(w * tv^2) - sum(w * tv)^2))
  }
  ref <- post(FALSE)
  rel <- post(TRUE)
  lv <- fit$theta[, , 1]
  mcse <- posterior::mcse_mean(lv)
  expect_lt(abs(mean(lv) - ref[["mean"]]), 4 * mcse + 2e-3)
  expect_equal(stats::sd(lv), ref[["sd"]], tolerance = 0.05)
  expect_gt(abs(mean(lv) - rel[["mean"]]), 10 * mcse)
})

# Simulation-based calibration (Talts et al. 2018): theta and f drawn from the prior, y
# from the likelihood, the sampler run on y; the rank of each true value among L thinned
# draws is uniform on 0..L when the sampler targets the posterior. Returns chi-square
# p-values (8 bins) for log v, log l and f at the first point.
fb_sbc <- function(lik_fun, q, reps, seed, sim_sd = 1.5, L = 39) {
  set.seed(seed)
  n <- 8
  X <- matrix(seq(-2, 2, length.out = n), ncol = 1)
  D2 <- outer(X[, 1], X[, 1], "-")^2
  ranks <- matrix(NA_integer_, reps, 3)
  for (r in seq_len(reps)) {
    v <- abs(stats::rnorm(1, 0, sim_sd))^2
    l <- 1 / stats::rgamma(1, 4, rate = 3)
    K <- v * exp(-D2 / (2 * l^2)) + diag(1e-6, n)
    F <- t(chol(K)) %*% matrix(stats::rnorm(n * q), n, q)
    lik <- lik_fun(F)
    fit <- fb_ns$augp_engine(X, kernel = kernel_se(lengthscale = 1, variance = 1),
                             method = "gibbs", mean0 = 0, seed = r, prior = fb_prior, lik = lik,
                             control = list(sample_hyper = TRUE, learn_hyper = FALSE,
                                            chains = 1, iter = 1000, warmup = 220,
                                            threads = 1))
    keep <- seq(20, 780, by = 20)
    th <- fit$theta[keep, 1, ]
    f1 <- fit$draws[keep, 1, 1]
    ranks[r, ] <- c(sum(th[, 1] < log(v)), sum(th[, 2] < log(l)), sum(f1 < F[1, 1]))
  }
  apply(ranks, 2, function(rk) {
    counts <- tabulate(rk %/% 5 + 1, 8)
    suppressWarnings(stats::chisq.test(counts)$p.value)
  })
}

fb_bernoulli <- function(F) {
  list(type = "bernoulli", q = 1L, y = stats::rbinom(nrow(F), 1, stats::plogis(F[, 1])),
       trials = rep(1, nrow(F)))
}

test_that("simulation-based calibration holds with the hyperparameters sampled (Bernoulli)", {
  p <- fb_sbc(fb_bernoulli, 1L, 160, 1)
  expect_true(all(p > 0.001), label = paste(signif(p, 3), collapse = ", "))
  # the check has power: data simulated under a wider sd prior than the sampler's fail it
  p_bad <- fb_sbc(fb_bernoulli, 1L, 160, 1, sim_sd = 4)
  expect_lt(min(p_bad), 0.001)
})

test_that("simulation-based calibration holds for stick-breaking and logistic-softmax", {
  sb <- function(F) {
    # categories 1..3 by sticks sigmoid(f_1), sigmoid(f_2)
    u1 <- stats::runif(nrow(F)) < stats::plogis(F[, 1])
    u2 <- stats::runif(nrow(F)) < stats::plogis(F[, 2])
    k <- ifelse(u1, 1L, ifelse(u2, 2L, 3L))
    list(type = "stick_breaking", q = 2L, Y = outer(k, 1:3, "==") + 0)
  }
  p <- fb_sbc(sb, 2L, 100, 2)
  expect_true(all(p > 0.001), label = paste(signif(p, 3), collapse = ", "))
  sm <- function(F) {
    P <- stats::plogis(F)
    k <- apply(P / rowSums(P), 1, function(pr) sample.int(3, 1, prob = pr))
    list(type = "logistic_softmax", q = 3L, Y = outer(k, 1:3, "==") + 0, bijective = FALSE,
         theta = rep(1, 3))
  }
  p <- fb_sbc(sm, 3L, 100, 3)
  expect_true(all(p > 0.001), label = paste(signif(p, 3), collapse = ", "))
})

test_that("full-Bayes fits report, predict and convert with their hyperparameters", {
  d <- MASS::Pima.tr[1:80, ]
  fit <- suppressWarnings(augp(type ~ glu + bmi, d, method = "gibbs", seed = 3,
                               prior = augp_prior(sd = prior_half_normal(2)),
                               control = augp_control(sample_hyper = TRUE, chains = 2,
                                                      iter = 400, threads = 2)))
  h <- hyper_draws(fit)
  expect_s3_class(h, "draws_array")
  expect_equal(posterior::variables(h), c("se.variance", "se.lengthscale.glu", "se.lengthscale.bmi"))
  expect_equal(posterior::niterations(h), 300)  # 400 - floor(400 / 4)
  # the printed kernel holds the posterior medians
  expect_equal(unname(coef(fit)), unname(apply(h, 3, stats::median)), tolerance = 1e-4)
  expect_equal(posterior::variables(posterior::as_draws_array(fit))[1:3], posterior::variables(h))
  expect_output(print(fit), "Hyperparameters sampled")
  expect_output(print(summary(fit)), "Hyperparameter posterior")
  expect_s3_class(plot(fit, type = "trace"), "ggplot")
  # predictions average over the hyperparameters: equal to averaging fixed-kernel
  # predictions over the groups of draws that share a value
  nd <- MASS::Pima.te[1:4, ]
  p <- predict(fit, nd, type = "link", se.fit = TRUE)
  eng <- fit$engine
  S <- prod(dim(eng$draws)[1:2])
  th <- matrix(eng$theta, S)
  Xn <- scale(as.matrix(nd[, c("glu", "bmi")]), fit$centre, fit$scale)
  flat <- matrix(eng$draws, S)
  cond <- vapply(seq_len(S), function(s) {
    k <- fb_ns$engine_set_params(eng$kernel, th[s, ])
    Kxx <- fb_ns$.gp_kernel_matrix_cpp(fb_ns$kernel_flatten(k), eng$X, eng$X, eng$jitter)
    Ksx <- fb_ns$.gp_kernel_matrix_cpp(fb_ns$kernel_flatten(k), Xn, eng$X)
    as.numeric(fit$mean0 + Ksx %*% solve(Kxx, flat[s, ] - fit$mean0))
  }, numeric(4))
  expect_equal(unname(p$fit), rowMeans(cond), tolerance = 1e-6)
  expect_error(augp(type ~ glu, d, control = augp_control(sample_hyper = TRUE)), "method = \"gibbs\"")
  vi <- augp(type ~ glu, d)
  expect_error(hyper_draws(vi), "sample_hyper = TRUE")
  expect_error(augp(type ~ glu, d, method = "gibbs", prior = list(sd = 1)), "`prior`")
})
