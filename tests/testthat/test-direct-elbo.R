# The direct ELBO E_q[log p(y | f)] - KL(q(f) || p(f)) (Likelihood::expected_loglik,
# the KL that CAVI returns, engine_direct_elbo) and kernel selection by it
# (augp_control(hyper_objective = "direct")).
de_ns <- asNamespace("augmentedGP")

de_counts <- function(n, K, size, seed) {
  set.seed(seed)
  t(vapply(seq_len(n), function(i) as.numeric(stats::rmultinom(1, size[i], stats::runif(K))),
           numeric(K)))
}

de_cases <- list(
  bernoulli = list(type = "bernoulli", q = 1L, y = c(0, 1, 1, 0, 1, 0), trials = rep(1, 6)),
  binomial = list(type = "binomial", q = 1L, y = c(0, 3, 5, 2, 0, 9), trials = c(4, 3, 8, 2, 1, 12)),
  logistic_softmax = list(type = "logistic_softmax", q = 3L, Y = de_counts(6, 3, c(1, 1, 3, 1, 2, 1), 4),
                          bijective = FALSE, theta = c(1, 2, 0.5)),
  stick_breaking = list(type = "stick_breaking", q = 3L, Y = de_counts(6, 4, c(3, 0, 5, 1, 2, 8), 6)),
  gaussian = list(type = "gaussian", q = 1L, y = c(-1.2, 0.3, 2.5, 0.1, -3, 1), trials = c(1, 1, 2, 1, 3, 1),
                  sigma = 0.7),
  student_t = list(type = "student_t", q = 1L, y = c(-1.2, 0.3, 2.5, 0.1, -3, 6), trials = c(1, 1, 2, 1, 3, 1),
                   sigma = 0.7, nu = 5)
)

# E log p(y_i | f_i) per observation by a product Gauss-Hermite rule over the q marginals.
de_quadrature <- function(lik, m, v, k = if (ncol(m) == 1) 40 else 12) {
  gh <- gauss_hermite(k)
  x <- sqrt(2) * gh$x
  w <- gh$w / sqrt(pi)
  q <- ncol(m)
  idx <- as.matrix(expand.grid(rep(list(seq_len(k)), q)))
  X <- matrix(x[idx], ncol = q)
  W <- apply(matrix(w[idx], ncol = q), 1, prod)
  arr <- array(0, c(nrow(X), nrow(m), q))
  for (t in seq_len(nrow(X))) arr[t, , ] <- m + sqrt(v) * rep(X[t, ], each = nrow(m))
  drop(W %*% de_ns$.lik_loglik_obs_cpp(lik, arr))
}

test_that("expected_loglik is E_q log p(y | f) under the Gaussian marginals, for every likelihood", {
  for (nm in names(de_cases)) {
    lik <- de_cases[[nm]]
    q <- lik$q
    n <- 6
    set.seed(3)
    m <- matrix(rnorm(n * q, sd = 1.5), n, q)
    v <- matrix(runif(n * q, 0.05, 1.5), n, q)
    S <- 4000
    Z <- matrix(rnorm(S * q), S, q)
    el <- de_ns$.lik_expected_loglik_cpp(lik, m, v, Z)
    expect_length(el, n)
    # Monte Carlo standard errors of the default at these Z, from the draws themselves
    arr <- array(0, c(S, n, q))
    for (t in seq_len(S)) arr[t, , ] <- m + sqrt(v) * rep(Z[t, ], each = n)
    L <- de_ns$.lik_loglik_obs_cpp(lik, arr)
    se <- apply(L, 2, stats::sd) / sqrt(S)
    quad <- de_quadrature(lik, m, v)
    expect_true(all(abs(el - quad) <= 5 * se + 1e-6), label = paste(nm, "expected_loglik vs quadrature"))
  }
})

