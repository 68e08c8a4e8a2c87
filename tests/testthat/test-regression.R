# GP regression: the gaussian_noise() and student_t() likelihoods against the exact GP
# formulas, their augmentation, robustness, input checks and the front end.
rg_ns <- asNamespace("augmentedGP")

rg_data <- function(n = 25, seed = 3) {
  set.seed(seed)
  x <- sort(stats::runif(n, 0, 3))
  list(X = matrix(x), x = x, y = sin(2 * x) + stats::rnorm(n, sd = 0.3))
}

rg_spec <- function(y, sigma, type = "gaussian", ...) {
  list(type = type, q = 1L, y = y, trials = rep(1, length(y)), sigma = sigma, ...)
}

# log N(y | mean0, K + s2 I) and the exact posterior moments of f at the inputs
rg_exact <- function(K, y, mean0, s2) {
  n <- length(y)
  C <- K + diag(s2, n)
  R <- chol(C)
  a <- backsolve(R, forwardsolve(t(R), y - mean0))
  list(lml = -0.5 * sum((y - mean0) * a) - sum(log(diag(R))) - 0.5 * n * log(2 * pi),
       mean = mean0 + drop(K %*% a), var = diag(K - K %*% solve(C, K)))
}

test_that("the Gaussian CAVI fit is the exact GP posterior and its ELBO the log marginal likelihood", {
  d <- rg_data()
  k <- kernel_se(1.2, 0.8)
  fit <- rg_ns$augp_engine(d$X, kernel = k, method = "vi", lik = rg_spec(d$y, 0.4),
                           mean0 = 0.1, control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE))
  K <- kernel_matrix(k, d$X) + diag(fit$jitter, length(d$y))
  ex <- rg_exact(K, d$y, 0.1, 0.16)
  expect_equal(fit$elbo[length(fit$elbo)], ex$lml, tolerance = 1e-6)
  expect_equal(as.numeric(fit$mean), ex$mean, tolerance = 1e-6)
  expect_equal(as.numeric(fit$var), ex$var, tolerance = 1e-6)
})

test_that("Gibbs for the Gaussian likelihood agrees with the exact posterior", {
  d <- rg_data(15)
  k <- kernel_se(1.2, 0.8)
  g <- rg_ns$augp_engine(d$X, kernel = k, method = "gibbs", lik = rg_spec(d$y, 0.4), seed = 2,
                         control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                        iter = 2000, warmup = 100, chains = 1))
  K <- kernel_matrix(k, d$X) + diag(g$jitter, 15)
  ex <- rg_exact(K, d$y, 0, 0.16)
  S <- length(g$draws) / 15
  F <- matrix(g$draws, S, 15)
  expect_true(all(abs(colMeans(F) - ex$mean) <= 5 * sqrt(ex$var / S) + 1e-3))
  expect_equal(apply(F, 2, stats::var), ex$var, tolerance = 0.15)
})

test_that("Student-t with a huge nu gives the Gaussian fit", {
  d <- rg_data()
  k <- kernel_se(1.2, 0.8)
  ctl <- list(learn_hyper = FALSE, threads = 1, verbose = FALSE, tol = 1e-12, maxit = 500)
  ga <- rg_ns$augp_engine(d$X, kernel = k, method = "vi", lik = rg_spec(d$y, 0.4), control = ctl)
  st <- rg_ns$augp_engine(d$X, kernel = k, method = "vi", control = ctl,
                          lik = rg_spec(d$y, 0.4, "student_t", nu = 1e6))
  expect_equal(st$elbo[length(st$elbo)], ga$elbo[length(ga$elbo)], tolerance = 1e-3)
  expect_equal(st$mean, ga$mean, tolerance = 1e-3)
  expect_equal(st$var, ga$var, tolerance = 1e-3)
})

