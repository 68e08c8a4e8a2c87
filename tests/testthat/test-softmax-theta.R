# Learning the logistic-softmax class weights theta by the ELBO (R/lik_logistic_softmax.R).

smt_ns <- asNamespace("augmentedGP")

smt_lik <- function(Y, bij, theta) {
  list(type = "logistic_softmax", q = if (bij) ncol(Y) - 1 else ncol(Y), Y = Y,
       bijective = bij, theta = theta)
}

# y from the logistic-softmax with weights theta and latents from a smooth GP.
smt_sim <- function(n, theta, seed) {
  set.seed(seed)
  x <- sort(stats::runif(n, -3, 3))
  Kx <- smt_ns$kernel_matrix(kernel_se(variance = 1, lengthscale = 1), matrix(x)) + diag(1e-6, n)
  F <- t(chol(Kx)) %*% matrix(stats::rnorm(n * length(theta)), n, length(theta))
  P <- stats::plogis(F) * rep(theta, each = n)
  P <- P / rowSums(P)
  lev <- letters[seq_along(theta)]
  y <- factor(apply(P, 1, function(p) sample(lev, 1, prob = p)), levels = lev)
  data.frame(x = x, y = y)
}

test_that("the theta step's gain equals the package's ELBO difference; it reaches the stationary point", {
  set.seed(1)
  n <- 30
  for (bij in c(FALSE, TRUE)) {
    q <- if (bij) 2 else 3
    Y <- diag(3)[sample(3, n, TRUE), ] * sample(1:2, n, TRUE)
    Y[3, ] <- 0  # a row without information
    m <- matrix(stats::rnorm(n * q, sd = 2), n, q)
    v <- matrix(stats::runif(n * q, 0.1, 3), n, q)
    elbo <- function(th) smt_ns$.gp_lik_eval_cpp(smt_lik(Y, bij, th), m, v, m)$elbo_local
    for (k in 1:3) {
      th0 <- exp(stats::rnorm(3))
      st <- smt_ns$.lik_learn_params_cpp(smt_lik(Y, bij, th0), m, v)
      ts <- as.numeric(st$params$theta)
      # the gain is the ELBO difference, and the step never lowers the ELBO
      expect_equal(st$gain, elbo(ts) - elbo(th0), tolerance = 1e-10)
      expect_gte(st$gain, 0)
      # geometric mean 1; the ELBO is invariant to the scale of theta
      expect_equal(mean(log(ts)), 0, tolerance = 1e-12)
      expect_equal(elbo(3.7 * ts), elbo(ts), tolerance = 1e-12)
      # a stationary point: the gradient in log theta (central differences) vanishes
      h <- 1e-5
      fd <- sapply(1:3, function(j) {
        e <- replace(numeric(3), j, h)
        (elbo(ts * exp(e)) - elbo(ts * exp(-e))) / (2 * h)
      })
      expect_lt(max(abs(fd)), 1e-5)
      # and a maximum: every random direction lowers the ELBO
      for (d in 1:5) expect_lt(elbo(ts * exp(0.05 * stats::rnorm(3))), elbo(ts) + 1e-12)
    }
  }
})

test_that("learning theta raises the ELBO, the trace never decreases and the ratio moves toward truth", {
  # the data come from latents of prior mean 0, the model fitted here; no refinement, so
  # that the engine's q(f) is the coordinate-ascent state engine_learn_lik_params() takes
  d <- smt_sim(300, c(1, 1, 4), seed = 1)
  k <- kernel_se(variance = 1, lengthscale = 1)
  ctl <- augp_control(threads = 1, learn_hyper = FALSE, refine = FALSE)
  f1 <- augp(y ~ x, data = d, kernel = k, likelihood = logistic_softmax(prior_mean = 0), control = ctl)
  f2 <- augp(y ~ x, data = d, kernel = k,
             likelihood = logistic_softmax(learn_theta = TRUE, prior_mean = 0), control = ctl)
  e1 <- f1$engine$elbo
  e2 <- f2$engine$elbo
  expect_gt(e2[length(e2)], e1[length(e1)] + 1)
  expect_true(all(diff(e2) >= -1e-8 * abs(e2[-1])))
  # the first fit (theta = 1) is the start of the learned fit's trace
  expect_equal(e2[seq_along(e1)], e1)
  expect_true(isTRUE(f2$engine$param_converged))
  th <- f2$theta
  expect_named(th, c("a", "b", "c"))
  expect_equal(mean(log(th)), 0, tolerance = 1e-10)
  expect_identical(f2$likelihood$theta, th)
  # ratio of the inflated class to the others: truth 4, start 1; learned within a factor 2 of 4
  r <- unname(th[3] / sqrt(th[1] * th[2]))
  expect_gt(r, 2)
  expect_lt(r, 8)
  # predictions use the learned weights
  new <- data.frame(x = c(-2, 0, 2))
  P <- predict(f2, newdata = new, type = "response")
  expect_equal(dim(P), c(3L, 3L))
  expect_false(isTRUE(all.equal(P, predict(f1, newdata = new, type = "response"))))
  expect_output(print(f2), "Class weights theta \\(learned")
  expect_output(print(summary(f2)), "learned by the ELBO in [0-9]+ round")
  expect_output(print(f1), "Class weights theta \\(fixed")
  # one round from the theta = 1 fit: not converged, the ELBO still rose, trace monotone
  one <- smt_ns$engine_learn_lik_params(f1$engine, f1$x, f1$engine$lik, f1$mean0, max_rounds = 1L)
  expect_false(one$param_converged)
  expect_equal(one$param_rounds, 1L)
  expect_gt(one$elbo[length(one$elbo)], e1[length(e1)])
  expect_true(all(diff(one$elbo) >= -1e-8 * abs(one$elbo[-1])))
  # bijective: also monotone, and the learned weights beat theta = 1
  f3 <- augp(y ~ x, data = d, kernel = k,
             likelihood = logistic_softmax(bijective = TRUE, learn_theta = TRUE), control = ctl)
  e3 <- f3$engine$elbo
  expect_true(all(diff(e3) >= -1e-8 * abs(e3[-1])))
  f4 <- augp(y ~ x, data = d, kernel = k, likelihood = logistic_softmax(bijective = TRUE),
             control = ctl)
  expect_gt(e3[length(e3)], f4$engine$elbo[length(f4$engine$elbo)])
})

