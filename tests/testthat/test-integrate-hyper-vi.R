# augp_control(integrate_hyper = TRUE) on variational fits (negative binomial,
# Poisson-logistic, Bernoulli, logistic-softmax on the exact GP): the mixture of
# variational posteriors over the Laplace approximation of the kernel hyperparameters
# (R/hyper_integrate.R, vi_hyper_mixture()). The checks recompute it from independent
# engine fits at fixed kernels.
ihv_ns <- asNamespace("augmentedGP")

ihv_counts <- function(n = 36, seed = 3) {
  set.seed(seed)
  x <- sort(runif(n, -2, 2))
  data.frame(x = x, y = rnbinom(n, mu = exp(1 + sin(1.5 * x)), size = 4))
}

ihv_binary <- function(n = 40, seed = 4) {
  set.seed(seed)
  x <- sort(runif(n, -2, 2))
  data.frame(x = x, y = factor(rbinom(n, 1, plogis(2 * sin(1.5 * x))), labels = c("a", "b")))
}

ihv_classes <- function(n = 36, seed = 5) {
  set.seed(seed)
  x <- sort(runif(n, -2, 2))
  data.frame(x = x, y = factor(cut(x + rnorm(n, sd = 0.5), c(-Inf, -0.7, 0.7, Inf)),
                                labels = c("l", "m", "h")))
}

ihv_fit <- function(df, likelihood, points = 6, threads = 1, tol = 1e-6, ...) {
  augp(y ~ x, df, likelihood = likelihood, kernel = kernel_se(), seed = 7,
       control = augp_control(threads = threads, integrate_hyper = TRUE, hyper_points = points,
                              tol = tol, ...))
}

# An independent variational fit of the engine at fixed kernel log parameters `theta`
# (standardised units) and the fit's learned likelihood parameters (engine$lik).
ihv_fixed <- function(fit, theta, tol) {
  eng <- fit$engine
  k <- ihv_ns$engine_set_params(eng$kernel, theta)
  ihv_ns$augp_engine(eng$X, kernel = k, lik = eng$lik, mean0 = eng$mean0,
                     control = augp_control(threads = 1, learn_hyper = FALSE, tol = tol,
                                            maxit = 5000))
}

test_that("the negative-binomial mixture is the average of independent fixed-kernel fits", {
  df <- ihv_counts()
  tol <- 1e-12
  fit <- ihv_fit(df, negative_binomial(), tol = tol, refine = FALSE)
  mx <- fit$engine$mixture
  expect_equal(mx$J, 6L)
  expect_length(mx$lik_names, 0)
  # the likelihood parameters stay at their learned values
  expect_equal(fit$engine$lik$r, fit$likelihood$r)
  nd <- data.frame(x = c(-1.7, 0.1, 1.3))
  Xs <- matrix((nd$x - fit$centre) / fit$scale)
  parts <- lapply(seq_len(mx$J), function(j) {
    e <- ihv_fixed(fit, mx$theta[j, ], tol)
    c(ihv_ns$augp_engine_predict(e, Xs), list(train_m = e$mean, train_v = e$var))
  })
  M <- sapply(parts, `[[`, "mean")
  V <- sapply(parts, `[[`, "var")
  mean <- rowMeans(M)
  pl <- predict(fit, nd, type = "link", se.fit = TRUE)
  expect_equal(pl$fit, mean, tolerance = 1e-6)
  expect_equal(pl$se.fit, sqrt(rowMeans(V + M^2) - mean^2), tolerance = 1e-6)
  # the stored training marginals are those of the fixed-kernel fits
  expect_equal(mx$mean[, 2], parts[[2]]$train_m, tolerance = 1e-6)
  expect_equal(mx$var[, 5], parts[[5]]$train_v, tolerance = 1e-6)
  Mt <- sapply(parts, `[[`, "train_m")
  expect_equal(as.numeric(fit$engine$mean), rowMeans(Mt), tolerance = 1e-6)
  # the response mean: the average of the points' E[exp(f)] = exp(m + v / 2)
  pr <- predict(fit, nd, type = "response")
  expect_equal(as.numeric(pr), rowMeans(exp(M + V / 2)), tolerance = 1e-6)
})

