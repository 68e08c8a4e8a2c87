# Refinement of the variational q(f) by natural-gradient steps on the direct ELBO
# (augp_control(refine = ): Likelihood::expected_loglik_derivs, cvi_refine in
# src/cavi.cpp, engine_refine in R/engine.R).
cv_ns <- asNamespace("augmentedGP")

# E log p(y_i | f_i) of the logistic-softmax likelihood per observation, averaged over
# f_t = m + sqrt(v) Z_t, written out densely in R (counts Y, class weights theta; the
# likelihood leaves out the multinomial coefficient).
cv_ell <- function(Y, theta, m, v, Z) {
  n <- nrow(m)
  out <- numeric(n)
  for (t in seq_len(nrow(Z))) {
    f <- m + sqrt(v) * rep(Z[t, ], each = n)
    p <- sweep(stats::plogis(f), 2, theta, "*")
    p <- p / rowSums(p)
    out <- out + rowSums(Y * log(p))
  }
  out / nrow(Z)
}

# A fixed kernel (no search): the ladder that picks the kernel scores its rungs by a short
# refinement when the fit is refined, so fits with and without refinement may learn
# different kernels; at one fixed kernel they share the coordinate-ascent fit.
cv_ctl <- function(...) augp_control(threads = 1, learn_hyper = FALSE, maxit = 2000, ...)
cv_kernel <- function() kernel_se(variance = 50, lengthscale = 2)

cv_data <- function(n = 45, seed = 2) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  cls <- ifelse(x[, 1] > 0.4, "a", ifelse(x[, 2] > 0, "b", "c"))
  flip <- sample(n, 5)
  cls[flip] <- sample(c("a", "b", "c"), 5, replace = TRUE)
  list(x = x, y = factor(cls))
}

test_that("expected_loglik_derivs: the expected gradient and curvature are the derivatives of E log p", {
  set.seed(7)
  n <- 5
  q <- 3
  Y <- t(vapply(c(1, 1, 3, 1, 2), function(s) as.numeric(stats::rmultinom(1, s, rep(1, 3))), numeric(3)))
  theta <- c(1, 2, 0.5)
  lik <- list(type = "logistic_softmax", q = 3L, Y = Y, bijective = FALSE, theta = theta)
  m <- matrix(rnorm(n * q, sd = 1.5), n, q)
  v <- matrix(runif(n * q, 0.05, 1.5), n, q)
  Z <- matrix(rnorm(200 * q), 200, q)
  d <- cv_ns$.lik_expected_derivs_cpp(lik, m, v, Z)
  expect_equal(d$ell, cv_ell(Y, theta, m, v, Z), tolerance = 1e-10)
  expect_equal(d$ell, cv_ns$.lik_expected_loglik_cpp(lik, m, v, Z), tolerance = 1e-12)
  h <- 1e-5
  G <- H <- matrix(0, n, q)
  for (j in seq_len(q)) {
    e <- matrix(0, n, q)
    e[, j] <- h
    # E log p of point i depends on row i only: one difference per column gives all n
    G[, j] <- (cv_ell(Y, theta, m + e, v, Z) - cv_ell(Y, theta, m - e, v, Z)) / (2 * h)
    H[, j] <- -(cv_ell(Y, theta, m + 10 * e, v, Z) - 2 * cv_ell(Y, theta, m, v, Z) +
                  cv_ell(Y, theta, m - 10 * e, v, Z)) / (10 * h)^2
  }
  expect_equal(d$grad, G, tolerance = 1e-7)
  expect_equal(d$neg_hess, H, tolerance = 1e-5)
  # the curvature of the link is not one-signed: some expected curvatures are negative
  mm <- matrix(c(4, -3, 0), 1, 3)
  d1 <- cv_ns$.lik_expected_derivs_cpp(list(type = "logistic_softmax", q = 3L, Y = matrix(c(1, 0, 0), 1),
                                            bijective = FALSE, theta = c(1, 1, 1)),
                                       mm, matrix(1e-8, 1, 3), matrix(0, 1, 3))
  expect_true(any(d1$neg_hess < 0))
  # a likelihood without the method answers NULL
  sb <- list(type = "stick_breaking", q = 2L, Y = matrix(c(1, 0, 0, 0, 1, 0, 0, 0, 1), 3))
  expect_null(cv_ns$.lik_expected_derivs_cpp(sb, matrix(0, 3, 2), matrix(1, 3, 2), matrix(0, 1, 2)))
})