test_that("the Student-t ELBO never decreases over CAVI iterations, parameters learned or not", {
  d <- rg_data(30, 5)
  y <- d$y
  y[c(4, 20)] <- y[c(4, 20)] + c(4, -5)
  st <- rg_ns$augp_engine(d$X, kernel = kernel_se(1, 0.7), method = "vi",
                          lik = rg_spec(y, 0.3, "student_t", nu = 3),
                          control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                         tol = 1e-12, maxit = 200))
  expect_gt(length(st$elbo), 3)
  expect_true(all(diff(st$elbo) >= -1e-8 * abs(st$elbo[-1])))
  fit <- augp_fit(d$x, y, likelihood = student_t(), control = augp_control(threads = 1))
  e <- fit$engine$elbo
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  expect_true(fit$likelihood$nu > 0.2 && fit$likelihood$nu < 1000)
})

test_that("the Student-t Gibbs conditional of w has mean shape / rate", {
  y <- c(0.5, -1, 3)
  f <- c(0, 0.2, -0.5)
  lik <- rg_spec(y, 0.7, "student_t", nu = 3)
  S <- 4000
  om <- vapply(seq_len(S), function(s) as.numeric(rg_ns$.gp_lik_sample_cpp(lik, matrix(f), c(1, s))$omega),
               numeric(3))
  w <- om * 0.49  # omega = w / sigma^2
  target <- ((3 + 1) / 2) / ((3 + (y - f)^2 / 0.49) / 2)
  expect_true(all(abs(rowMeans(w) - target) <= 5 * apply(w, 1, stats::sd) / sqrt(S)))
  # and the kappa of a draw is omega * y
  d1 <- rg_ns$.gp_lik_sample_cpp(lik, matrix(f), c(1, 1))
  expect_equal(as.numeric(d1$kappa), as.numeric(d1$omega) * y)
})

test_that("the learned sigma of the Gaussian is the closed form given q(f)", {
  d <- rg_data()
  m <- matrix(d$y * 0.8)
  v <- matrix(0.05, length(d$y))
  step <- rg_ns$.lik_learn_params_cpp(rg_spec(d$y, 2), m, v)
  expect_equal(step$params$sigma, sqrt(mean((d$y - m)^2 + 0.05)))
  expect_gt(step$gain, 0)
})

test_that("an outlier moves the Student-t posterior mean less than the Gaussian one", {
  d <- rg_data(30, 7)
  y <- d$y
  y[15] <- y[15] + 6
  ctl <- augp_control(threads = 1)
  ga <- augp_fit(d$x, y, likelihood = gaussian_noise(), control = ctl)
  st <- augp_fit(d$x, y, likelihood = student_t(nu = 3), control = ctl)
  truth <- sin(2 * d$x[15])
  expect_lt(abs(fitted(st)[15] - truth), abs(fitted(ga)[15] - truth))
})

test_that("bad regression input is rejected, naming the argument", {
  d <- rg_data(10)
  expect_error(augp_fit(d$x, replace(d$y, 2, Inf), likelihood = gaussian_noise()), "`y`")
  expect_error(augp_fit(d$x, replace(d$y, 2, NA), likelihood = gaussian_noise()), "`y`")
  expect_error(augp_fit(d$x, rep(2.5, 10), likelihood = gaussian_noise()), "`y`.*constant")
  expect_error(augp_fit(d$x, factor(rep(c("a", "b"), 5)), likelihood = gaussian_noise()), "`y`.*numeric")
  expect_error(student_t(nu = 0), "`nu`")
  expect_error(student_t(nu = -1), "`nu`")
  expect_error(gaussian_noise(sigma = 0), "`sigma`")
  expect_error(rg_ns$.lik_response_mean_cpp(rg_spec(1, 1, "student_t", nu = -2), matrix(0)), "nu")
})

test_that("augp() picks gaussian_noise() for a numeric response; print, summary, sigma, residuals", {
  d <- rg_data(25)
  df <- data.frame(x = d$x, y = d$y)
  fit <- augp(y ~ x, df, control = augp_control(threads = 1))
  expect_s3_class(fit$likelihood, "augp_gaussian")
  expect_equal(fit$mean0, mean(d$y))
  expect_output(print(fit), "GP regression")
  expect_output(print(fit), "sigma")
  s <- summary(fit)
  expect_output(print(s), "RMSE")
  expect_equal(s$rmse, sqrt(mean((d$y - fitted(fit))^2)))
  expect_equal(sigma(fit), fit$likelihood$sigma)
  expect_gt(sigma(fit), 0.1)
  expect_lt(sigma(fit), 0.6)
  expect_equal(unname(residuals(fit, type = "response")), d$y - unname(fitted(fit)))
  expect_equal(unname(residuals(fit, type = "pearson")), (d$y - unname(fitted(fit))) / sigma(fit))
  expect_equal(deviance(fit), sum((d$y - fitted(fit))^2))
  expect_error(predict(fit, type = "class"), "continuous")
})