test_that("the default expected_loglik averages loglik_obs over the given draws", {
  lik <- de_cases$logistic_softmax
  set.seed(4)
  m <- matrix(rnorm(18), 6, 3)
  v <- matrix(runif(18, 0.1, 2), 6, 3)
  Z <- matrix(rnorm(30), 10, 3)
  arr <- array(0, c(10, 6, 3))
  for (t in 1:10) arr[t, , ] <- m + sqrt(v) * rep(Z[t, ], each = 6)
  expect_equal(de_ns$.lik_expected_loglik_cpp(lik, m, v, Z),
               colMeans(de_ns$.lik_loglik_obs_cpp(lik, arr)), tolerance = 1e-12)
  expect_error(de_ns$.lik_expected_loglik_cpp(lik, m[1:5, ], v, Z), "n x q")
  expect_error(de_ns$.lik_expected_loglik_cpp(lik, m, v, Z[, 1:2]), "Z must be S x q")
})

test_that("logistic-softmax expected_loglik averages loglik_obs over the draws (bijective, far tails, empty rows)", {
  set.seed(5)
  Y <- de_counts(7, 4, c(1, 0, 3, 1, 2, 1, 0), 5)
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 3L else 4L
    lik <- list(type = "logistic_softmax", q = q, Y = Y, bijective = bij, theta = c(1, 2, 0.5, 1.5))
    m <- matrix(rnorm(7 * q, sd = 3), 7, q)
    m[1, 1] <- 40
    m[2, 2] <- -40
    v <- matrix(runif(7 * q, 0, 4), 7, q)
    v[3, 1] <- 0
    Z <- matrix(rnorm(50 * q), 50, q)
    arr <- array(0, c(50, 7, q))
    for (t in 1:50) arr[t, , ] <- m + sqrt(v) * rep(Z[t, ], each = 7)
    expect_equal(de_ns$.lik_expected_loglik_cpp(lik, m, v, Z),
                 colMeans(de_ns$.lik_loglik_obs_cpp(lik, arr)), tolerance = 1e-12)
  }
})

test_that("Bernoulli and Gaussian expected_loglik are exact (quadrature / closed form)", {
  for (nm in c("binomial", "gaussian")) {
    lik <- de_cases[[nm]]
    set.seed(5)
    m <- matrix(rnorm(6, sd = 2), 6, 1)
    v <- matrix(runif(6, 0.01, 3), 6, 1)
    Z <- matrix(rnorm(3), 3, 1)  # ignored: a three-draw average would be far off
    expect_equal(de_ns$.lik_expected_loglik_cpp(lik, m, v, Z), de_quadrature(lik, m, v, 80),
                 tolerance = 1e-9, label = nm)
  }
})

# A small binary problem for the engine-level checks.
de_binary <- function(n = 50, seed = 1) {
  set.seed(seed)
  X <- matrix(rnorm(n * 2), n)
  y <- rbinom(n, 1, plogis(2 * sin(2 * X[, 1])))
  list(X = X, y = y)
}

test_that("the KL returned by CAVI is KL(q(f) || p(f)) in closed form", {
  d <- de_binary(30)
  k <- kernel_se(lengthscale = 0.8, variance = 3)
  fit <- de_ns$augp_engine(d$X, d$y, rep(1, 30), kernel = k, mean0 = 0.3,
                           control = list(learn_hyper = FALSE, threads = 1))
  K <- de_ns$engine_K(k, d$X, fit$jitter)
  # q(f) = N(m, S), S = (K^-1 + diag(omega))^-1
  S <- solve(solve(K) + diag(fit$omega))
  dm <- fit$mean - 0.3
  kl <- 0.5 * (sum(diag(solve(K, S))) + sum(dm * solve(K, dm)) - 30 +
                 as.numeric(determinant(K)$modulus) - as.numeric(determinant(S)$modulus))
  expect_equal(fit$kl, kl, tolerance = 1e-6)
  expect_equal(fit$var, diag(S), tolerance = 1e-8)
})

