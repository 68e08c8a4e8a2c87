# The HMC move of hyperparameter blocks with at least five sampled parameters (one
# lengthscale per input): its gradient, its target on an exact Gaussian regression, and
# its independence of the thread count.
hmc_ns <- asNamespace("augmentedGP")

test_that("the gradient of the hyperparameter log target matches finite differences", {
  set.seed(1)
  n <- 12
  X <- matrix(stats::rnorm(n * 4), n, 4)
  # two latent columns sharing the kernel; one zero weight (a row without pseudo-data)
  kappa <- matrix(stats::rnorm(2 * n), n, 2)
  omega <- matrix(stats::runif(2 * n, 0.3, 2), n, 2)
  omega[3, 1] <- 0
  mu0 <- matrix(stats::rnorm(2 * n, 0, 0.3), n, 2)
  codes <- hmc_ns$PRIOR_CODES
  pm <- rbind(c(codes[["half_normal"]], 0, 1.5, 1), c(codes[["inv_gamma"]], 4, 3, 0),
              c(codes[["lognormal"]], 0.2, 1, 0), c(codes[["half_t"]], 3, 2, 0),
              c(codes[["gamma"]], 2, 1, 0))
  th <- c(0.3, -0.2, 0.4, 0.1, -0.5)
  kernels <- list(kernel_se(lengthscale = rep(1, 4), variance = 1),
                  kernel_matern(nu = 2.5, lengthscale = rep(1, 4), variance = 1))
  for (k in kernels) {
    spec <- hmc_ns$kernel_flatten(k)
    # jitter 1e-3: its share of the gradient in log v is visible
    lt <- function(t) hmc_ns$.hyper_log_target_cpp(spec, X, pm, kappa, omega, mu0, 1e-3, t)
    v <- lt(th)
    g <- attr(v, "grad")
    expect_length(g, 5)
    fd <- vapply(1:5, function(j) {
      e <- replace(numeric(5), j, 1e-5)
      (lt(th + e) - lt(th - e)) / 2e-5
    }, 0)
    expect_equal(g, fd, tolerance = 1e-6)
    expect_true(all(abs(g) > 1e-3))
  }
  # a fixed parameter is not in the gradient
  pm2 <- pm
  pm2[3, ] <- c(codes[["fixed"]], 0, 1, 0)
  v <- hmc_ns$.hyper_log_target_cpp(hmc_ns$kernel_flatten(kernels[[1]]), X, pm2, kappa, omega,
                                    mu0, 1e-3, th)
  expect_length(attr(v, "grad"), 4)
})

# n = 30, four inputs (two irrelevant), sigma known: the posterior of (log v, log l_1..4)
# is p(theta) N(y; m0, K_theta + sigma^2 I), whatever the augmentation.
hmc_X <- local({
  set.seed(7)
  matrix(stats::runif(30 * 4, -1, 1), 30, 4)
})
hmc_y <- local({
  set.seed(8)
  sin(2 * hmc_X[, 1]) + 0.6 * hmc_X[, 2] + stats::rnorm(30, sd = 0.3)
})
hmc_prior <- augp_prior(lengthscale = prior_inv_gamma(3, 2), sd = prior_half_normal(1.5))

hmc_fit <- function(threads, chains = 2, iter = 3000, warmup = 500, seed = 21) {
  lik <- list(type = "gaussian", q = 1L, y = hmc_y, trials = rep(1, 30), sigma = 0.3)
  hmc_ns$augp_engine(hmc_X, kernel = kernel_se(lengthscale = rep(1, 4), variance = 1),
                     method = "gibbs", lik = lik, mean0 = 0, seed = seed, prior = hmc_prior,
                     control = list(sample_hyper = TRUE, learn_hyper = FALSE, chains = chains,
                                    iter = iter, warmup = warmup, threads = threads))
}

test_that("HMC draws of ARD hyperparameters match importance sampling of the exact posterior", {
  fit <- hmc_fit(2, chains = 2, iter = 4500, warmup = 500)
  th <- fit$theta
  expect_equal(dim(th)[3], 5)
  # reference, in R from the model alone: the log posterior of (log v, log l), its mode
  # and Hessian, then self-normalised importance sampling from a t_5 around them
  D2 <- lapply(1:4, function(c) outer(hmc_X[, c], hmc_X[, c], "-")^2)
  log_post <- function(t) {
    C <- exp(-Reduce(`+`, lapply(1:4, function(c) D2[[c]] / exp(2 * t[1 + c]))) / 2)
    S <- exp(t[1]) * (C + diag(1e-6, 30)) + diag(0.09, 30)
    R <- chol(S)
    z <- backsolve(R, hmc_y, transpose = TRUE)
    sdv <- exp(t[1] / 2)
    l <- exp(t[2:5])
    # half-normal(1.5) on sd = exp(t1 / 2) with |d sd / d t1| = sd / 2; inverse gamma(3, 2)
    # on each l with |dl / dt| = l
    lp <- log(2 * stats::dnorm(sdv, 0, 1.5)) + log(sdv / 2) +
      sum(3 * log(2) - lgamma(3) - 4 * log(l) - 2 / l + log(l))
    -sum(log(diag(R))) - 0.5 * sum(z^2) + lp
  }
  opt <- stats::optim(c(0, 0, 0, 0.5, 0.5), function(t) -log_post(t), method = "BFGS",
                      hessian = TRUE)
  V <- 1.5 * solve(opt$hessian)
  set.seed(3)
  S <- 30000
  nu <- 5
  Z <- matrix(stats::rnorm(S * 5), S, 5) %*% chol(V) / sqrt(stats::rchisq(S, nu) / nu)
  P <- sweep(Z, 2, opt$par, `+`)
  lq <- -0.5 * (nu + 5) * log1p(rowSums((Z %*% solve(chol(V)))^2) / nu)
  lw <- apply(P, 1, log_post) - lq
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  expect_gt(1 / sum(w^2), 3000)  # the importance weights are not degenerate
  ref <- colSums(w * P)
  ref_sd <- sqrt(colSums(w * (P - rep(ref, each = S))^2))
  ref_se <- sqrt(colSums(w^2 * (P - rep(ref, each = S))^2))
  for (k in 1:5) {
    m <- th[, , k]
    expect_lt(abs(mean(m) - ref[k]), 4 * sqrt(posterior::mcse_mean(m)^2 + ref_se[k]^2),
              label = paste("mean", k))
    expect_equal(stats::sd(m), unname(ref_sd[k]), tolerance = 0.12, label = paste("sd", k))
  }
  # the chains mix
  expect_true(all(apply(th, 3, posterior::ess_bulk) > 400))
  expect_true(all(fit$accept > 0.5))
})

test_that("HMC hyperparameter draws do not depend on the thread count", {
  a <- hmc_fit(1, chains = 2, iter = 300, warmup = 100)
  b <- hmc_fit(2, chains = 2, iter = 300, warmup = 100)
  expect_identical(a$theta, b$theta)
  expect_identical(a$draws, b$draws)
})
