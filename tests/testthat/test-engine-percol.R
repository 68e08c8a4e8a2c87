# Per-column (per-class, per-stick) kernel hyperparameters: augp_control(shared_hyper =
# FALSE) gives every latent column its own kernel. With equal kernels the per-column
# path must reproduce the shared one exactly; stick-breaking with per-stick kernels is
# K - 1 independent binomial-logistic models, each with its own hyperparameters.

pc_ns <- asNamespace("augmentedGP")

pc_toy <- function(n = 30, K = 4, seed = 1, trials = 4) {
  set.seed(seed)
  X <- matrix(sort(stats::runif(n, -2, 2)), n)
  eta <- cbind(1.5 * X[, 1], -X[, 1]^2 + 1, matrix(0, n, K - 2))
  P <- exp(eta) / rowSums(exp(eta))
  Y <- t(vapply(seq_len(n), function(i) stats::rmultinom(1, trials, P[i, ])[, 1], numeric(K)))
  list(X = X, Y = Y)
}

pc_sb <- function(Y) list(type = "stick_breaking", q = ncol(Y) - 1L, Y = Y)
pc_sm <- function(Y) {
  list(type = "logistic_softmax", q = ncol(Y), Y = Y, bijective = FALSE,
       theta = rep(1, ncol(Y)))
}

pc_last <- function(e) e[length(e)]

with_seed_pc <- function(seed, expr) {
  set.seed(seed)
  expr
}

test_that("per-column kernels all equal to the shared kernel reproduce the shared path", {
  d <- pc_toy()
  k <- kernel_se(variance = 1.3, lengthscale = 0.7)
  K <- pc_ns$engine_K(k, d$X, 1e-6)
  for (lik in list(pc_sb(d$Y), pc_sm(d$Y))) {
    q <- lik$q
    a <- pc_ns$.gp_cavi_cpp(K, lik, 0.2, NULL, NULL, 40L, 1e-12, NA_real_, 2L)
    b <- pc_ns$.gp_cavi_cpp(rep(list(K), q), lik, 0.2, NULL, NULL, 40L, 1e-12, NA_real_, 2L)
    expect_identical(a$elbo, b$elbo)
    expect_identical(a$m, b$m)
    expect_identical(a$v, b$v)
    # engine level, VI and Gibbs (same seed), and predictions
    ctl <- eng_fixed(maxit = 100, tol = 1e-10, threads = 2, iter = 40, warmup = 10, chains = 2)
    pc <- utils::modifyList(ctl, list(shared_hyper = FALSE))
    v1 <- pc_ns$augp_engine(d$X, kernel = k, method = "vi", control = ctl, lik = lik)
    v2 <- pc_ns$augp_engine(d$X, kernel = k, method = "vi", control = pc, lik = lik)
    expect_true(pc_ns$is_kernel_list(v2$kernel))
    expect_length(v2$kernel, q)
    expect_identical(v1$elbo, v2$elbo)
    expect_identical(v1$mean, v2$mean)
    Xn <- matrix(c(-1.5, 0.1, 1.7), 3)
    expect_identical(pc_ns$augp_engine_predict(v1, Xn), pc_ns$augp_engine_predict(v2, Xn))
    g1 <- pc_ns$augp_engine(d$X, kernel = k, method = "gibbs", control = ctl, lik = lik, seed = 5)
    g2 <- pc_ns$augp_engine(d$X, kernel = k, method = "gibbs", control = pc, lik = lik, seed = 5)
    expect_identical(g1$draws, g2$draws)
    p1 <- with_seed_pc(1, pc_ns$augp_engine_predict(g1, Xn, draws = TRUE))
    p2 <- with_seed_pc(1, pc_ns$augp_engine_predict(g2, Xn, draws = TRUE))
    expect_identical(p1, p2)
  }
})