test_that("Bernoulli: the direct ELBO is never below the augmented ELBO of the same q(f)", {
  d <- de_binary(50)
  for (ls in c(0.2, 0.7, 2, 6)) for (va in c(0.5, 5, 30)) {
    fit <- de_ns$augp_engine(d$X, d$y, rep(1, 50), kernel = kernel_se(lengthscale = ls, variance = va),
                             control = list(learn_hyper = FALSE, threads = 1))
    aug <- fit$elbo[length(fit$elbo)]
    direct <- de_ns$engine_direct_elbo(fit$lik, fit$mean, fit$var, fit$kl)
    expect_gte(direct, aug - 1e-8)
    # and the gap is real: the Polya-Gamma mean field is not exact
    expect_gt(direct - aug, 1e-4)
  }
})

test_that("Gaussian likelihood: the direct ELBO equals the augmented ELBO (no augmentation)", {
  set.seed(2)
  n <- 40
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- sin(2 * d$x1) + rnorm(n, sd = 0.3)
  for (lik in list(gaussian_noise(), gaussian_noise(sigma = 0.5))) {
    for (ls in c(0.3, 1, 4)) {
      fit <- augp(y ~ x1 + x2, d, likelihood = lik, kernel = kernel_se(lengthscale = c(ls, ls)),
                  control = augp_control(threads = 1, learn_hyper = ls == 1,
                                         integrate_hyper = FALSE))
      e <- fit$engine
      direct <- de_ns$engine_direct_elbo(e$lik, e$mean, e$var, e$kl)
      expect_equal(direct, e$elbo[length(e$elbo)], tolerance = 1e-10)
    }
  }
})

test_that("hyper_objective is validated; by default the likelihood chooses", {
  expect_null(augp_control()$hyper_objective)
  expect_identical(augp_control(hyper_objective = "aug")$hyper_objective, "augmented")
  expect_identical(augp_control(hyper_objective = "direct")$hyper_objective, "direct")
  expect_error(augp_control(hyper_objective = "exact"), "`hyper_objective` must be one of")
})

test_that("hyper_objective = 'direct' keeps the ladder kernel with the best direct ELBO", {
  # Five classes in a checkerboard at prior mean 0: the augmented optimum is a flatter
  # kernel (small variance) than the one the direct ELBO prefers.
  set.seed(8)
  n <- 90
  X <- matrix(runif(n * 2, -2, 2), n)
  cls <- factor(letters[1 + (floor((X[, 1] + 2) * 1.5) + floor((X[, 2] + 2) * 1.5)) %% 5])
  d <- data.frame(x1 = X[, 1], x2 = X[, 2], y = cls)
  lik <- logistic_softmax(prior_mean = 0)
  fa <- augp(y ~ ., d, likelihood = lik, control = augp_quick(hyper_objective = "augmented"), seed = 1)
  fd <- augp(y ~ ., d, likelihood = lik, control = augp_quick(hyper_objective = "direct"), seed = 1)
  direct_of <- function(f) {
    e <- f$engine
    de_ns$engine_direct_elbo(e$lik, e$mean, e$var, e$kl)
  }
  expect_gt(direct_of(fd), direct_of(fa) + 1)
  expect_false(isTRUE(all.equal(coef(fd), coef(fa))))
  # the ladder's values: its best is the kernel kept, and the fit stays a valid VI fit
  e <- fd$engine
  expect_true(is.finite(elbo(fd)))
  expect_true(all(diff(e$elbo) >= -1e-8 * abs(e$elbo[-1])))
})

test_that("the default objective is the likelihood's: direct for logistic-softmax only", {
  expect_identical(de_ns$lik_hyper_objective(logistic_softmax()), "direct")
  expect_identical(de_ns$lik_hyper_objective(stick_breaking()), "augmented")
  expect_identical(de_ns$lik_hyper_objective(gaussian_noise()), "augmented")
  d <- augp_toy(40)
  fb <- augp(y ~ x1 + x2, d, control = augp_quick())
  expect_identical(fb$control$hyper_objective, "augmented")
  fs <- augp(g ~ x1 + x2, d, control = augp_quick(), seed = 1)
  expect_identical(fs$control$hyper_objective, "direct")
  fs2 <- augp(g ~ x1 + x2, d, control = augp_quick(hyper_objective = "direct"), seed = 1)
  expect_equal(coef(fs), coef(fs2))
})

