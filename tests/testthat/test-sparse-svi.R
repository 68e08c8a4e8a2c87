# Sparse GP: minibatch estimates, SVI warm start / hyperparameter schedule, SVI
# reporting (elbo, print, summary), restarts.

# twonorm (Breiman): two unit-covariance Gaussians with means +-a, a = 2 / sqrt(d).
sv_twonorm <- function(n, d = 20, seed = 1) {
  set.seed(seed)
  y <- stats::rbinom(n, 1, 0.5)
  X <- matrix(stats::rnorm(n * d), n) + outer(2 * y - 1, rep(2 / sqrt(d), d))
  list(X = X, y = y, n = n)
}

sv_logloss <- function(fit, X, y) {
  pr <- sp_ns$augp_engine_predict.augp_sparse_engine(fit, X)
  gh <- c(-1.65068012388578, -0.524647623275290, 0.524647623275290, 1.65068012388578)
  w <- c(0.0813128354472452, 0.804914090005513, 0.804914090005513, 0.0813128354472452) / sqrt(pi)
  p <- Reduce(`+`, lapply(1:4, function(k) w[k] * stats::plogis(pr$mean + sqrt(2 * pr$var) * gh[k])))
  p <- pmin(pmax(p, 1e-12), 1 - 1e-12)
  -mean(y * log(p) + (1 - y) * log(1 - p))
}

test_that("the average of the scaled minibatch ELBO, gradients and natural-gradient target over equal batches equals the full-data one", {
  dd <- sp_data(120, seed = 31)
  mu0 <- matrix(0.2, 120, 1)
  lik <- list(type = "binomial", y = as.double(dd$y), trials = rep(1, 120))
  k <- kernel_se(variance = 1.4, lengthscale = c(0.7, 1.3))
  spec <- sp_ns$kernel_flatten(k)
  Z <- dd$X[seq(1, 120, by = 12), ] + 0.05
  st <- sp_ns$.sparse_cavi_cpp(dd$X, mu0, lik, 20L, spec, Z, 1e-6, NULL, 3L, 0, 2L)
  full <- sp_ns$.sparse_batch_cpp(dd$X, mu0, lik, 20L, spec, Z, st$jitter, st$state, 0:5, TRUE, TRUE, 2L)
  obj <- sp_ns$.sparse_obj_cpp(dd$X, mu0, lik, 20L, spec, Z, spec, Z, st$jitter, st$state, TRUE, TRUE, 2L)
  expect_equal(full$scale, 1)
  expect_equal(full$elbo, obj$elbo, tolerance = 1e-12)
  expect_equal(full$grad, obj$grad, tolerance = 1e-10)
  # 6 blocks of 20: batches of one block (scale 6) and of two blocks (scale 3)
  for (batches in list(as.list(0:5), list(0:1, 2:3, 4:5), list(c(0L, 5L), c(1L, 3L), c(2L, 4L)))) {
    parts <- lapply(batches, function(b) {
      sp_ns$.sparse_batch_cpp(dd$X, mu0, lik, 20L, spec, Z, st$jitter, st$state, as.integer(b),
                              TRUE, TRUE, 2L)
    })
    expect_equal(parts[[1]]$scale, 120 / (20 * length(batches[[1]])))
    avg <- function(f) Reduce(`+`, lapply(parts, f)) / length(parts)
    expect_equal(avg(function(p) p$elbo), full$elbo, tolerance = 1e-12)
    expect_equal(avg(function(p) p$grad), full$grad, tolerance = 1e-10)
    expect_equal(avg(function(p) p$gz), full$gz, tolerance = 1e-10)
    expect_equal(avg(function(p) p$target$Lam[[1]]), full$target$Lam[[1]], tolerance = 1e-12)
    expect_equal(avg(function(p) p$target$h[[1]]), full$target$h[[1]], tolerance = 1e-12)
  }
  # the full-data target is the closed-form CAVI update
  nxt <- sp_ns$.sparse_cavi_cpp(dd$X, mu0, lik, 20L, spec, Z, st$jitter, st$state, 1L, 0, 2L)
  expect_equal(full$target$Lam, nxt$state$Lam, tolerance = 1e-12)
  # one SVI step with rho = 1 (tau = 0) on a batch of all the data is one CAVI sweep
  one <- sp_ns$.sparse_svi_cpp(dd$X, mu0, lik, 20L, spec, Z, st$jitter, st$state, 0L, 6L, 0, 0.6,
                               0, FALSE, FALSE, 0L, TRUE, 0, 2L, NULL)
  expect_equal(one$state$Lam, nxt$state$Lam, tolerance = 1e-12)
  expect_equal(one$state$h, nxt$state$h, tolerance = 1e-12)
  # multi-column likelihood (stick-breaking, q = 2)
  set.seed(32)
  Y <- diag(3)[sample.int(3, 120, replace = TRUE), ]
  lk <- list(type = "stick_breaking", q = 2L, Y = Y)
  m2 <- matrix(0, 120, 2)
  st2 <- sp_ns$.sparse_cavi_cpp(dd$X, m2, lk, 30L, spec, Z, 1e-6, NULL, 3L, 0, 2L)
  f2 <- sp_ns$.sparse_batch_cpp(dd$X, m2, lk, 30L, spec, Z, st2$jitter, st2$state, 0:3, TRUE, FALSE, 2L)
  p2 <- lapply(0:3, function(b) {
    sp_ns$.sparse_batch_cpp(dd$X, m2, lk, 30L, spec, Z, st2$jitter, st2$state, b, TRUE, FALSE, 2L)
  })
  expect_equal(mean(vapply(p2, function(p) p$elbo, 0)), f2$elbo, tolerance = 1e-12)
  expect_equal(Reduce(`+`, lapply(p2, function(p) p$grad)) / 4, f2$grad, tolerance = 1e-10)
  expect_equal(Reduce(`+`, lapply(p2, function(p) p$target$h[[2]])) / 4, f2$target$h[[2]],
               tolerance = 1e-12)
})

