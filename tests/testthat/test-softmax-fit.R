# Logistic-softmax fits through the engine: CAVI monotonicity, Gibbs against an
# independent reference sampler written here (elliptical slice sampling on the
# exact log-likelihood), VI against long Gibbs, reproducibility.

smf_ns <- asNamespace("augmentedGP")
smf_sig <- function(x) 1 / (1 + exp(-x))

# Exact log p(Y | F) (F: n x q; bijective appends the fixed latent 0).
smf_loglik <- function(Y, F, bij, theta) {
  if (bij) F <- cbind(F, 0)
  A <- smf_sig(F) * rep(theta, each = nrow(F))
  sum(Y * log(A)) - sum(rowSums(Y) * log(rowSums(A)))
}

# Elliptical slice sampling (Murray, Adams and MacKay 2010) for F with
# independent N(0, K) prior columns.
smf_ess <- function(Y, K, bij, theta, iter, warmup, seed) {
  set.seed(seed)
  n <- nrow(Y); q <- if (bij) ncol(Y) - 1 else ncol(Y)
  L <- t(chol(K))
  F <- matrix(0, n, q)
  ll <- smf_loglik(Y, F, bij, theta)
  out <- matrix(NA_real_, iter, n * q)
  for (t in seq_len(warmup + iter)) {
    nu <- L %*% matrix(stats::rnorm(n * q), n, q)
    logy <- ll + log(stats::runif(1))
    a <- stats::runif(1, 0, 2 * pi)
    lo <- a - 2 * pi; hi <- a
    repeat {
      Fp <- F * cos(a) + nu * sin(a)
      llp <- smf_loglik(Y, Fp, bij, theta)
      if (llp > logy) break
      if (a < 0) lo <- a else hi <- a
      a <- stats::runif(1, lo, hi)
    }
    F <- Fp; ll <- llp
    if (t > warmup) out[t - warmup, ] <- F
  }
  out
}

# Batch-means standard errors of column means.
smf_se <- function(x, nb = 25) {
  b <- split(seq_len(nrow(x)), cut(seq_len(nrow(x)), nb, labels = FALSE))
  bm <- t(sapply(b, function(ix) colMeans(x[ix, , drop = FALSE])))
  apply(bm, 2, stats::sd) / sqrt(nb)
}

smf_lik <- function(Y, bij, theta = rep(1, ncol(Y))) {
  list(type = "logistic_softmax", q = if (bij) ncol(Y) - 1 else ncol(Y), Y = Y,
       bijective = bij, theta = theta)
}

smf_data <- function(n, seed = 1) {
  set.seed(seed)
  X <- matrix(stats::runif(n * 2, -2, 2), n)
  cl <- ifelse(X[, 1] + 0.3 * stats::rnorm(n) > 0.5, 1, ifelse(X[, 2] + 0.3 * stats::rnorm(n) > 0, 2, 3))
  list(X = X, Y = diag(3)[cl, ], cl = cl)
}

test_that("CAVI never decreases the ELBO (3 classes, both versions, weights)", {
  d <- smf_data(40)
  k <- kernel_se(variance = 2, lengthscale = 1)
  for (bij in c(FALSE, TRUE)) {
    Y <- d$Y * rep(c(1, 2), length.out = 40)
    fit <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(Y, bij, c(1, 1.5, 0.8)),
                              control = list(learn_hyper = FALSE, threads = 1, tol = 1e-12,
                                             maxit = 300))
    expect_gt(length(fit$elbo), 5)
    expect_true(all(diff(fit$elbo) >= -1e-8 * abs(fit$elbo[-1])))
    expect_equal(dim(fit$mean), c(40, if (bij) 2 else 3))
    # the converged ELBO is below the exact log-likelihood at the mode region's best
    expect_true(is.finite(fit$elbo[length(fit$elbo)]))
  }
})