test_that("expected_loglik_derivs of the binomial likelihood (quadrature) are the derivatives of its expected_loglik", {
  lik <- list(type = "binomial", q = 1L, y = c(0, 3, 5, 2, 1), trials = c(4, 3, 8, 2, 1))
  m <- matrix(c(-2, 0.3, 1.5, 3, -0.5), 5)
  v <- matrix(c(0.1, 2, 0.7, 4, 0.01), 5)
  Z <- matrix(0, 1, 1)
  d <- cv_ns$.lik_expected_derivs_cpp(lik, m, v, Z)
  el <- function(mm) cv_ns$.lik_expected_loglik_cpp(lik, mm, v, Z)
  expect_equal(d$ell, el(m))
  h <- 1e-5
  expect_equal(d$grad, matrix((el(m + h) - el(m - h)) / (2 * h)), tolerance = 1e-7)
  expect_equal(d$neg_hess, matrix(-(el(m + 1e-4) - 2 * el(m) + el(m - 1e-4)) / 1e-8), tolerance = 1e-5)
  expect_true(all(d$neg_hess > 0))
})

test_that("refine raises the direct ELBO and reports it as an independent computation gives it", {
  dd <- cv_data()
  fit0 <- augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), kernel = cv_kernel(),
                   control = cv_ctl(refine = FALSE), seed = 1)
  fit1 <- augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), kernel = cv_kernel(),
                   control = cv_ctl(refine = 20), seed = 1)
  e0 <- fit0$engine
  e1 <- fit1$engine
  expect_equal(e1$kernel, e0$kernel)  # the refinement keeps the kernel
  tr <- e1$refine$direct
  expect_gte(e1$refine$rounds, 1L)
  expect_length(tr, e1$refine$rounds + 1L)
  expect_true(all(diff(tr) >= 0))
  # the trace starts at the CAVI fit's direct ELBO (same draws), and ends higher
  Z <- cv_ns$direct_elbo_normals(1000L, 3L)
  d0 <- cv_ns$engine_direct_elbo(e0$lik, e0$mean, e0$var, e0$kl)
  expect_equal(tr[1], d0, tolerance = 1e-6)
  expect_gt(tr[length(tr)], d0 + 0.5)
  expect_equal(elbo(fit1), tr[length(tr)])
  # independently: q(f_k) from the sites, its KL, E_q log p by the same draws
  K <- cv_ns$engine_K(e1$kernel, e1$X, e1$jitter)
  n <- nrow(K)
  kl <- 0
  mu0 <- fit1$mean0
  expect_identical(mu0, -6)  # the non-bijective model's default prior mean
  for (k in 1:3) {
    w <- e1$omega[, k]
    S <- solve(solve(K) + diag(w))
    m <- drop(S %*% (e1$alpha[, k] + w * (e1$mean[, k] - mu0)))
    expect_equal(m, e1$mean[, k] - mu0, tolerance = 1e-6)
    expect_equal(diag(S), e1$var[, k], tolerance = 1e-6)
    expect_equal(drop(solve(K, m)), e1$alpha[, k], tolerance = 1e-5)
    kl <- kl + 0.5 * (sum(diag(solve(K, S))) + sum(m * solve(K, m)) - n +
                        as.numeric(determinant(K)$modulus - determinant(S)$modulus))
  }
  ell <- cv_ell(e1$lik$Y, rep(1, 3), e1$mean, e1$var, Z)
  expect_equal(sum(ell) - kl, elbo(fit1), tolerance = 1e-6)
  # and it is above the augmented ELBO of the CAVI fit (and the print says which bound)
  expect_gt(elbo(fit1), elbo(fit0))
  expect_output(print(fit1), "Direct ELBO of q\\(f\\) (refined in|after 20 refinement rounds)")
  expect_output(print(summary(fit1)), "Direct ELBO")
  # predictions use the refined q(f)
  p0 <- predict(fit0, dd$x[1:5, ])
  p1 <- predict(fit1, dd$x[1:5, ])
  expect_false(isTRUE(all.equal(p0, p1)))
})

