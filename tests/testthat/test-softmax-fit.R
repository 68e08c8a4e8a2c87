# Logistic-softmax fits through the engine: CAVI monotonicity, Gibbs against an
# independent reference sampler written here (elliptical slice sampling on the
# exact log-likelihood), VI against long Gibbs, reproducibility.

smf_ns <- asNamespace("augmentedGP")
smf_sig <- function(x) 1 / (1 + exp(-x))

# 600 Vehicle rows (seed 1), scaled inputs and the engine's logistic-softmax list (K = 4).
smf_vehicle <- function() {
  env <- environment()
  data("Vehicle", package = "mlbench", envir = env)
  set.seed(1)
  tr <- sample(nrow(env$Vehicle))[1:600]
  X <- scale(as.matrix(env$Vehicle[tr, 1:18]))
  Y <- unname(stats::model.matrix(~ Class - 1, env$Vehicle[tr, ]))
  attributes(Y) <- list(dim = dim(Y))
  list(X = X, lik = list(type = "logistic_softmax", q = 4L, Y = Y, bijective = FALSE,
                         theta = rep(1, 4)))
}

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
    # The augmented ELBO is a function of the Gaussian q(f) (q(n, omega) at its optimum);
    # for every f, E_q(n,omega)[log p(y, n, omega | f) - log q(n, omega)] <= log p(y | f)
    # (Jensen), so ELBO <= E_q(f)[log p(y | f)] - KL(q(f) || p(f)) <= log p(y). The middle
    # (collapsed) bound is computed here independently: the row expectation by tensor
    # Gauss-Hermite over the row's independent latents, the KL from the full covariance
    # S_j = (K^-1 + diag(omega_j))^-1 rebuilt from the engine's sites.
    elbo <- fit$elbo[length(fit$elbo)]
    expect_true(is.finite(elbo))
    q <- if (bij) 2 else 3
    m <- as.matrix(fit$mean)
    v <- as.matrix(fit$var)
    Kf <- smf_ns$kernel_matrix(k, d$X) + diag(fit$jitter, 40)
    Ki <- solve(Kf)
    kl <- 0
    for (j in seq_len(q)) {
      S <- solve(Ki + diag(as.matrix(fit$omega)[, j]))
      expect_equal(diag(S), v[, j], tolerance = 1e-6)
      kl <- kl + 0.5 * (sum(Ki * S) + sum(m[, j] * (Ki %*% m[, j])) - 40 +
                          as.numeric(determinant(Kf)$modulus - determinant(S)$modulus))
    }
    gh <- gauss_hermite(16)
    nodes <- as.matrix(expand.grid(rep(list(gh$x), q)))
    wts <- apply(as.matrix(expand.grid(rep(list(gh$w), q))), 1, prod) / pi^(q / 2)
    ell <- sum(vapply(seq_len(40), function(i) {
      Fi <- sqrt(2) * nodes * rep(sqrt(v[i, ]), each = nrow(nodes)) + rep(m[i, ], each = nrow(nodes))
      if (bij) Fi <- cbind(Fi, 0)
      A <- smf_sig(Fi) * rep(c(1, 1.5, 0.8), each = nrow(Fi))
      lp <- drop(log(A) %*% Y[i, ]) - sum(Y[i, ]) * log(rowSums(A))
      sum(wts * lp)
    }, numeric(1)))
    collapsed <- ell - kl
    expect_lte(elbo, collapsed + 1e-6 * abs(collapsed))
    # the mean-field augmentation's extra looseness is moderate (measured: 6.5 of 44 nats
    # non-bijective, 4.5 of 49 bijective): a loose check that the comparison is not vacuous
    expect_lt(collapsed - elbo, 0.2 * abs(collapsed))
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
                                           iter = 10500, warmup = 500))
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
    pr <- function(D) sapply(1:4, function(i) colMeans(smf_ns$lik_response_mean(
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
    smf_ns$lik_response_mean(lp, pv$mean + sqrt(pv$var) * matrix(stats::rnorm(9), 3))
  })) / S
  g <- smf_ns$augp_engine(d$X, kernel = k, method = "gibbs", lik = smf_lik(d$Y, FALSE), seed = 2,
                          control = list(learn_hyper = FALSE, threads = 1, iter = 3300, warmup = 300))
  pg <- smf_ns$augp_engine_predict(g, Xn, draws = TRUE)
  pgi <- apply(pg$draws, 1, function(Fs) smf_ns$lik_response_mean(lp, Fs))
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
                       control = list(learn_hyper = FALSE, threads = th, chains = 2, iter = 70,
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

test_that("per-class parallel Gaussian steps (n >= 150, one chain): 1 thread == 2 threads", {
  # src/parallel.h runs the latent columns in parallel only for n >= 150 and, in
  # Gibbs, when chains < threads: n = 160 and chains = 1 exercise that path.
  d <- smf_data(160, seed = 21)
  k <- kernel_se(variance = 2, lengthscale = 1)
  for (bij in c(FALSE, TRUE)) {
    lik <- smf_lik(d$Y, bij, c(1, 1.3, 0.7))
    g1 <- expect_threads_identical(function(th, method) {
      smf_ns$augp_engine(d$X, kernel = k, method = method, lik = lik, seed = 4,
                         control = list(learn_hyper = FALSE, threads = th, maxit = 15, chains = 1,
                                        iter = 40, warmup = 10))
    })
    expect_equal(dim(g1), c(30L, 1L, 160L * (if (bij) 2L else 3L)))
  }
})

test_that("K = 2 works and the response encoding handles bad input", {
  d <- smf_data(30, seed = 8)
  Y2 <- cbind(d$Y[, 1], d$Y[, 2] + d$Y[, 3])
  k <- kernel_se(variance = 2, lengthscale = 1)
  for (bij in c(FALSE, TRUE)) {
    fit <- smf_ns$augp_engine(d$X, kernel = k, method = "vi", lik = smf_lik(Y2, bij),
                              control = list(learn_hyper = FALSE, threads = 1))
    P <- smf_ns$lik_response_mean(smf_ns$logistic_softmax(bijective = bij),
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
  expect_error(predict(f, newdata = data.frame(Petal.Length = 1, g = "z"), type = "response"),
               "`newdata` has level\\(s\\) 'z' of factor 'g' not seen in training")
  expect_error(augp(Species ~ Petal.Length, data = d, likelihood = logistic_softmax(theta = c(1, 2, 3)),
                    control = augp_control(threads = 1)), "theta")
})

test_that("K = 2: logistic-softmax is the binary GP classifier up to the link", {
  # Bijective, K = 2, weights (t1, t2), f_2 = 0: p(y = level 1 | f) = t1 s / (t1 s + t2 / 2),
  # s = sigma(f): a Bernoulli likelihood with the monotone link h(f) = 2 s / (2 s + 1) (theta = 1),
  # h(0) = 1/2 but h < 2/3 (the capped class 1); bernoulli_logit uses sigma(g) for level 2.
  set.seed(2)
  n <- 12
  f <- stats::rnorm(n, sd = 2)
  Y <- diag(2)[sample(2, n, TRUE), ]
  for (th in list(c(1, 1), c(2, 0.5))) {
    h <- th[1] * smf_sig(f) / (th[1] * smf_sig(f) + th[2] / 2)
    ll <- smf_ns$.gp_lik_eval_cpp(smf_lik(Y, TRUE, th), matrix(f), matrix(0, n, 1), matrix(f))$loglik
    expect_equal(ll, sum(Y[, 1] * log(h) + Y[, 2] * log1p(-h)), tolerance = 1e-12)
  }
  # Fits on a well separated 1-d problem with the same fixed kernel: the same class map
  # away from the boundary (h(f) > 1/2 iff f > 0, as for sigma), but the probabilities
  # differ as the links do: the bijective logistic-softmax never gives class 1 more than 2/3.
  set.seed(3)
  x <- sort(stats::runif(80, -3, 3))
  y <- factor(ifelse(x + stats::rnorm(80, sd = 0.3) > 0, "b", "a"))
  d <- data.frame(x = x, y = y)
  # (at the non-bijective model's prior mean of -6 and this small fixed variance, coordinate
  # ascent needs a few hundred sweeps)
  ctl <- augp_control(threads = 1, learn_hyper = FALSE, maxit = 2000)
  k <- kernel_se(variance = 4, lengthscale = 1)
  fb <- augp(y ~ x, data = d, kernel = k, likelihood = bernoulli_logit(), control = ctl)
  new <- data.frame(x = c(seq(-3, -0.75, by = 0.25), seq(0.75, 3, by = 0.25)))
  pb <- predict(fb, newdata = new, type = "response")  # P(y = "b")
  truth <- ifelse(new$x > 0, "b", "a")
  expect_equal(unname(ifelse(pb > 0.5, "b", "a")), truth)
  for (bij in c(FALSE, TRUE)) {
    fs <- augp(y ~ x, data = d, kernel = k, likelihood = logistic_softmax(bijective = bij),
               control = ctl)
    ps <- predict(fs, newdata = new, type = "response")
    expect_equal(as.character(predict(fs, newdata = new, type = "class")), truth)
    # both are monotone in x along this problem's direction: the ranks of P(b) agree
    expect_gt(stats::cor(ps[, "b"], pb, method = "spearman"), 0.95)
    if (bij) {
      expect_true(all(ps[, "a"] < 2 / 3))
      expect_gt(max(1 - pb), 0.9)
    }
  }
})

test_that("softmax methods: print, summary, class map with two inputs, draws of Gibbs fits", {
  set.seed(6)
  d <- iris[sample(150, 36), ]
  v <- suppressWarnings(augp(Species ~ Petal.Length + Petal.Width, data = d,
                             control = augp_control(threads = 1, hyper_maxit = 3, maxit = 60)),
                        classes = "augp_convergence_warning")
  expect_output(print(v), "logistic_softmax")
  expect_output(print(v), "Class weights theta \\(fixed")
  sm <- summary(v)
  expect_s3_class(sm, "summary.augp")
  expect_equal(sm$levels, levels(iris$Species))
  expect_equal(sm$q, 3L)
  expect_true(sm$accuracy >= 0 && sm$accuracy <= 1 && sm$logloss > 0)
  expect_equal(unname(sm$theta), rep(1, 3))
  expect_output(print(sm), "Categories \\(3\\): setosa, versicolor, virginica")
  p <- ggplot2::autoplot(v, type = "predictive")
  expect_s3_class(p, "ggplot")
  expect_equal(levels(p$data$class), levels(iris$Species))
  expect_setequal(as.character(unique(p$data$class)), levels(iris$Species))
  b <- ggplot2::ggplot_build(p)
  expect_equal(length(unique(b$data[[1]]$fill)), 3L)  # the raster: one fill per class
  expect_equal(nrow(b$data[[2]]), nrow(d))            # the observed points
  g <- suppressWarnings(augp(Species ~ Petal.Length + Petal.Width, data = d, method = "gibbs",
                             seed = 2, control = augp_control(threads = 1, learn_hyper = FALSE,
                                                              iter = 40, warmup = 20, chains = 2)),
                        classes = "augp_convergence_warning")
  expect_output(print(g), "Draws: 20 per chain x 2 chain")
  expect_output(print(summary(g)), "R-hat")
  dd <- posterior::as_draws_df(g)
  # one variable per observation and latent function (q = K = 3), plus .chain/.iteration/.draw
  expect_equal(posterior::nvariables(dd), 36L * 3L)
  expect_equal(ncol(dd), 36L * 3L + 3L)
  expect_equal(posterior::ndraws(dd), 40L)
  expect_true(all(c("f[1,setosa]", "f[36,virginica]") %in% posterior::variables(dd)))
  expect_equal(unname(as.numeric(dd[["f[2,versicolor]"]])),
               as.numeric(g$engine$draws[, , 36 + 2]))
  expect_equal(posterior::nvariables(posterior::as_draws_df(v, ndraws = 10)), 36L * 3L)
  # trace plot: one panel per class by default (observation 1 in each latent column)
  tp <- ggplot2::autoplot(g, type = "trace")
  expect_equal(levels(tp$data$variable), c("f[1,setosa]", "f[1,versicolor]", "f[1,virginica]"))
  expect_equal(tp$data$value[tp$data$variable == "f[1,virginica]"],
               as.numeric(g$engine$draws[, , 1 + 2 * 36]))
})

test_that("nested-subset hyperparameter search does not collapse to the flat (uniform) fit", {
  # Vehicle with three subset levels (150, 300, 600): the 150-point optimum is a poor
  # start at 300 points (its CAVI fit is worse than predicting 1/K everywhere) and,
  # started there, L-BFGS ran the kernel variance to zero (ELBO = -n log K). Each level
  # now starts from the better of the previous optimum and the initial kernel.
  skip_if_not_installed("mlbench")
  veh <- smf_vehicle()
  X <- veh$X
  lik <- veh$lik
  ctl <- smf_ns$as_augp_control(list(threads = 2L, maxit = 200, tol = 1e-6, hyper_maxit = 30))
  hl <- smf_ns$engine_hyper_learn(X, lik, kernel_se(variance = 1, lengthscale = 4), ctl,
                                  matrix(0, 600, 4), 1e-6, level_min = 150)
  expect_equal(hl$levels, c(150, 300, 600))
  expect_gt(hl$kernel$variance, 1)
  K <- kernel_matrix(hl$kernel, X)
  diag(K) <- diag(K) + 1e-6
  fit <- smf_ns$engine_cavi(K, lik, matrix(0, 600, 4), hl$state$kappa, hl$state$omega, 200L,
                            1e-6, 2L)
  # far above the flat fit's ELBO, -600 log 4 = -831.8
  expect_gt(fit$elbo[length(fit$elbo)], -600 * log(4) + 200)
})

test_that("Monte Carlo class probabilities in C++ equal the R computation over the same draws", {
  set.seed(3)
  n <- 70; S <- 50  # more than one block of 64 rows
  for (case in list(list(lk = logistic_softmax(), q = 3, K = 3),
                    list(lk = logistic_softmax(bijective = TRUE, theta = c(1, 2, 0.5)), q = 2, K = 3),
                    list(lk = logistic_softmax(theta = c(3, 1, 1, 0.2)), q = 4, K = 4),
                    list(lk = stick_breaking(), q = 3, K = 4))) {
    m <- matrix(stats::rnorm(n * case$q, sd = 2), n)
    s <- matrix(stats::runif(n * case$q, 0.1, 2), n)
    Z <- matrix(stats::rnorm(S * case$q), S)
    th <- if (is.null(case$lk$theta)) rep(1, case$K) else case$lk$theta
    type <- if (inherits(case$lk, "augp_stick_breaking")) 1L else 0L
    spec <- if (type == 1L) list(type = "stick_breaking", Y = matrix(0, 0, case$K)) else
      list(type = "logistic_softmax", Y = matrix(0, 0, case$K), bijective = isTRUE(case$lk$bijective),
           theta = th)
    r <- smf_ns$.lik_response_cpp(spec, m, s * s, Z, 0, 2L)
    r1 <- smf_ns$.lik_response_cpp(spec, m, s * s, Z, 0, 1L)
    expect_identical(r, r1)
    for (i in seq_len(n)) {
      Fi <- sweep(sweep(Z, 2, s[i, ], "*"), 2, m[i, ], "+")
      P <- if (type == 1L) pi_SB(Fi) else {
        A <- smf_sig(if (isTRUE(case$lk$bijective)) cbind(Fi, 0) else Fi) * rep(th, each = S)
        A / rowSums(A)
      }
      expect_equal(r$mean[i, ], colMeans(P), tolerance = 1e-12)
      expect_equal(r$sd[i, ], apply(P, 2, stats::sd), tolerance = 1e-10)
    }
  }
  expect_error(smf_ns$.lik_response_cpp(list(type = "logistic_softmax", Y = matrix(0, 0, 3),
                                              bijective = FALSE, theta = rep(1, 3)),
                                         matrix(0, 2, 3), matrix(1, 2, 2), matrix(0, 5, 3), 0, 1L),
               "conform")
  # latent means far in either tail still give probabilities that sum to 1
  spec <- list(type = "logistic_softmax", Y = matrix(0, 0, 3), bijective = FALSE, theta = rep(1, 3))
  r <- smf_ns$.lik_response_cpp(spec, rbind(c(-700, 30, 700), c(-40, -45, -50)), matrix(1, 2, 3),
                                matrix(stats::rnorm(60), 20), 0, 1L)
  expect_true(all(is.finite(r$mean)) && all(is.finite(r$sd)))
  expect_equal(rowSums(r$mean), c(1, 1), tolerance = 1e-12)
  expect_equal(r$mean[1, ], c(0, 0.5, 0.5), tolerance = 1e-9)  # sigma saturates at 1
})

test_that("CAVI from the default start reaches the good fixed point at a large kernel variance", {
  # The learned Vehicle kernel has variance e^8 = 2981 and lengthscale 43 (on scaled
  # inputs). Starting sites computed under the prior's full variance (E omega about
  # 1 / (4 sqrt(2981)) everywhere) led CAVI to a fixed point with ELBO -867.8, below
  # the flat fit's -600 log 4 = -831.8; sites at the prior mean with zero variance
  # reach -455.3.
  skip_if_not_installed("mlbench")
  veh <- smf_vehicle()
  X <- veh$X
  lik <- veh$lik
  K <- kernel_matrix(kernel_se(variance = exp(8), lengthscale = 43), X)
  diag(K) <- diag(K) + 1e-6
  fit <- smf_ns$engine_cavi(K, lik, matrix(0, 600, 4), NULL, NULL, 500L, 1e-8, 2L)
  e <- fit$elbo
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  expect_gt(e[length(e)], -600 * log(4) + 300)
})
