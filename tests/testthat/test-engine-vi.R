# The augmented likelihood, the Gaussian step and CAVI.

test_that("augmentation identity: log p(y, omega | f) - log p(omega | y, f) = log p(y | f)", {
  for (case in list(list(y = 1, N = 1), list(y = 0, N = 1), list(y = 2, N = 3))) {
    lik <- list(type = "binomial", y = case$y, trials = case$N)
    for (f in c(-2.3, 0.4, 3.1)) {
      ll <- eng_ns$.gp_lik_eval_cpp(lik, matrix(0), matrix(1), matrix(f))$loglik
      expect_equal(ll, binom_loglik(case$y, case$N, f), tolerance = 1e-12)
      kappa <- case$y - case$N / 2
      for (om in c(0.05, 0.3, 1.7)) {
        joint <- lchoose(case$N, case$y) - case$N * log(2) + kappa * f - om * f^2 / 2 +
          dpg(om, case$N, 0, log = TRUE)
        cond <- dpg(om, case$N, f, log = TRUE)
        expect_equal(joint - cond, ll, tolerance = 1e-8)
      }
    }
  }
})

test_that("the Gaussian step equals the dense textbook formulas", {
  set.seed(2)
  n <- 6
  X <- matrix(rnorm(n * 2), n)
  K <- kernel_matrix(kernel_se(1.5, 0.9), X) + diag(1e-6, n)
  omega <- c(0.3, 0, 1.2, 0.05, 2, 0.7)
  kappa <- c(0.5, -0.5, 1, 0, -1.5, 0.5)
  mu0 <- c(0.2, -0.1, 0, 0.4, 0.3, -0.3)
  st <- eng_ns$.gp_gaussian_step_cpp(K, omega, kappa, mu0, 0L, c(1, 2))
  S <- solve(solve(K) + diag(omega))
  m <- drop(S %*% (kappa + solve(K, mu0)))
  expect_equal(st$cov, S, tolerance = 1e-8)
  expect_equal(st$diag, diag(S), tolerance = 1e-8)
  expect_equal(st$mean, m, tolerance = 1e-8)
  expect_equal(st$alpha, drop(solve(K, m - mu0)), tolerance = 1e-6)
  kl <- 0.5 * (sum(diag(solve(K, S))) + sum((m - mu0) * solve(K, m - mu0)) - n +
                 determinant(K)$modulus - determinant(S)$modulus)
  expect_equal(st$kl, as.numeric(kl), tolerance = 1e-6)
})

test_that("Gaussian-step draws (Matheron's rule) have mean m and covariance S", {
  n <- 3
  K <- kernel_matrix(kernel_se(1, 1), matrix(c(0, 0.5, 1.5)))
  omega <- c(0.8, 0.2, 1.5)
  kappa <- c(0.5, -0.5, 0.5)
  st <- eng_ns$.gp_gaussian_step_cpp(K, omega, kappa, 0.3, 40000L, c(7, 9))
  d <- st$draws
  se <- sqrt(diag(st$cov) / nrow(d))
  expect_true(all(abs(colMeans(d) - st$mean) < 5 * se))
  expect_lt(max(abs(stats::cov(d) - st$cov)), 0.03)
})

vi_data <- function(n, seed = 1, trials = 1) {
  set.seed(seed)
  X <- matrix(sort(runif(n, -2, 2)))
  f <- 1.5 * sin(2 * X[, 1])
  y <- stats::rbinom(n, trials, stats::plogis(f))
  list(X = X, y = y, trials = rep(trials, n))
}