test_that("refine gives the same q(f) with one and two threads", {
  # n >= 150: the columns' Gaussian steps then run on two threads
  dd <- cv_data(n = 150, seed = 4)
  ctl <- function(th) augp_control(hyper_maxit = 5, maxit = 50, threads = th, refine = 5)
  # a short kernel search (hyper_maxit = 5) keeps the test fast; its convergence warning is
  # expected and says nothing about the refinement
  f1 <- suppressWarnings(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), control = ctl(1), seed = 1))
  f2 <- suppressWarnings(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), control = ctl(2), seed = 1))
  expect_identical(f2$engine$refine, f1$engine$refine)
  expect_identical(f2$engine$mean, f1$engine$mean)
  expect_identical(f2$engine$var, f1$engine$var)
})

test_that("refine brings the class probabilities closer to a long Gibbs run's", {
  # At prior mean 0 the latents' level is identified well enough for their Gibbs
  # marginal variances to be comparable with a factorised q(f)'s (at the default -6
  # the level drifts along the nearly flat common shift, Gibbs variances about 20).
  dd <- cv_data()
  lik <- logistic_softmax(prior_mean = 0)
  k <- augp_fit(dd$x, dd$y, likelihood = lik, control = augp_quick(refine = FALSE), seed = 1)$kernel
  fit0 <- augp_fit(dd$x, dd$y, likelihood = lik, kernel = k, control = cv_ctl(refine = FALSE),
                   seed = 1)
  fit1 <- augp_fit(dd$x, dd$y, likelihood = lik, kernel = k, control = cv_ctl(refine = 40),
                   seed = 1)
  gib <- short_gibbs(augp_fit(dd$x, dd$y, likelihood = lik, method = "gibbs", kernel = k,
                              control = cv_ctl(iter = 3000, chains = 1), seed = 3))
  expect_equal(gib$kernel, fit0$kernel)
  set.seed(9)
  xs <- matrix(rnorm(40), 20, 2)
  pg <- predict(gib, xs)
  err0 <- mean(abs(predict(fit0, xs) - pg))
  err1 <- mean(abs(predict(fit1, xs) - pg))
  expect_lt(err1, 0.8 * err0)
  # and the latent means and variances at the training points
  expect_lt(mean(abs(fit1$engine$mean - gib$engine$mean)), 0.8 * mean(abs(fit0$engine$mean - gib$engine$mean)))
  expect_lt(mean(abs(fit1$engine$var - gib$engine$var)), 0.8 * mean(abs(fit0$engine$var - gib$engine$var)))
})

test_that("refine: bad values, minibatch sparse fits and likelihoods without the method are errors", {
  expect_error(augp_control(refine = -1), "refine")
  expect_error(augp_control(refine = 2.5), "refine")
  expect_error(augp_control(refine = NA), "refine")
  expect_error(augp_control(refine = "yes"), "refine")
  expect_identical(augp_control(refine = TRUE)$refine, 60L)
  expect_identical(augp_control(refine = FALSE)$refine, 0L)
  expect_identical(augp_control()$refine, "auto")
  dd <- cv_data()
  # minibatch (SVI) sparse fits of a likelihood that learns its parameters
  expect_error(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(learn_theta = TRUE), inducing = 10,
                        control = augp_quick(refine = 5, batch_size = 20)), "refine.*learns its parameters")
  expect_error(augp_fit(dd$x, dd$y, likelihood = stick_breaking(), control = augp_quick(refine = 5)),
               "refine.*derivatives")
  # Gibbs fits ignore it
  g <- short_gibbs(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), method = "gibbs",
                            control = augp_quick(iter = 40, chains = 1, refine = 5), seed = 1))
  expect_null(g$engine$refine)
})

test_that("refine on a binary fit raises the direct ELBO", {
  dd <- cv_data()
  yb <- factor(dd$y == "a")
  fit0 <- augp_fit(dd$x, yb, control = augp_quick(refine = FALSE), seed = 1)
  fit1 <- augp_fit(dd$x, yb, control = augp_quick(refine = 10), seed = 1)
  tr <- fit1$engine$refine$direct
  expect_true(all(diff(tr) >= 0))
  e0 <- fit0$engine
  expect_equal(tr[1], cv_ns$engine_direct_elbo(e0$lik, e0$mean, e0$var, e0$kl), tolerance = 1e-6)
  expect_gt(elbo(fit1), tr[1])
  expect_equal(elbo(fit1), cv_ns$engine_direct_elbo(fit1$engine$lik, fit1$engine$mean,
                                                    fit1$engine$var, fit1$engine$kl), tolerance = 1e-6)
  expect_length(fit1$engine$mean, nrow(dd$x))
  expect_equal(dim(predict(fit1, dd$x[1:3, ])), dim(predict(fit0, dd$x[1:3, ])))
})