test_that("SVI with hyperparameter learning reaches the full-batch fit (no kernel drift)", {
  tr <- sv_twonorm(6000, seed = 33)
  te <- sv_twonorm(4000, seed = 34)
  run <- function(ctl) {
    sp_ns$augp_sparse_engine(tr$X, tr$y, rep(1, tr$n), kernel_se(), inducing = 40,
                             control = c(list(threads = 2, hyper_subsample = 1000), ctl), seed = 35)
  }
  full <- run(list())
  svi <- run(list(batch_size = 500))
  expect_true(full$sparse$full_batch)
  expect_false(svi$sparse$full_batch)
  ll_full <- sv_logloss(full, te$X, te$y)
  ll_svi <- sv_logloss(svi, te$X, te$y)
  # stated tolerances: held-out log loss within 10 %, full-data ELBO within 2 %
  expect_lt(ll_svi, 1.1 * ll_full)
  expect_gt(svi$elbo_full, full$elbo_full - 0.02 * abs(full$elbo_full))
  # the kernel stays within the +-3 box (log scale) around the subsample optimum
  d <- sp_ns$kernel_get_params(svi$kernel) - sp_ns$kernel_get_params(svi$sparse$kernel_start)
  expect_true(all(abs(d) <= 3 + 1e-12))
  expect_true(svi$sparse$warm_started)
  # with the kernel fixed, q(u) is warm-started from a subsample CAVI fit as well
  kf <- full$kernel
  fx <- sp_ns$augp_sparse_engine(tr$X, tr$y, rep(1, tr$n), kf, inducing = full$Z,
                                 control = list(threads = 2, learn_hyper = FALSE, batch_size = 500,
                                                hyper_subsample = 1000), seed = 35)
  expect_lt(sv_logloss(fx, te$X, te$y), 1.1 * ll_full)
  # kernel steps start after the first epoch (12 batches of 2 x 256 rows; 36 iterations)
  expect_equal(svi$sparse$iterations, 36)
  expect_equal(svi$sparse$hyper_start, 12L)
})