test_that("CAVI: the ELBO never decreases, with and without hyperparameter learning", {
  d <- vi_data(30)
  for (learn in c(FALSE, TRUE)) {
    fit <- eng_ns$augp_engine(d$X, d$y, d$trials, kernel_se(2, 0.3), "vi",
                              eng_fixed(learn_hyper = learn, maxit = 300, tol = 1e-12))
    e <- fit$elbo
    expect_gt(length(e), 3)
    expect_true(all(diff(e) >= -1e-10 * abs(e[-1])), info = paste("learn =", learn))
    expect_true(fit$converged)
  }
  d3 <- vi_data(25, seed = 3, trials = 4)
  fit <- eng_ns$augp_engine(d3$X, d3$y, d3$trials, kernel_matern(2.5) + kernel_linear(0.5), "vi",
                            eng_fixed(learn_hyper = TRUE, tol = 1e-12))
  e <- fit$elbo
  expect_true(all(diff(e) >= -1e-10 * abs(e[-1])))
})

test_that("hyperparameter learning raises the ELBO above a poor fixed kernel", {
  set.seed(5)
  X <- matrix(sort(runif(60, -2, 2)))
  d <- list(X = X, y = stats::rbinom(60, 1, stats::plogis(4 * sin(2 * X[, 1]))), trials = rep(1, 60))
  k0 <- kernel_se(0.1, 10)
  fixed <- eng_ns$augp_engine(d$X, d$y, d$trials, k0, "vi", eng_fixed())
  learned <- eng_ns$augp_engine(d$X, d$y, d$trials, k0, "vi", eng_fixed(learn_hyper = TRUE))
  expect_gt(tail(learned$elbo, 1), tail(fixed$elbo, 1) + 1)
  expect_false(identical(learned$kernel, k0))
})

test_that("the final ELBO equals an independent dense computation", {
  d <- vi_data(12, seed = 4, trials = 3)
  k <- kernel_se(1.3, 0.7)
  fit <- eng_ns$augp_engine(d$X, d$y, d$trials, k, "vi", eng_fixed(tol = 1e-14, maxit = 500))
  K <- kernel_matrix(k, d$X) + diag(fit$jitter, 12)
  S <- solve(solve(K) + diag(fit$omega))
  m <- fit$mean
  expect_equal(diag(S), fit$var, tolerance = 1e-6)
  v <- diag(S)
  cc <- sqrt(m^2 + v)
  th <- pg_mean(d$trials, cc)
  N <- d$trials
  local <- sum(lchoose(N, d$y) - N * log(2) + (d$y - N / 2) * m - (m^2 + v) * th / 2 -
                 (N * log(cosh(cc / 2)) - cc^2 * th / 2))
  kl <- 0.5 * (sum(diag(solve(K, S))) + sum(m * solve(K, m)) - 12 +
                 determinant(K)$modulus - determinant(S)$modulus)
  expect_equal(tail(fit$elbo, 1), local - as.numeric(kl), tolerance = 1e-7)
})

test_that("ELBO <= log p(y) by quadrature for n = 1 and n = 2", {
  # n = 1
  for (case in list(list(y = 1, N = 1, v = 2), list(y = 0, N = 1, v = 0.5),
                    list(y = 2, N = 5, v = 3))) {
    fit <- eng_ns$augp_engine(matrix(0), case$y, case$N, kernel_se(case$v), "vi",
                              eng_fixed(tol = 1e-14, maxit = 500))
    lp <- log(stats::integrate(function(f) stats::dbinom(case$y, case$N, stats::plogis(f)) *
                                 stats::dnorm(f, 0, sqrt(case$v)), -Inf, Inf,
                               rel.tol = 1e-12)$value)
    elbo <- tail(fit$elbo, 1)
    expect_lte(elbo, lp + 1e-9)
    expect_gt(elbo, lp - 0.1)  # and not a useless bound
  }
  # n = 2 by a tensor Gauss-Hermite rule
  X <- matrix(c(0, 0.8))
  k <- kernel_se(2.5, 1)
  K <- kernel_matrix(k, X) + diag(1e-8, 2)
  L <- t(chol(K))
  gh <- gauss_hermite(80)
  Z <- as.matrix(expand.grid(gh$x, gh$x)) * sqrt(2)
  W <- outer(gh$w, gh$w) / pi
  F <- Z %*% t(L)
  for (yy in list(c(1, 0), c(1, 1), c(2, 0))) {
    N <- if (max(yy) > 1) c(3, 2) else c(1, 1)
    pl <- stats::dbinom(yy[1], N[1], stats::plogis(F[, 1])) *
      stats::dbinom(yy[2], N[2], stats::plogis(F[, 2]))
    lp <- log(sum(as.numeric(W) * pl))
    fit <- eng_ns$augp_engine(X, yy, N, k, "vi", eng_fixed(tol = 1e-14, maxit = 500))
    elbo <- tail(fit$elbo, 1)
    expect_lte(elbo, lp + 1e-9)
    expect_gt(elbo, lp - 0.1)
  }
})