test_that("the ladder climbs the near-linear ridge (variance / 4, lengthscale / 2 per rung)", {
  # a rung value with its maximum at variance 100, lengthscale 6: from (6400, 48) the ridge
  # reaches it in three rungs, which halving the lengthscale or scaling the variance
  # alone cannot
  seen <- list()
  rung <- function(k, from) {
    th <- de_ns$kernel_get_params(k)
    v <- exp(th[grepl("variance", names(th))])
    l <- exp(th[grepl("lengthscale", names(th))])
    seen[[length(seen) + 1]] <<- unname(c(v, l))
    list(value = unname(-((log(v) - log(100))^2 + 4 * (log(l) - log(6))^2)),
         state = list(id = length(seen)))
  }
  res <- de_ns$direct_ladder(kernel_se(variance = 6400, lengthscale = 48), list(id = 0), rung)
  expect_equal(unname(exp(de_ns$kernel_get_params(res$kernel))), c(100, 6))
  expect_equal(seen[[2]], c(1600, 24))
  expect_equal(seen[[4]], c(100, 6))
  expect_equal(seen[[5]], c(25, 3))  # the rung past the optimum ends the ridge climb
  expect_identical(res$evals, length(seen))
  expect_equal(res$values[1], -((log(6400) - log(100))^2 + 4 * (log(48) - log(6))^2))
})

test_that("ladder rungs are scored after a short refinement when the fit is refined", {
  set.seed(3)
  x <- matrix(rnorm(60), 30, 2)
  y <- factor(sample(c("a", "b", "c"), 30, TRUE))
  fit <- augp_fit(x, y, likelihood = logistic_softmax(), control = augp_quick(refine = FALSE),
                  seed = 1)
  lik <- fit$engine$lik
  expect_identical(de_ns$ladder_refine_rounds(lik, 30, augp_control()), de_ns$LADDER_REFINE_ROUNDS)
  expect_identical(de_ns$ladder_refine_rounds(lik, 30, augp_control(refine = 4)), 4L)
  expect_identical(de_ns$ladder_refine_rounds(lik, 30, augp_control(refine = FALSE)), 0L)
  # a rung's value is the direct ELBO after those rounds from its coordinate-ascent fit
  e <- fit$engine
  ctl <- augp_control(threads = 1)
  dl <- de_ns$engine_direct_ladder(e$X, lik, e$kernel, ctl, e$mean0 + matrix(0, 30, 3), e$jitter,
                                   list(kappa = e$kappa, omega = e$omega))
  cv <- de_ns$engine_cavi_kernel(e$kernel, e$X, e$jitter, lik, e$mean0 + matrix(0, 30, 3),
                                 e$kappa, e$omega, as.integer(ctl$maxit), 1e-4, 1L)
  rf <- de_ns$.gp_cvi_kernel_cpp(de_ns$engine_specs(e$kernel), e$X, e$jitter, lik,
                                 e$mean0 + matrix(0, 30, 3), cv$m, cv$alpha, cv$omega_q,
                                 de_ns$direct_elbo_normals(1000L, 3L), de_ns$LADDER_REFINE_ROUNDS,
                                 de_ns$REFINE_STEP, ctl$tol, 1L)
  expect_equal(dl$values[1], max(de_ns$engine_direct_elbo(lik, cv$m, cv$v, cv$kl),
                                 rf$direct[length(rf$direct)]), tolerance = 1e-8)
  expect_gt(dl$values[1], de_ns$engine_direct_elbo(lik, cv$m, cv$v, cv$kl))
})