test_that("SVI warm start survives a large n / n_sub and n / batch (twonorm, n = 20000, batch 200)", {
  # The subsample fit can end on an L-BFGS step, whose q(u) re-whitened to the new
  # kernel has Lam - I indefinite; scaled by n / n_sub = 40 it was not positive
  # definite and SVI silently started from the prior: log loss 0.116 against 0.057.
  tr <- sv_twonorm(20000, seed = 41)
  te <- sv_twonorm(4000, seed = 42)
  svi <- sp_ns$augp_sparse_engine(tr$X, tr$y, rep(1, tr$n), kernel_se(), inducing = 40,
                                  control = list(threads = 2, hyper_subsample = 500,
                                                 batch_size = 200, svi_epochs = 2), seed = 43)
  expect_true(svi$sparse$warm_started)
  # reference: full batch on the first 5000 points (full batch on all 20000: 0.0565)
  i <- 1:5000
  full <- sp_ns$augp_sparse_engine(tr$X[i, ], tr$y[i], rep(1, 5000), kernel_se(), inducing = 40,
                                   control = list(threads = 2, hyper_subsample = 500), seed = 43)
  expect_true(full$sparse$full_batch)
  expect_lt(sv_logloss(svi, te$X, te$y), 1.1 * sv_logloss(full, te$X, te$y))
  # the warm start itself: CAVI sweeps on the subsample keep Lam - I positive
  # semi-definite, so any n / n_sub scaling gives a positive definite Lam
  idx <- sort(sample.int(tr$n, 300))
  ctl <- sp_ns$as_augp_control(list(threads = 2))
  k <- kernel_se(variance = 500, lengthscale = 30)
  Z <- full$Z
  ws <- sp_ns$sparse_warm_state(tr$X, matrix(0, tr$n, 1), sp_ns$engine_resolve_lik(tr$n, tr$y, rep(1, tr$n), NULL),
                                idx, k, Z, full$jitter, NULL, 5L, ctl)
  expect_false(is.null(ws))
  expect_gt(min(eigen(ws$Lam[[1]] - diag(40), symmetric = TRUE, only.values = TRUE)$values), -1e-6 * max(ws$Lam[[1]]))
})

test_that("SVI fits report the full-data ELBO and their epochs, not convergence", {
  dd <- sp_data(1200, seed = 36)
  x <- dd$X
  colnames(x) <- c("a", "b")
  y <- factor(dd$y, labels = c("no", "yes"))
  fit <- augp_fit(x, y, inducing = 15,
                  control = augp_control(batch_size = 200, svi_epochs = 2, threads = 2), seed = 1)
  eng <- fit$engine
  expect_false(eng$sparse$full_batch)
  expect_equal(eng$sparse$epochs, 2)
  expect_equal(elbo(fit), eng$elbo_full)
  expect_equal(eng$elbo_full, sp_ns$sparse_elbo(eng), tolerance = 1e-10)
  expect_false(isTRUE(all.equal(elbo(fit), eng$elbo[length(eng$elbo)])))
  expect_output(print(fit), "SVI: 2 epochs, batch 200")
  expect_output(print(fit), "ELBO: ")
  s <- summary(fit)
  expect_equal(s$elbo, eng$elbo_full)
  expect_output(print(s), "ELBO \\(full data\\).*SVI: 2 epochs")
  out <- paste(utils::capture.output(print(fit), print(s)), collapse = "\n")
  expect_false(grepl("converged", out))
  expect_match(ggplot2::autoplot(fit, type = "elbo")$labels$title, "minibatch")
  # full-batch sparse fits keep the convergence report
  fb <- suppressWarnings(augp_fit(x, y, inducing = 15, seed = 1,
                                  control = augp_control(hyper_maxit = 3, threads = 2)),
                         classes = "augp_convergence_warning")
  expect_output(print(fb), "converged")
  expect_equal(elbo(fb), fb$engine$elbo[length(fb$engine$elbo)])
  # without the final pass the full-data ELBO is unknown
  e2 <- sp_ns$augp_sparse_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), 15,
                                 control = list(batch_size = 200, final_elbo = FALSE, threads = 2),
                                 seed = 1)
  expect_true(is.na(e2$elbo_full))
})