test_that("Gibbs agrees with an independent elliptical slice sampler", {
  X <- matrix(c(-1, -0.3, 0.4, 1.2), 4)
  Y <- rbind(c(2, 0, 0), c(1, 1, 0), c(0, 1, 1), c(0, 0, 2))
  k <- kernel_se(variance = 1.5, lengthscale = 0.8)
  K <- smf_ns$kernel_matrix(k, X) + diag(1e-8, 4)
  theta <- c(1, 0.7, 1.4)
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    ref <- smf_ess(Y, K, bij, theta, iter = 30000, warmup = 1000, seed = 42 + bij)
    g <- smf_ns$augp_engine(X, kernel = k, method = "gibbs", lik = smf_lik(Y, bij, theta), seed = 7,
                            control = list(learn_hyper = FALSE, threads = 1, chains = 2,
                                           iter = 10000, warmup = 500))
    gd <- rbind(g$draws[, 1, ], g$draws[, 2, ])
    se <- sqrt(smf_se(ref)^2 + (smf_se(g$draws[, 1, ])^2 + smf_se(g$draws[, 2, ])^2) / 4)
    z <- (colMeans(gd) - colMeans(ref)) / se
    expect_true(all(abs(z) < 4.5), info = paste(round(z, 2), collapse = " "))
    # second moments too
    z2 <- (colMeans(gd^2) - colMeans(ref^2)) /
      sqrt(smf_se(ref^2)^2 + (smf_se(g$draws[, 1, ]^2)^2 + smf_se(g$draws[, 2, ]^2)^2) / 4)
    expect_true(all(abs(z2) < 4.5), info = paste(round(z2, 2), collapse = " "))
    # posterior mean class probabilities
    lp <- smf_ns$logistic_softmax(bijective = bij, theta = theta)
    pr <- function(D) sapply(1:4, function(i) colMeans(smf_ns$lik_prob.augp_logistic_softmax(
      lp, D[, i + 4 * (seq_len(q) - 1), drop = FALSE])))
    expect_lt(max(abs(pr(gd) - pr(ref))), 0.02)
  }
})

test_that("VI and long Gibbs agree on predictive class probabilities", {
  d <- smf_data(30, seed = 3)
  k <- kernel_se(variance = 3, lengthscale = 1.2)
  lp <- smf_ns$logistic_softmax()
  Xn <- matrix(c(-1.5, 1.5, 0, 1, -1, 0.2), 3)
  vi <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(d$Y, FALSE),
                           control = list(learn_hyper = FALSE, threads = 2))
  pv <- smf_ns$augp_engine_predict(vi, Xn)
  set.seed(1)
  S <- 4000
  pvi <- Reduce(`+`, lapply(seq_len(S), function(s) {
    smf_ns$lik_prob.augp_logistic_softmax(lp, pv$mean + sqrt(pv$var) * matrix(stats::rnorm(9), 3))
  })) / S
  g <- smf_ns$augp_engine(d$X, kernel = k, method = "gibbs", lik = smf_lik(d$Y, FALSE), seed = 2,
                          control = list(learn_hyper = FALSE, threads = 1, iter = 3000, warmup = 300))
  pg <- smf_ns$augp_engine_predict(g, Xn, draws = TRUE)
  pgi <- apply(pg$draws, 1, function(Fs) smf_ns$lik_prob.augp_logistic_softmax(lp, Fs))
  pgi <- matrix(rowMeans(pgi), 3)
  # mean-field VI is an approximation: agreement within 0.05 in every probability
  expect_lt(max(abs(pvi - pgi)), 0.05)
  expect_equal(max.col(pvi), max.col(pgi))
})

test_that("Gibbs is reproducible and independent of the thread count", {
  d <- smf_data(25, seed = 5)
  k <- kernel_se(variance = 2, lengthscale = 1)
  run <- function(th, seed) {
    smf_ns$augp_engine(d$X, kernel = k, method = "gibbs", lik = smf_lik(d$Y, FALSE), seed = seed,
                       control = list(learn_hyper = FALSE, threads = th, chains = 2, iter = 50,
                                      warmup = 20))$draws
  }
  a <- run(1, 11)
  expect_identical(a, run(1, 11))
  expect_identical(a, run(2, 11))
  expect_false(identical(a, run(2, 12)))
  v1 <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(d$Y, TRUE),
                           control = list(learn_hyper = TRUE, threads = 1, hyper_maxit = 3))
  v2 <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(d$Y, TRUE),
                           control = list(learn_hyper = TRUE, threads = 2, hyper_maxit = 3))
  expect_identical(v1$mean, v2$mean)
})