test_that("sparse refine with the inducing points at the data is the exact refinement", {
  set.seed(42)
  n <- 45
  X <- matrix(stats::rnorm(n * 2), n)
  cls <- max.col(cbind(X[, 1], -X[, 1], X[, 2]) + matrix(stats::rnorm(n * 3, sd = 0.5), n))
  lik <- list(type = "logistic_softmax", q = 3L, Y = diag(3)[cls, ], bijective = FALSE,
              theta = c(1, 1, 1))
  k <- kernel_se(variance = 1.2, lengthscale = 0.9)
  ctl <- list(learn_hyper = FALSE, tol = 1e-13, maxit = 2000, threads = 2)
  mean0 <- c(0.1, -0.2, 0)
  ex <- cv_ns$augp_engine(X, kernel = k, method = "vi", lik = lik, control = ctl, mean0 = mean0)
  sp <- cv_ns$augp_sparse_engine(X, kernel = k, inducing = X, lik = lik, mean0 = mean0, seed = 1,
                                 control = c(ctl, list(jitter = ex$jitter / 1.2)))
  rctl <- cv_ns$as_augp_control(modifyList(ctl, list(refine = 8L, tol = 1e-9)))
  ex1 <- cv_ns$engine_refine(ex, rctl)
  sp1 <- cv_ns$engine_refine(sp, rctl)
  expect_gte(sp1$refine$rounds, 3L)
  expect_identical(sp1$refine$rounds, ex1$refine$rounds)
  expect_equal(sp1$refine$direct, ex1$refine$direct, tolerance = 1e-6)
  expect_equal(unname(sp1$mean), unname(ex1$mean), tolerance = 1e-5)
  expect_equal(unname(sp1$var), unname(ex1$var), tolerance = 1e-5)
  # the stored q(u) is the refined one: the marginals and predictions follow it
  pr <- cv_ns$sparse_marginals(X, sp1$mean0, sp1$lik, sp1$kernel, sp1$Z, sp1$jitter, sp1$state, rctl)
  expect_equal(pr$mean, sp1$mean)
  Xn <- matrix(stats::rnorm(16), 8)
  pe <- cv_ns$augp_engine_predict(ex1, Xn)
  ps <- cv_ns$augp_engine_predict.augp_sparse_engine(sp1, Xn)
  expect_equal(unname(ps$mean), unname(pe$mean), tolerance = 1e-5)
  expect_equal(unname(ps$var), unname(pe$var), tolerance = 1e-5)
})

test_that("sparse refine through augp_fit: the direct ELBO never falls, the same with 1 and 2 threads", {
  dd <- cv_data(n = 120, seed = 5)
  fit <- function(th, refine) {
    suppressWarnings(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), inducing = 15, seed = 1,
                              control = augp_control(hyper_maxit = 5, maxit = 50, threads = th,
                                                     refine = refine, block_size = 32)),
                     classes = "augp_convergence_warning")
  }
  f0 <- fit(1, FALSE)
  f1 <- fit(1, 15)
  f2 <- fit(2, 15)
  e0 <- f0$engine
  e1 <- f1$engine
  expect_s3_class(e1, "augp_sparse_engine")
  expect_equal(e1$kernel, e0$kernel)
  expect_equal(e1$Z, e0$Z)
  tr <- e1$refine$direct
  expect_gte(e1$refine$rounds, 1L)
  expect_length(tr, e1$refine$rounds + 1L)
  expect_true(all(diff(tr) >= 0))
  # the trace starts at the CAVI q(u)'s direct ELBO and elbo() reports its end
  # KL(q(u) || p(u)) of the whitened q(v) = N(Lam^-1 h, Lam^-1) against N(0, I)
  kl_of <- function(st) {
    sum(vapply(seq_along(st$Lam), function(j) {
      S <- solve(st$Lam[[j]])
      mv <- drop(S %*% st$h[[j]])
      0.5 * (sum(diag(S)) + sum(mv^2) - nrow(S) + as.numeric(determinant(st$Lam[[j]])$modulus))
    }, 0))
  }
  d0 <- cv_ns$engine_direct_elbo(e0$lik, e0$mean, e0$var, kl_of(e0$state))
  expect_equal(tr[1], d0, tolerance = 1e-8)
  expect_gt(tr[length(tr)], tr[1])
  expect_equal(elbo(f1), tr[length(tr)])
  expect_equal(elbo(f1), cv_ns$engine_direct_elbo(e1$lik, e1$mean, e1$var, kl_of(e1$state)),
               tolerance = 1e-8)
  # 15 rounds all gained: the print says the cap ended them
  expect_identical(e1$refine$rounds, 15L)
  expect_output(print(f1), "Direct ELBO of q\\(f\\) after 15 refinement rounds \\(the cap")
  expect_false(isTRUE(all.equal(predict(f1, dd$x[1:5, ]), predict(f0, dd$x[1:5, ]))))
  expect_identical(f2$engine$refine, e1$refine)
  expect_identical(f2$engine$state, e1$state)
  expect_identical(f2$engine$mean, e1$mean)
})