test_that("Gibbs uses the VI-learned theta, fixed", {
  d <- smt_sim(80, c(1, 1, 4), seed = 2)
  k <- kernel_se(variance = 1, lengthscale = 1)
  lk <- logistic_softmax(learn_theta = TRUE)
  v <- augp(y ~ x, data = d, kernel = k, likelihood = lk,
            control = augp_control(threads = 1, learn_hyper = FALSE))
  g <- suppressWarnings(augp(y ~ x, data = d, kernel = k, likelihood = lk, method = "gibbs",
                             seed = 3, control = augp_control(threads = 1, learn_hyper = FALSE,
                                                              iter = 40, chains = 1)),
                        classes = "augp_convergence_warning")
  expect_equal(g$theta, v$theta)
  expect_equal(g$engine$lik$theta, unname(v$theta))
  expect_equal(dim(predict(g, newdata = data.frame(x = 0), type = "response")), c(1L, 3L))
})

test_that("bad input for learn_theta is an error naming it", {
  expect_error(logistic_softmax(learn_theta = "yes"), "learn_theta")
  expect_error(logistic_softmax(learn_theta = NA), "learn_theta")
  expect_error(logistic_softmax(learn_theta = c(TRUE, FALSE)), "learn_theta")
  expect_error(logistic_softmax(theta = "learn"), "learn_theta = TRUE")
  # the DESIGN contract: the two-argument form keeps working
  expect_null(logistic_softmax(bijective = FALSE, theta = NULL)$theta)
  expect_false(logistic_softmax(bijective = TRUE, theta = c(1, 2))$learn_theta)
})

test_that("sparse fits learn theta as exact ones do (Z = X, fixed kernel)", {
  d <- smt_sim(60, c(1, 1, 4), seed = 4)
  k <- kernel_se(variance = 1, lengthscale = 1)
  lk <- logistic_softmax(learn_theta = TRUE)
  ctl <- augp_control(threads = 1, learn_hyper = FALSE, learn_inducing = FALSE, maxit = 2000,
                      tol = 1e-10)
  ex <- augp(y ~ x, data = d, kernel = k, likelihood = lk, control = ctl)
  sp <- augp(y ~ x, data = d, kernel = k, likelihood = lk, inducing = matrix(d$x), control = ctl)
  expect_true(inherits(sp$engine, "augp_sparse_engine"))
  expect_equal(sp$theta, ex$theta, tolerance = 1e-3)
  expect_gt(unname(sp$theta[3] / sp$theta[1]), 1.5)
})

test_that("the latents' prior mean: defaults, a user value, bad values", {
  expect_null(logistic_softmax()$prior_mean)
  expect_identical(logistic_softmax(prior_mean = -3L)$prior_mean, -3)
  for (bad in list("a", NA_real_, Inf, c(-1, -2), numeric(0))) {
    expect_error(logistic_softmax(prior_mean = bad), "`prior_mean` must be NULL or a single finite number")
  }
  d <- smt_sim(40, c(1, 1, 1), seed = 2)
  k <- kernel_se(variance = 1, lengthscale = 1)
  ctl <- augp_control(threads = 1, learn_hyper = FALSE, refine = FALSE, maxit = 3000)
  far <- data.frame(x = 1e3)  # where the posterior is the prior
  for (case in list(list(lik = logistic_softmax(), mu = -6),
                    list(lik = logistic_softmax(bijective = TRUE), mu = 0),
                    list(lik = logistic_softmax(prior_mean = -2.5), mu = -2.5))) {
    f <- augp(y ~ x, data = d, kernel = k, likelihood = case$lik, control = ctl)
    expect_identical(f$mean0, case$mu)
    expect_equal(unname(drop(predict(f, newdata = far, type = "link"))),
                 rep(case$mu, f$engine$lik$q), tolerance = 1e-8)
    # equal weights and a common prior mean: the prior predictive is uniform over the classes
    if (!isTRUE(case$lik$bijective)) {
      expect_equal(unname(drop(predict(f, newdata = far, type = "response"))), rep(1 / 3, 3),
                   tolerance = 0.02)
    }
  }
})