test_that("predict() gives the mean, the credible interval of f and the prediction interval", {
  d <- rg_data(25)
  df <- data.frame(x = d$x, y = d$y)
  # (conditional on the learned hyperparameters: the intervals are exact normal quantiles)
  fit <- augp(y ~ x, df, control = augp_control(threads = 1, integrate_hyper = FALSE))
  nd <- data.frame(x = c(0.5, 1.5, 4))
  mu <- predict(fit, nd)
  lk <- predict(fit, nd, type = "link", se.fit = TRUE)
  expect_equal(unname(mu), lk$fit)
  cr <- predict(fit, nd, interval = "credible", level = 0.9)
  expect_equal(cr$upr - cr$fit, stats::qnorm(0.95) * lk$se.fit, tolerance = 1e-8)
  pr <- predict(fit, nd, interval = "prediction", level = 0.9)
  expect_equal(pr$upr - pr$fit, stats::qnorm(0.95) * sqrt(lk$se.fit^2 + sigma(fit)^2),
               tolerance = 1e-8)
  expect_error(predict(fit, nd, type = "link", interval = "prediction"), "type")
  # Student-t: Monte Carlo prediction intervals, wider than the credible ones, reproducible
  st <- augp(y ~ x, df, likelihood = student_t(nu = 4), control = augp_control(threads = 1))
  a <- predict(st, nd, interval = "prediction")
  expect_identical(a, predict(st, nd, interval = "prediction"))
  b <- predict(st, nd, interval = "credible")
  expect_true(all(a$lwr < b$lwr & a$upr > b$upr))
  # Gibbs fits: from the posterior draws
  gb <- augp(y ~ x, df, method = "gibbs", control = augp_control(threads = 1, iter = 300, warmup = 100))
  pg <- predict(gb, nd, interval = "prediction", level = 0.9)
  expect_equal(pg$upr - pg$lwr, 2 * stats::qnorm(0.95) * sqrt(lk$se.fit^2 + sigma(gb)^2),
               tolerance = 0.3)
})

test_that("simulate() and posterior_predict() give numeric responses", {
  d <- rg_data(20)
  fit <- augp(y ~ x, data.frame(x = d$x, y = d$y), control = augp_control(threads = 1))
  sims <- simulate(fit, nsim = 400, seed = 1)
  expect_equal(dim(sims), c(20L, 400L))
  expect_true(is.numeric(sims[[1]]))
  expect_equal(rowMeans(sims), unname(fitted(fit)), tolerance = 0.1)
  expect_equal(mean(apply(sims, 1, stats::sd)), sqrt(mean(fit$engine$var) + sigma(fit)^2),
               tolerance = 0.1)
  pp <- posterior_predict(fit, ndraws = 50)
  expect_equal(dim(pp), c(50L, 20L))
  expect_false(all(pp == round(pp)))
})

test_that("the 1-D predictive plot of a regression fit shows the mean, both bands and the data", {
  d <- rg_data(20)
  fit <- augp(y ~ x, data.frame(x = d$x, y = d$y), control = augp_control(threads = 1))
  p <- ggplot2::autoplot(fit, type = "predictive")
  expect_s3_class(p, "ggplot")
  b <- ggplot2::ggplot_build(p)
  expect_length(b$data, 4)
  expect_equal(nrow(b$data[[3]]), 20L)  # the data points
  expect_true(all(b$data[[1]]$ymin <= b$data[[2]]$ymin + 1e-12))  # prediction band wider
})