test_that("refine = \"auto\" refines where the augmented bound is loose, and only where it can", {
  dd <- cv_data()
  # logistic-softmax: the augmented bound lies well below the direct ELBO; auto refines
  # exactly as 60 explicit rounds do
  fa <- augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), kernel = cv_kernel(),
                 control = cv_ctl(), seed = 1)
  f60 <- augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), kernel = cv_kernel(),
                  control = cv_ctl(refine = 60), seed = 1)
  f0 <- augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), kernel = cv_kernel(),
                 control = cv_ctl(refine = FALSE), seed = 1)
  ea <- fa$engine
  e0 <- f0$engine
  gap0 <- (cv_ns$engine_direct_elbo(e0$lik, e0$mean, e0$var, e0$kl) - e0$elbo[length(e0$elbo)]) / 45
  expect_equal(ea$aug_gap, gap0, tolerance = 1e-8)
  expect_gt(ea$aug_gap, 0.02)
  expect_true(ea$refine$auto)
  expect_identical(ea$refine$rounds, f60$engine$refine$rounds)
  expect_identical(ea$mean, f60$engine$mean)
  expect_identical(elbo(fa), elbo(f60))
  # the ELBO plot shows both bounds: the augmented trace, then the refinement's direct one
  p <- plot(fa, type = "elbo")
  expect_s3_class(p, "ggplot")
  expect_identical(nrow(p$data), length(ea$elbo) + length(ea$refine$direct))
  expect_identical(p$data$elbo[p$data$bound == "direct (refinement)"], ea$refine$direct)
  expect_match(p$labels$subtitle, "refinement round")
  # print() names the direct bound, and the status it reports is the coordinate ascent's
  expect_output(print(fa), "Direct ELBO of q\\(f\\).*\\(coordinate ascent (converged|NOT converged)")
  expect_output(print(summary(fa)), "coordinate-ascent iteration")
  # a binary fit on 300 points: the Polya-Gamma bound is nearly tight; auto leaves q(f)
  set.seed(2)
  x <- matrix(rnorm(600), 300)
  yb <- factor(rbinom(300, 1, plogis(1.5 * sin(2 * x[, 1]) + x[, 2])))
  fb <- augp_fit(x, yb, control = augp_quick(), seed = 1)
  fb0 <- augp_fit(x, yb, control = augp_quick(refine = FALSE), seed = 1)
  expect_lte(fb$engine$aug_gap, 0.02)
  expect_null(fb$engine[["refine"]])
  expect_null(fb$engine[["elbo_direct"]])
  expect_identical(fb$engine$mean, fb0$engine$mean)
  expect_identical(elbo(fb), elbo(fb0))
  # where the refinement is not available, auto is silent and leaves the fit as it is
  # (an explicit number of rounds is an error there: the test above)
  fs <- augp_fit(dd$x, dd$y, likelihood = stick_breaking(), control = augp_quick(), seed = 1)
  expect_null(fs$engine[["refine"]])
  expect_null(fs$engine[["aug_gap"]])
  fm <- suppressWarnings(augp_fit(dd$x, dd$y, likelihood = logistic_softmax(), inducing = 10,
                                  control = augp_quick(batch_size = 20), seed = 1))
  expect_null(fm$engine[["refine"]])
})