test_that("analytic hyperparameter gradients match finite differences", {
  d <- vi_data(15, seed = 8, trials = 2)
  X <- cbind(d$X, rnorm(15))
  kappa <- d$y - d$trials / 2
  omega <- runif(15, 0.1, 0.6)
  omega[3] <- 0
  for (k in list(kernel_se(1.2, c(0.5, 2)), kernel_matern(1.5, 0.8, 1) + kernel_linear(0.3),
                 kernel_periodic(1, 1, 2) * kernel_se(1, 1.5))) {
    v <- eng_ns$augp_engine_elbo_grad(k, X, kappa, omega, mean0 = 0.2)
    th <- eng_ns$kernel_get_params(k)
    g <- attr(v, "gradient")
    for (j in seq_along(th)) {
      h <- 1e-5
      tp <- th; tp[j] <- tp[j] + h
      tm <- th; tm[j] <- tm[j] - h
      fd <- (eng_ns$augp_engine_elbo_grad(eng_ns$kernel_set_params(k, tp), X, kappa, omega,
                                          0.2, gradient = FALSE) -
               eng_ns$augp_engine_elbo_grad(eng_ns$kernel_set_params(k, tm), X, kappa, omega,
                                            0.2, gradient = FALSE)) / (2 * h)
      expect_equal(g[j], as.numeric(fd), tolerance = 1e-5)
    }
  }
})

test_that("the collapsed bound is the ELBO maximised over q(f) for fixed q(omega)", {
  d <- vi_data(10, seed = 9)
  k <- kernel_se(1, 0.8)
  K <- kernel_matrix(k, d$X) + diag(1e-8, 10)
  kappa <- d$y - 0.5
  omega <- runif(10, 0.1, 0.3)
  S <- solve(solve(K) + diag(omega))
  m <- drop(S %*% kappa)
  # E_q[kappa f - omega f^2 / 2] - KL(q || p) at the optimal q
  val <- sum(kappa * m - omega * (m^2 + diag(S)) / 2) -
    0.5 * (sum(diag(solve(K, S))) + sum(m * solve(K, m)) - 10 +
             determinant(K)$modulus - determinant(S)$modulus)
  b <- eng_ns$augp_engine_elbo_grad(k, d$X, kappa, omega, 0, 1e-8, gradient = FALSE)
  expect_equal(as.numeric(b), as.numeric(val), tolerance = 1e-7)
})

test_that("VI prediction at the training inputs reproduces q(f)", {
  d <- vi_data(20, seed = 12)
  fit <- eng_ns$augp_engine(d$X, d$y, d$trials, kernel_se(), "vi",
                            eng_fixed(learn_hyper = TRUE, jitter = 1e-8))
  p <- eng_ns$augp_engine_predict(fit, d$X)
  expect_equal(p$mean, fit$mean, tolerance = 1e-6)
  expect_equal(p$var, fit$var, tolerance = 1e-5)
  expect_null(p$draws)
})

