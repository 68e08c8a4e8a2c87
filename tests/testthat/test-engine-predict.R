# The dense predictive distribution (predict_dense in src/predict.cpp) against the
# formulas written out in R, for variational and Gibbs fits with per-column kernels.

pred_toy <- function(n = 30, seed = 8) {
  set.seed(seed)
  X <- matrix(sort(stats::runif(n, -2, 2)), n)
  Y <- t(vapply(seq_len(n), function(i) stats::rmultinom(1, 3, c(0.3, 0.2, 0.1, 0.4))[, 1],
                numeric(4)))
  list(X = X, Y = Y, Xnew = matrix(c(-2.5, -0.3, 0.4, 1.9), 4))
}

test_that("variational predictions equal the predictive formulas (per-column kernels)", {
  d <- pred_toy()
  ks <- list(kernel_se(1, 0.5), kernel_matern(2.5, 0.8, 1), kernel_se(0.5, 1.5))
  lik <- list(type = "stick_breaking", q = 3L, Y = d$Y)
  fit <- eng_ns$augp_engine(d$X, kernel = ks, lik = lik, mean0 = c(-0.2, 0, 0.3),
                            control = eng_fixed())
  pr <- eng_ns$augp_engine_predict(fit, d$Xnew)
  for (j in 1:3) {
    K <- kernel_matrix(ks[[j]], d$X) + diag(fit$jitter, nrow(d$X))
    Ks <- kernel_matrix(ks[[j]], d$X, d$Xnew)
    sw <- sqrt(fit$omega[, j])
    B <- diag(nrow(d$X)) + sw * K * rep(sw, each = length(sw))
    V <- backsolve(chol(B), sw * Ks, transpose = TRUE)
    expect_equal(pr$mean[, j], fit$mean0[1, j] + drop(crossprod(Ks, fit$alpha[, j])),
                 tolerance = 1e-10)
    expect_equal(pr$var[, j], pmax(kernel_diag(ks[[j]], d$Xnew) - colSums(V^2), 0),
                 tolerance = 1e-10)
  }
})

test_that("Gibbs predictions and draws equal the conditional formulas with R's normals", {
  d <- pred_toy()
  k <- kernel_matern(1.5, 1, 0.7)
  lik <- list(type = "stick_breaking", q = 3L, Y = d$Y)
  fit <- eng_ns$augp_engine(d$X, kernel = k, lik = lik, method = "gibbs", seed = 2, mean0 = 0.1,
                            control = eng_fixed(iter = 30, warmup = 10, chains = 2,
                                                shared_hyper = FALSE))
  expect_true(eng_ns$is_kernel_list(fit$kernel))
  n <- nrow(d$X)
  m <- nrow(d$Xnew)
  S <- prod(dim(fit$draws)[1:2])
  set.seed(5)
  pr <- eng_ns$augp_engine_predict(fit, d$Xnew, draws = TRUE)
  after <- stats::runif(1)
  set.seed(5)
  Z <- array(stats::rnorm(S * m * 3), c(S, m, 3))
  expect_identical(stats::runif(1), after)
  expect_equal(dim(pr$draws), c(S, m, 3L))
  for (j in 1:3) {
    kj <- fit$kernel[[j]]
    R <- chol(kernel_matrix(kj, d$X) + diag(fit$jitter, n))
    A <- backsolve(R, kernel_matrix(kj, d$X, d$Xnew), transpose = TRUE)
    Fd <- matrix(fit$draws[, , (j - 1) * n + seq_len(n)], S, n)
    M <- crossprod(backsolve(R, t(Fd) - 0.1, transpose = TRUE), A) + 0.1
    condvar <- pmax(kernel_diag(kj, d$Xnew) - colSums(A^2), 0)
    expect_equal(pr$mean[, j], colMeans(M), tolerance = 1e-10)
    expect_equal(pr$var[, j], condvar + apply(M, 2, stats::var) * (S - 1) / S, tolerance = 1e-10)
    Cc <- kernel_matrix(kj, d$Xnew) - crossprod(A)
    Cc <- (Cc + t(Cc)) / 2
    Lc <- chol(Cc + diag(max(fit$jitter, 1e-10 * max(1, mean(diag(Cc)))), m))
    expect_equal(pr$draws[, , j], M + Z[, , j] %*% Lc, tolerance = 1e-8)
  }
})

test_that("the jitter search escalates for a singular kernel matrix", {
  X <- matrix(c(0, 0, 1, 2), 4)  # a repeated input: k(X, X) is singular
  k <- kernel_se(1, 1)
  expect_equal(eng_ns$engine_find_jitter(k, X, 0), 1e-9)
  expect_equal(eng_ns$engine_find_jitter(k, X, 1e-6), 1e-6)
  expect_equal(eng_ns$engine_find_jitter(eng_ns$new_kernel_list(list(k, kernel_se(1, 0.5))), X, 0),
               1e-9)
})
