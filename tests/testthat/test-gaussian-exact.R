# The exact Gaussian regression search (R/gaussian_exact.R, src/gaussian_exact.cpp):
# the log marginal likelihood and its gradient against the formulas and finite
# differences, the posterior against the variational fit, the quasi-Newton search, ARD
# on data with an irrelevant input, and the nested-subset search against the full one.
ge_ns <- asNamespace("augmentedGP")

ge_data <- function(n = 60, seed = 11) {
  set.seed(seed)
  X <- cbind(stats::runif(n, -2, 2), stats::runif(n, -2, 2), stats::runif(n, -2, 2))
  y <- sin(1.5 * X[, 1]) + 0.5 * X[, 2] + stats::rnorm(n, sd = 0.15)
  list(X = X, y = y, n = n)
}

ge_model <- function(d, kernel, w = rep(1, d$n), mu0 = 0.1, jitter = 1e-6) {
  ge_ns$.gauss_exact_new(d$X, d$y, w, rep(mu0, d$n), jitter, ge_ns$kernel_flatten(kernel), 1L)
}

test_that("the exact log marginal likelihood and its gradient match the formula and finite differences", {
  d <- ge_data(30)
  w <- rep(c(1, 2, 3), 10)
  k <- kernel_se(1.3, c(0.8, 1.5, 2))
  m <- ge_model(d, k, w)
  par <- c(unname(ge_ns$kernel_get_params(k)), log(0.3))
  o <- ge_ns$.gauss_exact_eval(m, par, TRUE)
  # the t_i copies of row i: N(y_i | f_i, s2 / t_i) times a factor free of f
  K <- kernel_matrix(k, d$X) + diag(1e-6, 30)
  C <- K + diag(0.09 / w)
  r <- d$y - 0.1
  lml <- -0.5 * sum(r * solve(C, r)) - 0.5 * determinant(C)$modulus - 15 * log(2 * pi) -
    sum(0.5 * ((w - 1) * log(2 * pi * 0.09) + log(w)))
  expect_equal(o$value, as.numeric(lml), tolerance = 1e-10)
  fd <- vapply(seq_along(par), function(j) {
    e <- replace(numeric(length(par)), j, 1e-5)
    (ge_ns$.gauss_exact_eval(m, par + e, FALSE)$value - ge_ns$.gauss_exact_eval(m, par - e, FALSE)$value) / 2e-5
  }, 0)
  expect_equal(o$gradient, fd, tolerance = 1e-6)
  # the factor kept by a value-only evaluation serves the gradient and the posterior
  v1 <- ge_ns$.gauss_exact_eval(m, par + 0.1, FALSE)
  g1 <- ge_ns$.gauss_exact_eval(m, par + 0.1, TRUE)
  fresh <- ge_ns$.gauss_exact_eval(ge_model(d, k, w), par + 0.1, TRUE)
  expect_identical(g1, fresh)
  expect_equal(v1$value, fresh$value)
  ge_ns$.gauss_exact_eval(m, par, FALSE)
  expect_equal(ge_ns$.gauss_exact_posterior(m, par), ge_ns$.gauss_exact_posterior(ge_model(d, k, w), par))
  # an isotropic Matern kernel plus a linear one: every leaf's contraction
  k2 <- kernel_matern(2.5, 0.7, 1.1) + kernel_linear(0.2)
  m2 <- ge_model(d, k2, w)
  par2 <- c(unname(ge_ns$kernel_get_params(k2)), log(0.5))
  g2 <- ge_ns$.gauss_exact_eval(m2, par2, TRUE)$gradient
  fd2 <- vapply(seq_along(par2), function(j) {
    e <- replace(numeric(length(par2)), j, 1e-5)
    (ge_ns$.gauss_exact_eval(m2, par2 + e, FALSE)$value - ge_ns$.gauss_exact_eval(m2, par2 - e, FALSE)$value) / 2e-5
  }, 0)
  expect_equal(g2, fd2, tolerance = 1e-6)
})