test_that("duplicate inputs with zero jitter raise the jitter and report it", {
  X <- matrix(c(0, 0, 1, 1, 2))
  fit <- eng_ns$augp_engine(X, c(1, 0, 1, 1, 0), rep(1, 5), kernel_se(), "gibbs",
                            eng_fixed(jitter = 0, iter = 30, warmup = 10, chains = 1), seed = 1)
  expect_true(fit$jitter_increased)
  expect_gt(fit$jitter, 0)
})

test_that("collapsed bound and gradient are exact beyond the blocked-inverse base size", {
  set.seed(31)
  n <- 150  # > 64: the recursive triangular inverse and crossproduct are used
  X <- matrix(rnorm(n * 2), n)
  kappa <- stats::rbinom(n, 1, 0.4) - 0.5
  omega <- runif(n, 0.05, 0.3)
  omega[c(4, 90)] <- 0
  k <- kernel_se(1.4, c(0.8, 1.3))
  v <- eng_ns$augp_engine_elbo_grad(k, X, kappa, omega, mean0 = 0.3, jitter = 1e-8)
  K <- kernel_matrix(k, X) + diag(1e-8, n)
  sw <- sqrt(omega)
  B <- diag(n) + sw * K * rep(sw, each = n)
  pos <- omega > 0
  r <- ifelse(pos, (kappa - omega * 0.3) / ifelse(pos, sw, 1), 0)
  ref <- sum(kappa[pos]^2 / (2 * omega[pos])) - 0.5 * determinant(B)$modulus -
    0.5 * sum(r * solve(B, r))
  expect_equal(as.numeric(v), as.numeric(ref), tolerance = 1e-10)
  # gradient against the dense formula (a' dK a - tr(R dK)) / 2
  a <- sw * solve(B, r)
  R <- sw * solve(B) * rep(sw, each = n)
  dK <- eng_ns$.gp_kernel_grad_cpp(eng_ns$kernel_flatten(k), X)$grad
  dense <- vapply(dK, function(D) 0.5 * (sum(a * (D %*% a)) - sum(R * D)), numeric(1))
  expect_equal(attr(v, "gradient"), dense, tolerance = 1e-8)
})

test_that("SQUAREM-accelerated CAVI reaches the plain CAVI fixed point, monotonically", {
  d <- vi_data(40, seed = 14, trials = 3)
  K <- kernel_matrix(kernel_se(3, 0.6), d$X) + diag(1e-8, 40)
  lik <- eng_ns$engine_lik(d$y, d$trials)
  plain <- eng_ns$.gp_cavi_cpp(K, lik, 0.1, NULL, NULL, 2000L, 1e-14, NA_real_)
  acc <- eng_ns$engine_cavi(K, lik, 0.1, NULL, NULL, 2000L, 1e-14)
  expect_true(acc$converged)
  expect_lt(length(acc$elbo), length(plain$elbo))
  expect_true(all(diff(acc$elbo) >= -1e-10 * abs(acc$elbo[-1])))
  expect_equal(tail(acc$elbo, 1), tail(plain$elbo, 1), tolerance = 1e-9)
  expect_equal(as.numeric(acc$m), as.numeric(plain$m), tolerance = 1e-5)
  expect_equal(as.numeric(acc$v), as.numeric(plain$v), tolerance = 1e-5)
})