test_that("the Laplace sd is the inverse negative Hessian of the profiled ELBO of fixed-kernel fits", {
  df <- ihv_counts()
  fit <- ihv_fit(df, negative_binomial(), refine = FALSE)
  mx <- fit$engine$mixture
  mode <- mx$mode
  p <- length(mode)
  h <- 1e-2
  L <- function(th) {
    e <- ihv_fixed(fit, th, 1e-13)
    e$elbo[length(e$elbo)]
  }
  f0 <- L(mode)
  H <- matrix(0, p, p)
  for (i in seq_len(p)) for (j in seq_len(i)) {
    e <- function(a, b) {
      q <- mode
      q[i] <- q[i] + a * h
      q[j] <- q[j] + b * h
      L(q)
    }
    H[i, j] <- H[j, i] <- if (i == j) (e(1, 0) - 2 * f0 + e(-1, 0)) / h^2 else
      (e(1, 1) - e(1, -1) - e(-1, 1) + e(-1, -1)) / (4 * h^2)
  }
  expect_true(all(mx$sd > 0))
  expect_equal(mx$sd, sqrt(diag(solve(-H))), tolerance = 1e-2)
  # antithetic pairs about the mode
  expect_equal(mx$theta[1:3, ] + mx$theta[4:6, ], matrix(2 * mode, 3, p, byrow = TRUE),
               tolerance = 1e-12)
  expect_gt(mx$ess, 1)
})

test_that("a direction along which the ELBO is flat is drawn from the floor and leaves the ratios", {
  # all-zero counts: the kernel variance ends at its lower bound (held) and the ELBO is
  # flat in the lengthscale, which gets the floor's sd LAPLACE_MAX_SD
  set.seed(3)
  d <- data.frame(x = sort(runif(10)), y = 0)
  expect_silent(fit <- augp(y ~ x, d, likelihood = poisson_logistic(lambda = 3), kernel = kernel_se(),
                            seed = 7, control = augp_control(threads = 1, integrate_hyper = TRUE,
                                                             hyper_points = 6, tol = 1e-10)))
  mx <- fit$engine$mixture
  expect_equal(mx$sd, c(0, ihv_ns$LAPLACE_MAX_SD))
  expect_equal(mx$theta[, 1], rep(mx$mode[1], 6))
  # the ratios are the ELBO at the points alone (the floor's Gaussian is the prior there)
  L <- vapply(seq_len(mx$J), function(j) {
    e <- ihv_fixed(fit, mx$theta[j, ], 1e-12)
    e$elbo[length(e$elbo)]
  }, 0)
  expect_equal(mx$log_ratio, L, tolerance = 1e-6)
  w <- exp(L - max(L))
  expect_equal(mx$ess, sum(w)^2 / sum(w^2), tolerance = 1e-6)
})

ihv_response_checks <- function(fit, df) {
  mx <- fit$engine$mixture
  expect_false(is.null(mx))
  nd <- df[c(2, 15, 30), , drop = FALSE]
  pr <- predict(fit, nd, type = "response", se.fit = TRUE)
  expect_true(all(is.finite(unlist(pr))))
  if (fit$q == 1L) {
    pi <- predict(fit, nd, interval = "prediction", level = 0.8)
    expect_true(all(is.finite(as.matrix(pi))))
  }
  ll <- log_lik(fit, ndraws = 2L * mx$J)
  expect_equal(dim(ll), c(2L * mx$J, nrow(df)))
  expect_true(all(is.finite(ll)))
  lln <- log_lik(fit, newdata = nd, ndraws = mx$J)
  expect_equal(dim(lln), c(mx$J, 3L))
  sims <- simulate(fit, nsim = 3, seed = 2)
  expect_equal(nrow(as.data.frame(sims)), nrow(df))
  h <- posterior::as_draws_matrix(hyper_draws(fit))
  expect_equal(nrow(h), mx$J)
  s <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Laplace approximation", s)))
  expect_true(any(grepl(sprintf("averaged over the hyperparameters: %d points", mx$J),
                        capture.output(print(fit)))))
}