test_that("per-stick hyperparameters equal K - 1 separate binomial fits", {
  d <- pc_toy(n = 40, K = 3, seed = 2, trials = 5)
  k <- kernel_se(variance = 1, lengthscale = 1)
  ctl <- list(threads = 2, maxit = 500, tol = 1e-10, hyper_maxit = 200, hyper_tol = 1e-10,
              shared_hyper = FALSE)
  fit <- pc_ns$augp_engine(d$X, kernel = k, method = "vi", control = ctl, lik = pc_sb(d$Y))
  expect_length(fit$kernel, 2)
  sticks <- stick_counts(d$Y)
  elbo <- 0
  for (j in 1:2) {
    one <- pc_ns$augp_engine(d$X, sticks[[j]]$y, sticks[[j]]$trials, k, "vi", control = ctl)
    expect_equal(pc_ns$kernel_get_params(fit$kernel[[j]]), pc_ns$kernel_get_params(one$kernel),
                 tolerance = 1e-3)
    expect_equal(fit$mean[, j], one$mean, tolerance = 1e-3)
    elbo <- elbo + pc_last(one$elbo)
  }
  expect_equal(pc_last(fit$elbo), elbo, tolerance = 1e-6)
  # the two sticks really got different hyperparameters
  expect_gt(max(abs(pc_ns$engine_get_params(fit$kernel)[1:2] -
                    pc_ns$engine_get_params(fit$kernel)[3:4])), 1e-2)
})

test_that("the per-column bound's gradient matches finite differences", {
  d <- pc_toy(n = 25, K = 4, seed = 3)
  ks <- pc_ns$new_kernel_list(list(kernel_se(1.2, 0.7), kernel_matern(2.5, 0.8, 1.3),
                                   kernel_se(0.6, 0.4) + kernel_linear(0.3, 1)))
  set.seed(4)
  kappa <- matrix(stats::rnorm(75), 25)
  omega <- matrix(stats::runif(75, 0.05, 0.5), 25)
  mu <- c(0.2, -0.5, 0.1)
  b <- pc_ns$augp_engine_elbo_grad(ks, d$X, kappa, omega, mu, 1e-6)
  th <- pc_ns$engine_get_params(ks)
  expect_length(attr(b, "gradient"), length(th))
  f <- function(t) {
    as.numeric(pc_ns$augp_engine_elbo_grad(pc_ns$engine_set_params(ks, t), d$X, kappa, omega,
                                           mu, 1e-6, FALSE))
  }
  h <- 1e-5
  num <- vapply(seq_along(th), function(i) {
    e <- replace(numeric(length(th)), i, h)
    (f(th + e) - f(th - e)) / (2 * h)
  }, 0)
  expect_equal(attr(b, "gradient"), num, tolerance = 1e-5)
  # the sum of the per-column bounds, each with its own kernel
  parts <- vapply(1:3, function(j) {
    as.numeric(pc_ns$augp_engine_elbo_grad(ks[[j]], d$X, kappa[, j], omega[, j], mu[j], 1e-6))
  }, 0)
  expect_equal(as.numeric(b), sum(parts), tolerance = 1e-12)
  # columns in parallel (n >= 150 uses the threads): the same values
  d2 <- pc_toy(n = 160, K = 4, seed = 8)
  k2 <- rnorm(480)
  o2 <- runif(480, 0.05, 0.5)
  b1 <- pc_ns$augp_engine_elbo_grad(ks, d2$X, matrix(k2, 160), matrix(o2, 160), mu, 1e-6,
                                    threads = 1L)
  b2 <- pc_ns$augp_engine_elbo_grad(ks, d2$X, matrix(k2, 160), matrix(o2, 160), mu, 1e-6,
                                    threads = 2L)
  expect_identical(b1, b2)
})

test_that("per-class hyperparameters never give a lower ELBO than shared ones", {
  d <- pc_toy(n = 40, K = 3, seed = 6, trials = 3)
  ctl <- list(threads = 2, maxit = 300, tol = 1e-9, hyper_maxit = 60, hyper_tol = 1e-6)
  for (lik in list(pc_sm(d$Y), pc_sb(d$Y))) {
    sh <- pc_ns$augp_engine(d$X, kernel = kernel_se(), method = "vi", control = ctl, lik = lik)
    pc <- pc_ns$augp_engine(d$X, kernel = sh$kernel, method = "vi",
                            control = c(ctl, shared_hyper = FALSE), lik = lik)
    expect_gte(pc_last(pc$elbo), pc_last(sh$elbo) - 1e-6 * abs(pc_last(sh$elbo)))
  }
})