test_that("the exact posterior equals the variational fit, with its ELBO, KL and leave-one-out density", {
  d <- ge_data(25)
  w <- rep(c(1, 2), length.out = 25)
  k <- kernel_se(1.1, c(0.9, 1.4, 3))
  m <- ge_model(d, k, w, jitter = 1e-6)
  par <- c(unname(ge_ns$kernel_get_params(k)), log(0.25))
  p <- ge_ns$.gauss_exact_posterior(m, par)
  fit <- ge_ns$augp_engine(d$X, kernel = k, method = "vi",
                           lik = list(type = "gaussian", q = 1L, y = d$y, trials = w, sigma = 0.25),
                           mean0 = 0.1, control = list(learn_hyper = FALSE, threads = 1, jitter = 1e-6))
  expect_equal(p$value, fit$elbo[length(fit$elbo)], tolerance = 1e-8)
  expect_equal(p$m, as.numeric(fit$mean), tolerance = 1e-8)
  expect_equal(p$v, as.numeric(fit$var), tolerance = 1e-8)
  expect_equal(p$alpha, as.numeric(fit$alpha), tolerance = 1e-8)
  expect_equal(p$kl, fit$kl, tolerance = 1e-8)
  # leave-one-out: the predictive law of y_i from the other rows, by direct refits
  C <- kernel_matrix(k, d$X) + diag(1e-6, 25) + diag(0.0625 / w)
  loo <- sum(vapply(seq_len(25), function(i) {
    mu <- 0.1 + C[i, -i] %*% solve(C[-i, -i], d$y[-i] - 0.1)
    s2 <- C[i, i] - C[i, -i] %*% solve(C[-i, -i], C[-i, i])
    stats::dnorm(d$y[i], mu, sqrt(s2), log = TRUE)
  }, 0))
  expect_equal(p$loo, loo, tolerance = 1e-8)
})

test_that("the threaded factorisation and inverse give the serial results", {
  set.seed(4)
  n <- 600
  X <- matrix(stats::rnorm(n * 2), n)
  y <- sin(X[, 1]) + stats::rnorm(n, sd = 0.1)
  k <- kernel_se(1, c(1, 2))
  par <- c(unname(ge_ns$kernel_get_params(k)), log(0.1))
  o1 <- ge_ns$.gauss_exact_eval(ge_ns$.gauss_exact_new(X, y, rep(1, n), rep(0, n), 1e-6, ge_ns$kernel_flatten(k), 1L), par, TRUE)
  o2 <- ge_ns$.gauss_exact_eval(ge_ns$.gauss_exact_new(X, y, rep(1, n), rep(0, n), 1e-6, ge_ns$kernel_flatten(k), 2L), par, TRUE)
  expect_equal(o2$value, o1$value, tolerance = 1e-10)
  expect_equal(o2$gradient, o1$gradient, tolerance = 1e-8)
})

test_that("the quasi-Newton search reaches the optimum of a quadratic, bounds respected", {
  ctl <- augp_control(hyper_tol = 1e-10, tol = 1e-12)
  A <- matrix(c(3, 1, 0, 1, 2, 0.5, 0, 0.5, 1), 3)
  b <- c(1, -2, 0.5)
  f <- function(x, grad = TRUE) {
    list(value = -0.5 * sum(x * (A %*% x)) + sum(b * x), gradient = if (grad) drop(b - A %*% x))
  }
  o <- ge_ns$hyper_bfgs(f, c(0, 0, 0), rep(-10, 3), rep(10, 3), ctl, maxit = 100)
  expect_equal(o$par, drop(solve(A, b)), tolerance = 1e-5)
  expect_true(o$converged)
  expect_true(all(diff(o$path) > 0))
  ob <- ge_ns$hyper_bfgs(f, c(0, 0, 0), c(-10, -0.5, -10), rep(10, 3), ctl, maxit = 100)
  expect_equal(ob$par[2], -0.5)
  # at the bound the other coordinates are optimal given it
  expect_equal(ob$par[c(1, 3)], drop(solve(A[c(1, 3), c(1, 3)], b[c(1, 3)] - A[c(1, 3), 2] * -0.5)),
               tolerance = 1e-5)
})