test_that("negative-binomial, Poisson-logistic and Bernoulli mixtures predict, score and simulate", {
  dc <- ihv_counts()
  ihv_response_checks(ihv_fit(dc, negative_binomial()), dc)
  ihv_response_checks(ihv_fit(dc, poisson_logistic()), dc)
  db <- ihv_binary()
  fb <- ihv_fit(db, bernoulli_logit())
  ihv_response_checks(fb, db)
  # Bernoulli: the probabilities are the average of the points' E[sigmoid(f)]
  nd <- data.frame(x = c(-1, 0.5))
  parts <- ihv_ns$vi_marginals(fb, ihv_ns$new_design(fb, nd), c(TRUE, TRUE))
  p1 <- predict(fb, nd, type = "response")
  z <- qnorm((seq_len(4000) - 0.5) / 4000)
  ref <- rowMeans(sapply(seq_len(ncol(parts$M)), function(j) {
    vapply(1:2, function(i) mean(plogis(parts$M[i, j] + sqrt(parts$V[i, j]) * z)), 0)
  }))
  expect_equal(as.numeric(p1), ref, tolerance = 2e-3)
})

test_that("a logistic-softmax mixture holds n q values per point and predicts classes", {
  d <- ihv_classes()
  fit <- ihv_fit(d, logistic_softmax(), points = 4, tol = 1e-10, refine = FALSE)
  mx <- fit$engine$mixture
  q <- fit$q
  expect_equal(dim(mx$mean), c(nrow(d) * q, 4L))
  m2 <- ihv_ns$mixture_member(fit$engine, 2)
  expect_equal(dim(m2$alpha), c(nrow(d), q))
  # the link mean is the average of the fixed-kernel fits' (all q columns)
  nd <- d[c(3, 20), "x", drop = FALSE]
  Xs <- matrix((nd$x - fit$centre) / fit$scale)
  M <- sapply(seq_len(mx$J), function(j) {
    as.numeric(ihv_ns$augp_engine_predict(ihv_fixed(fit, mx$theta[j, ], 1e-10), Xs)$mean)
  })
  lp <- ihv_ns$latent_posterior(fit, nd)
  expect_equal(as.numeric(lp$mean), rowMeans(M), tolerance = 1e-5)
  ihv_response_checks(fit, d)
  pp <- predict(fit, nd, type = "response")
  expect_equal(unname(rowSums(as.matrix(pp))), c(1, 1), tolerance = 1e-8)
})

test_that("the mixture depends on the seed only", {
  dc <- ihv_counts()
  a <- ihv_fit(dc, negative_binomial(), threads = 1)
  b <- ihv_fit(dc, negative_binomial(), threads = 2)
  nd <- data.frame(x = c(-1, 0, 1))
  expect_identical(a$engine$mixture, b$engine$mixture)
  expect_identical(predict(a, nd, interval = "prediction"), predict(b, nd, interval = "prediction"))
  c2 <- augp(y ~ x, dc, likelihood = negative_binomial(), kernel = kernel_se(), seed = 8,
             control = augp_control(threads = 1, integrate_hyper = TRUE, hyper_points = 6))
  expect_false(identical(a$engine$mixture$theta, c2$engine$mixture$theta))
})

test_that("integrate_hyper = TRUE refuses sparse and Gibbs fits and fixed kernels, naming the argument", {
  dc <- ihv_counts()
  ctl <- augp_control(threads = 1, integrate_hyper = TRUE)
  expect_error(augp(y ~ x, dc, likelihood = negative_binomial(), inducing = 10, control = ctl),
               "integrate_hyper")
  expect_error(augp(y ~ x, dc, likelihood = negative_binomial(), method = "gibbs", control = ctl),
               "integrate_hyper")
  expect_error(augp(y ~ x, dc, likelihood = negative_binomial(),
                    control = augp_control(threads = 1, integrate_hyper = TRUE, learn_hyper = FALSE)),
               "integrate_hyper")
})

test_that("integrate_hyper = \"auto\" averages small Poisson-logistic fits only", {
  dc <- ihv_counts()
  ctl <- augp_control(threads = 1)
  fp <- augp(y ~ x, dc, likelihood = poisson_logistic(), control = ctl)
  expect_false(is.null(fp$engine$mixture))
  expect_true(isTRUE(fp$control$integrate_hyper))
  expect_null(augp(y ~ x, dc, likelihood = negative_binomial(), control = ctl)$engine$mixture)
  expect_null(augp(y ~ x, ihv_binary(), control = ctl)$engine$mixture)
  expect_null(augp(y ~ x, dc, likelihood = poisson_logistic(), inducing = 10,
                   control = ctl)$engine$mixture)
})