test_that("a per-class softmax fit predicts, summarises and has one coef row per class", {
  ir <- iris[c(1:12, 51:62, 101:112), c("Sepal.Length", "Petal.Width", "Species")]
  ctl <- augp_control(shared_hyper = FALSE, hyper_maxit = 8, threads = 2, pred_draws = 200)
  fit <- suppressWarnings(augp(Species ~ ., data = ir, likelihood = logistic_softmax(),
                               control = ctl, seed = 1), classes = "augp_convergence_warning")
  co <- coef(fit)
  expect_true(is.matrix(co))
  expect_equal(rownames(co), levels(ir$Species))
  # data units: the isotropic lengthscale once per input (two inputs), after the variance
  expect_equal(ncol(co), 3L)
  expect_equal(ncol(coef(fit, units = "standardised")), 2L)
  expect_length(fit$kernel, 3)
  P <- predict(fit, ir[c(1, 15, 30), ])
  expect_equal(dim(P), c(3L, 3L))
  expect_equal(unname(rowSums(P)), rep(1, 3), tolerance = 1e-8)
  expect_s3_class(predict(fit, ir[1:3, ], type = "class"), "factor")
  lk <- predict(fit, ir[1:3, ], type = "link", se.fit = TRUE)
  expect_equal(dim(lk$se.fit), c(3L, 3L))
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("one kernel each", out)))
  expect_true(any(grepl("one row per latent function", out)))
  expect_output(print(fit), "one row per latent function")
  expect_output(print(fit$kernel), "augp_kernels")
  expect_error(logLik(fit), "elbo\\(fit\\)")
  expect_true(is.finite(elbo(fit)))
  # Gibbs after VI keeps the VI-learned per-class kernels
  gctl <- augp_control(shared_hyper = FALSE, hyper_maxit = 8, threads = 2, iter = 40,
                       warmup = 20, chains = 1, pred_draws = 200)
  gf <- suppressWarnings(augp(Species ~ ., data = ir, likelihood = logistic_softmax(),
                              control = gctl, method = "gibbs", seed = 1),
                         classes = "augp_convergence_warning")
  expect_equal(coef(gf), co)
  expect_equal(dim(predict(gf, ir[c(1, 30), ])), c(2L, 3L))
})

test_that("the CAVI ELBO never decreases with per-column kernels", {
  d <- pc_toy(n = 30, K = 3, seed = 7)
  Ks <- list(pc_ns$engine_K(kernel_se(2, 0.5), d$X, 1e-6),
             pc_ns$engine_K(kernel_matern(1.5, 0.7, 2), d$X, 1e-6),
             pc_ns$engine_K(kernel_se(0.5, 1.5), d$X, 1e-6))
  for (lik in list(pc_sm(d$Y), pc_sb(d$Y))) {
    r <- pc_ns$.gp_cavi_cpp(Ks[seq_len(lik$q)], lik, 0, NULL, NULL, 200L, 1e-12, NA_real_, 2L)
    expect_gt(length(r$elbo), 3)
    expect_true(all(diff(r$elbo) >= -1e-9 * abs(r$elbo[-1])))
    # SQUAREM-accelerated driver too
    s <- pc_ns$engine_cavi(Ks[seq_len(lik$q)], lik, matrix(0, 30, lik$q), NULL, NULL, 200L,
                           1e-12, 2L)
    expect_true(all(diff(s$elbo) >= -1e-9 * abs(s$elbo[-1])))
  }
})

test_that("bad shared_hyper values and unsupported combinations give clear errors", {
  expect_error(augp_control(shared_hyper = NA), "shared_hyper")
  expect_error(augp_control(shared_hyper = "no"), "shared_hyper")
  expect_error(augp_control(shared_hyper = c(TRUE, FALSE)), "shared_hyper")
  expect_error(augp_control(shared_hyper = 1), "shared_hyper")
  expect_false(augp_control(shared_hyper = FALSE)$shared_hyper)
  d <- pc_toy(n = 20, K = 3)
  expect_error(pc_ns$augp_engine(d$X, kernel = list(kernel_se()), lik = pc_sb(d$Y),
                                 control = eng_fixed()), "one per latent column")
  # binary fits accept and ignore it
  set.seed(1)
  x <- matrix(stats::rnorm(40), 20)
  y <- factor(x[, 1] > 0, labels = c("a", "b"))
  f1 <- suppressWarnings(augp_fit(x, y, control = augp_control(shared_hyper = FALSE,
                                                               hyper_maxit = 2, threads = 2)),
                         classes = "augp_convergence_warning")
  expect_false(is.matrix(coef(f1)))
  # sparse GPs with several latent functions: not supported, the error names the argument
  ir <- iris[c(1:10, 51:60, 101:110), ]
  expect_error(augp(Species ~ Sepal.Length, data = ir, inducing = 5,
                    control = augp_control(shared_hyper = FALSE, hyper_maxit = 2, threads = 2)),
               "shared_hyper")
})