test_that("ARD finds the irrelevant input (its lengthscale goes large) and print() says so", {
  d <- ge_data(80, 5)
  df <- data.frame(x1 = d$X[, 1], x2 = d$X[, 2], x3 = d$X[, 3], y = d$y)
  fit <- augp(y ~ x1 + x2 + x3, df, likelihood = gaussian_noise(), kernel = kernel_se(),
              control = augp_control(threads = 1, ard = TRUE))
  ls <- coef(fit)[c("se.lengthscale.x1", "se.lengthscale.x2", "se.lengthscale.x3")]
  # x3 does not enter y: its lengthscale goes to its upper bound, twice its range
  expect_gt(ls[3], 5 * ls[1])
  expect_equal(unname(ls[3]), 2 * diff(range(df$x3)), tolerance = 1e-3)
  expect_true(fit$engine$ard$chosen)
  expect_output(print(fit), "one lengthscale per input \\(ARD")
  expect_output(print(summary(fit)), "ARD")
  # sigma near the truth
  expect_gt(sigma(fit), 0.08)
  expect_lt(sigma(fit), 0.3)
  iso <- augp(y ~ x1 + x2 + x3, df, likelihood = gaussian_noise(),
              control = augp_control(threads = 1, ard = FALSE))
  expect_length(coef(iso), 4L)
  expect_output(print(iso), "Search: kernel and sigma")
  expect_gt(elbo(fit), elbo(iso))
  # ard = "auto" chooses by the leave-one-out density on these data too
  auto <- augp(y ~ x1 + x2 + x3, df, likelihood = gaussian_noise(), control = augp_control(threads = 1))
  a <- auto$engine$ard
  expect_identical(a$chosen, a$loo_ard > a$loo_iso)
  expect_output(print(auto), "leave-one-out log predictive density")
  expect_error(augp_control(ard = "yes"), "`ard`")
})

test_that("a sum of kernels at their default lengthscales gets ARD in every leaf", {
  d <- ge_data(50, 9)
  df <- data.frame(x1 = d$X[, 1], x2 = d$X[, 2], x3 = d$X[, 3], y = d$y)
  fit <- augp(y ~ x1 + x2 + x3, df, likelihood = gaussian_noise(), kernel = kernel_se() + kernel_matern(),
              control = augp_control(threads = 1, ard = TRUE))
  r <- ge_ns$gaussian_param_roles(fit$engine$kernel)
  expect_equal(r$role, rep(c("variance", rep("lengthscale", 3)), 2))
  expect_equal(r$col, rep(c(NA, 1:3), 2))
  expect_equal(r$leaf, rep(1:2, each = 4))
  # every lengthscale within its bound: twice its input's range
  ls <- exp(ge_ns$engine_get_params(fit$engine$kernel))[!is.na(r$col)]
  expect_true(all(ls <= rep(2 * apply(fit$x, 2, function(v) diff(range(v))), 2) * (1 + 1e-8)))
})

test_that("the nested-subset search with a polish reaches the full search's optimum", {
  set.seed(8)
  n <- 820
  X <- matrix(stats::runif(n * 2, -2, 2), n)
  y <- sin(2 * X[, 1]) + 0.3 * X[, 2] + stats::rnorm(n, sd = 0.2)
  spec <- list(type = "gaussian", q = 1L, y = y, trials = rep(1, n), sigma = 0.5)
  k <- kernel_se(1, 1)
  ctl <- augp_control(threads = 2)
  # the full search: one level, run to convergence
  full <- ge_ns$gaussian_exact_search(X, spec, k, ctl, mean(y), TRUE, FALSE, FALSE, level_min = 1e6)
  expect_equal(full$levels, 820)
  # a subset level, then the default short polish: close to the optimum
  lev <- ge_ns$gaussian_exact_search(X, spec, k, ctl, mean(y), TRUE, FALSE, FALSE)
  expect_equal(lev$levels, c(410, 820))
  expect_lt(full$value - lev$value, 0.5)
  # polished to convergence: the same optimum
  ctl$hyper_polish <- 20L
  pol <- ge_ns$gaussian_exact_search(X, spec, k, ctl, mean(y), TRUE, FALSE, FALSE)
  expect_equal(pol$par, full$par, tolerance = 0.01)
  expect_lt(abs(full$value - pol$value), 1e-3)
  # the fit's trace: non-decreasing, ending at the log marginal likelihood of the fit
  fit <- augp_fit(X, y, likelihood = gaussian_noise(), control = ctl)
  e <- fit$engine$elbo
  expect_true(all(diff(e) >= 0))
  m <- ge_ns$.gauss_exact_new(fit$x, y, rep(1, n), rep(mean(y), n), fit$engine$jitter,
                              ge_ns$kernel_flatten(fit$engine$kernel), 1L)
  expect_equal(e[length(e)], ge_ns$.gauss_exact_eval(m, c(unname(ge_ns$kernel_get_params(fit$engine$kernel)),
                                                            log(sigma(fit))), FALSE)$value, tolerance = 1e-8)
})