test_that("sparse VI restarts run sequentially and through future with the same result", {
  dd <- sp_data(300, seed = 37)
  run <- function(par, restarts = 3, bs = NULL) {
    sp_ns$augp_sparse_engine(dd$X, dd$y, rep(1, dd$n), kernel_se(), 12,
                             control = list(restarts = restarts, hyper_maxit = 3, threads = 1,
                                            parallel = par, batch_size = bs, svi_epochs = 2),
                             seed = 7)
  }
  a <- run("none")
  expect_length(a$restarts, 3)
  expect_equal(a$elbo_full, max(a$restarts))
  one <- run("none", restarts = 1)
  expect_null(one$restarts)
  # the first restart starts where the single fit starts, with the same random stream
  expect_gte(a$elbo_full, one$elbo_full - 1e-8)
  s <- run("none", bs = 100)
  expect_length(s$restarts, 3)
  expect_equal(s$elbo_full, max(s$restarts))
  expect_error(run("cluster"), "control\\$parallel")
  expect_error(run("none", restarts = 0), "control\\$restarts")
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  b <- run("future")
  expect_identical(a$elbo, b$elbo)
  expect_identical(a$kernel, b$kernel)
  expect_identical(a$restarts, b$restarts)
  sb <- run("future", bs = 100)
  expect_identical(s$elbo_full, sb$elbo_full)
  future::plan(future::multisession, workers = 2)
  m <- run("future", bs = 100)
  expect_identical(m$elbo_full, s$elbo_full)
  expect_identical(m$kernel, s$kernel)
  # the front end passes restarts through to the sparse engine
  x <- dd$X
  colnames(x) <- c("a", "b")
  fit <- suppressWarnings(augp_fit(x, factor(dd$y), inducing = 10, seed = 3,
                                   control = augp_control(restarts = 2, hyper_maxit = 2,
                                                          threads = 1)),
                          classes = "augp_convergence_warning")
  expect_length(fit$engine$restarts, 2)
})

test_that("SVI reading the rows in a given order equals SVI on the reordered copy", {
  dd <- sp_data(150, seed = 8)
  mu0 <- matrix(seq(-0.2, 0.2, length.out = 150), 150, 1)
  lik <- list(type = "binomial", q = 1L, y = as.double(dd$y), trials = rep(2, 150))
  spec <- sp_ns$kernel_flatten(kernel_se(variance = 1.2, lengthscale = 0.9))
  Z <- dd$X[seq(1, 150, by = 10), ]
  set.seed(3)
  perm <- sample.int(150)
  starts <- as.integer(c(0, 3, 6, 9, 12, 2, 5, 8, 11, 14))
  run <- function(X, m0, lk, order) {
    sp_ns$.sparse_svi_cpp(X, m0, lk, 10L, spec, Z, 1e-6, NULL, starts, 3L, 1, 0.6, 0.02, TRUE,
                          FALSE, 2L, TRUE, 3, 2L, NULL, order)
  }
  a <- run(dd$X[perm, ], mu0[perm, , drop = FALSE], sp_ns$sparse_lik_subset(lik, perm), NULL)
  b <- run(dd$X, mu0, lik, perm - 1L)
  expect_identical(a$state, b$state)
  expect_identical(a$elbo, b$elbo)
  expect_identical(a$theta, b$theta)
  # the order must be a permutation of the rows; the data double matrices
  expect_error(run(dd$X, mu0, lik, c(perm[-1], perm[2]) - 1L), "permutation")
  expect_error(run(dd$X, mu0, lik, perm[-1] - 1L), "order")
  Xi <- dd$X
  storage.mode(Xi) <- "integer"
  expect_error(run(Xi, mu0, lik, NULL), "X must be a double matrix")
})