test_that("sparse (inducing) Gaussian regression runs with a fixed or a learned sigma", {
  d <- rg_data(60)
  df <- data.frame(x = d$x, y = d$y)
  fit <- augp(y ~ x, df, likelihood = gaussian_noise(sigma = 0.3), inducing = 20,
              control = augp_control(threads = 1))
  expect_lt(sqrt(mean((fitted(fit) - sin(2 * d$x))^2)), 0.25)
  fl <- augp(y ~ x, df, likelihood = gaussian_noise(), inducing = 20,
             control = augp_control(threads = 1))
  expect_true(inherits(fl$engine, "augp_sparse_engine"))
  expect_gt(sigma(fl), 0.1)
  expect_lt(sigma(fl), 0.5)
})

test_that("stats family objects select the augmented likelihoods; gaussian() is not masked", {
  set.seed(3)
  x <- seq(0, 1, length.out = 25)
  y <- sin(5 * x) + rnorm(25, sd = 0.2)
  f1 <- augp_fit(x, y, likelihood = stats::gaussian(), control = augp_control(threads = 1))
  f2 <- augp_fit(x, y, likelihood = gaussian_noise(), control = augp_control(threads = 1))
  expect_s3_class(f1$likelihood, "augp_gaussian")
  expect_equal(fitted(f1), fitted(f2))
  yb <- factor(x + rnorm(25, sd = 0.3) > 0.5)
  fb <- augp_fit(x, yb, likelihood = stats::binomial(), control = augp_control(threads = 1))
  expect_s3_class(fb$likelihood, "augp_bernoulli")
  expect_error(augp_fit(x, y, likelihood = stats::poisson()), "`likelihood`")
  expect_error(augp_fit(x, yb, likelihood = stats::binomial(link = "probit")), "probit")
  expect_false("gaussian" %in% getNamespaceExports("augmentedGP"))
})

test_that("a default kernel variance is one squared latent scale: var(y) for regression, 1 otherwise", {
  set.seed(8)
  x <- seq(0, 1, length.out = 30)
  y <- 50 * sin(6 * x) + rnorm(30, sd = 10)
  ctl <- augp_control(threads = 1, learn_hyper = FALSE)
  s2 <- sum((y - mean(y))^2) / length(y)
  f_auto <- augp_fit(x, y, likelihood = gaussian_noise(sigma = 10), control = ctl)
  # (the default kernel of gaussian_noise() is kernel_matern(nu = 2.5))
  f_var <- augp_fit(x, y, likelihood = gaussian_noise(sigma = 10),
                    kernel = kernel_matern(nu = 2.5, variance = s2), control = ctl)
  expect_equal(coef(f_auto), coef(f_var))
  expect_equal(elbo(f_auto), elbo(f_var))
  expect_match(format(kernel_se()), "variance = auto")
  yb <- factor(y > 0)
  b_auto <- augp_fit(x, yb, control = ctl)
  b_one <- augp_fit(x, yb, kernel = kernel_se(variance = 1), control = ctl)
  expect_equal(elbo(b_auto), elbo(b_one))
})

test_that("regression fits do not depend on the units of the response", {
  set.seed(8)
  x <- runif(30)
  e <- rnorm(30)
  one <- function(s, lik, ...) {
    d <- data.frame(x = x, y = s * (sin(5 * x) + 0.1 * e))
    f <- augp(y ~ x, d, likelihood = lik, seed = 1, control = augp_control(threads = 1, ...))
    c(fitted = unname(fitted(f)) / s, se = predict(f, d[1:5, , drop = FALSE], se.fit = TRUE)$se.fit / s)
  }
  for (lik in list(gaussian_noise(), student_t(nu = 4), laplace())) {
    ref <- one(1, lik)
    for (s in c(1e-5, 1e4)) expect_equal(one(s, lik), ref, tolerance = 1e-4, info = paste(lik$name, s))
  }
  # without the averaging over hyperparameters too (an absolute jitter would be as large
  # as the noise of a response on the scale of 1e-5, and the fit would interpolate it)
  expect_equal(one(1e-5, gaussian_noise(), integrate_hyper = FALSE),
               one(1, gaussian_noise(), integrate_hyper = FALSE), tolerance = 1e-4)
})