test_that("fixed sigma, fixed kernel and Gibbs go through the exact search too", {
  d <- ge_data(40, 2)
  df <- data.frame(x1 = d$X[, 1], x2 = d$X[, 2], y = d$y)
  fs <- augp(y ~ x1 + x2, df, likelihood = gaussian_noise(sigma = 0.2), control = augp_control(threads = 1))
  expect_equal(sigma(fs), 0.2)
  expect_true(isTRUE(fs$engine$exact_gaussian))
  fk <- suppressMessages(augp(y ~ x1 + x2, df, likelihood = gaussian_noise(), kernel = kernel_se(1, 1),
             control = augp_control(threads = 1, learn_hyper = FALSE)))
  expect_equal(unname(coef(fk)[1]), 1)
  expect_identical(fk$engine$hyper_evals > 0, TRUE)
  expect_output(print(fk), "Search: sigma by the exact log marginal likelihood")
  h0 <- augp(y ~ x1 + x2, df, likelihood = gaussian_noise(),
             control = augp_control(threads = 1, hyper_maxit = 0))
  expect_equal(unname(coef(h0)[1]), mean((d$y - mean(d$y))^2))
  expect_gt(sigma(h0), 0.05)
  rs <- augp(y ~ x1 + x2, df, likelihood = gaussian_noise(), seed = 3,
             control = augp_control(threads = 1, restarts = 2))
  expect_length(rs$engine$restarts, 2L)
  expect_equal(elbo(rs), max(rs$engine$restarts))
  g <- suppressWarnings(augp(y ~ x1 + x2, df, likelihood = gaussian_noise(), method = "gibbs", seed = 1,
                             control = augp_control(threads = 1, iter = 200, chains = 1)))
  expect_equal(dim(g$engine$draws)[3], 40L)
  expect_true(isTRUE(g$engine$exact_gaussian))
})

test_that("only the Gaussian likelihood takes the exact marginal-likelihood search", {
  lem <- augmentedGP:::lik_exact_marginal
  expect_true(lem(gaussian_noise()))
  for (l in list(student_t(), laplace(), heteroscedastic_gaussian(), bernoulli_logit(),
                 negative_binomial())) {
    expect_false(lem(l))
  }
  set.seed(3)
  x <- matrix(stats::runif(40), ncol = 1)
  y <- sin(4 * x[, 1]) + stats::rnorm(40, sd = 0.2)
  ctl <- augp_control(threads = 1)
  expect_true(isTRUE(augp_fit(x, y, likelihood = gaussian_noise(), control = ctl,
                              seed = 1)$engine$exact_gaussian))
  expect_false(isTRUE(augp_fit(x, y, likelihood = student_t(), control = ctl,
                               seed = 1)$engine$exact_gaussian))
})

test_that("an exact Gaussian fit reports its ELBO as the exact log marginal likelihood", {
  set.seed(3)
  n <- 40
  d <- data.frame(a = stats::runif(n), b = stats::runif(n))
  d$y <- sin(4 * d$a) + stats::rnorm(n, sd = 0.2)
  fit <- augp(y ~ a + b, d, control = augp_control(threads = 1))
  # the bound is tight at the exact posterior: log N(y; mean0, K + sigma^2 I)
  K <- kernel_matrix(fit$kernel, fit$x) + diag(fit$engine$jitter, n)
  C <- K + diag(fit$likelihood$sigma^2, n)
  r <- d$y - fit$mean0
  lml <- -0.5 * sum(r * solve(C, r)) - 0.5 * as.numeric(determinant(C)$modulus) - n / 2 * log(2 * pi)
  expect_equal(elbo(fit), lml, tolerance = 1e-8)
  out <- paste(utils::capture.output(print(fit)), collapse = "\n")
  expect_match(out, "method: exact posterior (conjugate Gaussian)", fixed = TRUE)
  expect_match(out, "sigma [0-9.]+, learned by the exact log marginal likelihood")
  expect_match(out, "Log marginal likelihood (exact): ", fixed = TRUE)
  expect_false(grepl("ELBO", out))
  expect_output(print(summary(fit)), "Log marginal likelihood \\(exact\\): .* after")
  # a non-conjugate likelihood keeps the variational names
  st <- augp(y ~ a + b, d, likelihood = student_t(nu = 4), control = augp_control(threads = 1))
  expect_output(print(st), "method: variational inference.*ELBO: ")
})