test_that("K = 2 works and the response encoding handles bad input", {
  d <- smf_data(30, seed = 8)
  Y2 <- cbind(d$Y[, 1], d$Y[, 2] + d$Y[, 3])
  k <- kernel_se(variance = 2, lengthscale = 1)
  for (bij in c(FALSE, TRUE)) {
    fit <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(Y2, bij),
                              control = list(learn_hyper = FALSE, threads = 1))
    P <- smf_ns$lik_prob.augp_logistic_softmax(smf_ns$logistic_softmax(bijective = bij),
                                               as.matrix(fit$mean))
    expect_equal(rowSums(P), rep(1, 30))
    expect_gt(mean(max.col(P) == 2 - Y2[, 1]), 0.8)
  }
  enc <- smf_ns$encode_response.augp_logistic_softmax
  lk <- smf_ns$logistic_softmax()
  y <- factor(c("a", "b", "c", "a"), levels = c("a", "b", "c", "d"))
  expect_warning(r <- enc(lk, y), "'d'")
  expect_equal(r$levels, c("a", "b", "c"))
  expect_equal(unname(r$Y), diag(3)[c(1, 2, 3, 1), ])
  expect_warning(r2 <- enc(lk, y[1:3], weights = c(2, 0, 1)), "'b', 'd'")  # zero weight: dropped
  expect_equal(r2$levels, c("a", "c"))
  expect_equal(r2$keep, c(TRUE, FALSE, TRUE))
  expect_equal(unname(r2$Y), rbind(c(2, 0), c(0, 0), c(0, 1)))
  expect_error(enc(lk, factor(c("a", "a"))), "only one class")
  expect_error(enc(lk, c(1.5, 2)), "factor")
  expect_error(enc(lk, factor(c("a", NA, "b"))), "NA")
  expect_error(enc(smf_ns$logistic_softmax(theta = c(1, 2)), factor(c("a", "b", "c"))), "theta")
  expect_error(smf_ns$logistic_softmax(theta = c(1, -1)), "theta")
  expect_error(smf_ns$logistic_softmax(bijective = NA), "bijective")
  th <- enc(smf_ns$logistic_softmax(theta = c(2, 1, 3)), factor(c("a", "b", "c")))$theta
  expect_equal(unname(th), c(2, 1, 3))
})

test_that("augp() picks logistic_softmax for a factor with > 2 levels; predictions have the contract shapes", {
  set.seed(4)
  d <- iris[sample(150, 45), ]
  fit <- augp(Species ~ Petal.Length + Petal.Width, data = d, method = "vi",
              control = augp_control(threads = 1, maxit = 60))
  expect_s3_class(fit$likelihood, "augp_logistic_softmax")
  new <- data.frame(Petal.Length = c(1.4, 4.4, 6), Petal.Width = c(0.2, 1.4, 2.1))
  P <- predict(fit, newdata = new, type = "response")
  expect_equal(dim(P), c(3L, 3L))
  expect_equal(colnames(P), levels(iris$Species))
  expect_equal(unname(rowSums(P)), rep(1, 3), tolerance = 1e-12)
  cl <- predict(fit, newdata = new, type = "class")
  expect_equal(levels(cl), levels(iris$Species))
  expect_equal(as.character(cl), levels(iris$Species))
  expect_equal(dim(predict(fit, newdata = new, type = "link")), c(3L, 3L))
  # K = 2 with an explicit logistic_softmax(), both versions
  d2 <- droplevels(d[d$Species != "setosa", ])
  for (bij in c(FALSE, TRUE)) {
    f2 <- augp(Species ~ Petal.Length + Petal.Width, data = d2, method = "vi",
               likelihood = logistic_softmax(bijective = bij),
               control = augp_control(threads = 1, maxit = 60))
    P2 <- predict(f2, newdata = new[2:3, ], type = "response")
    expect_equal(dim(P2), c(2L, 2L))
    expect_equal(as.character(predict(f2, newdata = new[2:3, ], type = "class")),
                 c("versicolor", "virginica"))
  }
})

test_that("augp() front end: one class, empty level, unseen predictor level", {
  d <- iris[c(1:10, 51:60), ]
  expect_error(augp(Species ~ Petal.Length, data = d[1:10, ], likelihood = logistic_softmax(),
                    control = augp_control(threads = 1)), "only one class")
  # an empty level is dropped with a warning naming it (whether it has no rows or
  # only rows of weight 0)
  expect_warning(f <- augp(Species ~ Petal.Length, data = d, likelihood = logistic_softmax(),
                           control = augp_control(threads = 1, maxit = 30)), "'virginica'")
  expect_equal(f$levels, c("setosa", "versicolor"))
  d <- droplevels(d)
  d3 <- iris[c(1:10, 51:60, 101:103), ]
  d3$w <- c(rep(1, 20), 0, 0, 0)
  expect_warning(f <- augp(Species ~ Petal.Length, data = d3, weights = w,
                           likelihood = logistic_softmax(),
                           control = augp_control(threads = 1, maxit = 30)), "'virginica'")
  expect_equal(f$levels, c("setosa", "versicolor"))
  d$g <- factor(rep(c("a", "b"), 10))
  f <- augp(Species ~ Petal.Length + g, data = d, likelihood = logistic_softmax(),
            control = augp_control(threads = 1, maxit = 30))
  expect_error(predict(f, newdata = data.frame(Petal.Length = 1, g = "z"), type = "response"))
  expect_error(augp(Species ~ Petal.Length, data = d, likelihood = logistic_softmax(theta = c(1, 2, 3)),
                    control = augp_control(threads = 1)), "theta")
})