test_that("hyperparameter learning on subset levels is deterministic and reaches a stationary point", {
  set.seed(15)
  n <- 200
  X <- matrix(rnorm(n * 2), n)
  y <- stats::rbinom(n, 1, stats::plogis(2 * sin(2 * X[, 1]) + X[, 2]))
  lik <- eng_ns$engine_lik(y, rep(1, n))
  ctl <- eng_ns$as_augp_control(eng_fixed(learn_hyper = TRUE, tol = 1e-10))
  # level_min = 60: levels 100, 200 (the full data polished with L-BFGS)
  h1 <- eng_ns$engine_hyper_learn(X, lik, kernel_se(), ctl, matrix(0, n, 1), 1e-8, level_min = 60,
                                  polish = 30)
  h2 <- eng_ns$engine_hyper_learn(X, lik, kernel_se(), ctl, matrix(0, n, 1), 1e-8, level_min = 60,
                                  polish = 30)
  expect_equal(h1$levels, c(100, 200))
  expect_identical(eng_ns$kernel_get_params(h1$kernel), eng_ns$kernel_get_params(h2$kernel))
  expect_true(all(diff(h1$path) > 0))
  # envelope theorem: at the optimum the collapsed-bound gradient vanishes
  g <- attr(eng_ns$augp_engine_elbo_grad(h1$kernel, X, h1$state$kappa, h1$state$omega, 0, 1e-8),
            "gradient")
  expect_lt(max(abs(g)), 0.05)
  # without the polish the subset optimum is kept and q starts from its predictions
  h0 <- eng_ns$engine_hyper_learn(X, lik, kernel_se(), ctl, matrix(0, n, 1), 1e-8, level_min = 60)
  fit0 <- eng_ns$engine_cavi(eng_ns$engine_K(h0$kernel, X, 1e-8), lik, 0, h0$state$kappa,
                             h0$state$omega, 500L, 1e-10)
  cold <- eng_ns$engine_cavi(eng_ns$engine_K(h0$kernel, X, 1e-8), lik, 0, NULL, NULL, 500L, 1e-10)
  expect_equal(tail(fit0$elbo, 1), tail(cold$elbo, 1), tolerance = 1e-8)
  expect_lte(length(fit0$elbo), length(cold$elbo))
})

test_that("the persistent search model evaluates the profiled ELBO as CAVI plus the collapsed bound", {
  set.seed(21)
  n <- 120
  X <- matrix(rnorm(n * 2), n)
  y <- stats::rbinom(n, 1, stats::plogis(sin(2 * X[, 1])))
  lik <- eng_ns$engine_lik(y, rep(1, n))
  ctl <- eng_ns$as_augp_control(eng_fixed(tol = 1e-8))
  k <- kernel_se(variance = 1.5, lengthscale = 0.8)
  mod <- eng_ns$engine_model(X, lik, k, matrix(0.1, n, 1), 1e-8, ctl)
  expect_null(eng_ns$.model_dense_state(mod))
  th <- unname(eng_ns$kernel_get_params(k))
  o <- eng_ns$.model_dense_eval(mod, th)
  ref <- eng_ns$engine_cavi(eng_ns$engine_K(k, X, 1e-8), lik, 0.1, NULL, NULL, 200L, 1e-8)
  g <- attr(eng_ns$augp_engine_elbo_grad(k, X, ref$kappa, ref$omega, 0.1, 1e-8), "gradient")
  expect_equal(o$value, tail(ref$elbo, 1), tolerance = 1e-12)
  expect_equal(o$gradient, as.numeric(g), tolerance = 1e-10)
  expect_equal(eng_ns$.model_dense_state(mod)$kappa, ref$kappa, tolerance = 1e-12)
  # a subset level: the same as the model built on those rows
  idx <- seq(1, n, by = 2)
  expect_false(eng_ns$.model_dense_level(mod, idx, FALSE))
  sub <- eng_ns$engine_model(X[idx, ], list(type = "binomial", q = 1L, y = as.double(y[idx]),
                                            trials = rep(1, length(idx))), k,
                             matrix(0.1, length(idx), 1), 1e-8, ctl)
  expect_identical(eng_ns$.model_dense_eval(mod, th + 0.1), eng_ns$.model_dense_eval(sub, th + 0.1))
  # warm start at all rows from the subset's best fit
  expect_true(eng_ns$.model_dense_level(mod, seq_len(n), TRUE))
  expect_equal(dim(eng_ns$.model_dense_state(mod)$omega), c(n, 1L))
  expect_error(eng_ns$.model_dense_eval(mod, 1), "theta")
})
