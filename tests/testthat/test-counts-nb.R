# The negative_binomial() likelihood: its Polya-Gamma Gibbs step against an exact
# reference posterior, CAVI's ELBO, the learned dispersion, the Poisson limit, offsets,
# input checks and the front end. (The shared contract checks are in
# test-likelihood-conformance.R.)
nb_ns <- asNamespace("augmentedGP")

nb_spec <- function(y, r, trials = rep(1, length(y)), ...) {
  list(type = "negative_binomial", q = 1L, y = y, trials = trials, r = r, ...)
}

nb_data <- function(n = 300, r = 3, seed = 11) {
  set.seed(seed)
  x <- sort(stats::runif(n, 0, 1))
  mu <- exp(1 + sin(6 * x))
  list(x = x, X = matrix(x), mu = mu, y = stats::rnbinom(n, mu = mu, size = r))
}

test_that("loglik_obs is the negative-binomial pmf with mean exp(f), weighted by the trials", {
  y <- c(0, 3, 12, 1, 40)
  f <- c(-0.5, 1, 2.2, 0, 3)
  tr <- c(1, 2, 1, 3, 1)
  ll <- nb_ns$.lik_loglik_obs_cpp(nb_spec(y, 2.5, tr), array(f, c(1, 5, 1)))
  expect_equal(as.numeric(ll), tr * stats::dnbinom(y, size = 2.5, mu = exp(f), log = TRUE),
               tolerance = 1e-12)
  expect_equal(as.numeric(nb_ns$.lik_response_mean_cpp(nb_spec(y, 2.5), matrix(f))), exp(f))
})

test_that("as r grows the likelihood tends to Poisson(exp(f))", {
  y <- c(0, 1, 4, 9, 25)
  f <- log(c(0.3, 1.2, 5, 7, 20))
  err <- vapply(c(1e2, 1e4, 1e6), function(r) {
    ll <- nb_ns$.lik_loglik_obs_cpp(nb_spec(y, r), array(f, c(1, 5, 1)))
    max(abs(as.numeric(ll) - stats::dpois(y, exp(f), log = TRUE)))
  }, 0)
  expect_lt(err[3], 1e-4)
  expect_true(all(diff(err) < 0))
})

test_that("the Gibbs draw of omega is PG(t (y + r), f - log r), and kappa = t (y - r) / 2 + omega log r", {
  y <- c(2, 0, 30)
  f <- c(0.5, -1, 3)
  r <- 1.7
  tr <- c(1, 2, 1)
  lik <- nb_spec(y, r, tr)
  S <- 4000
  d <- lapply(seq_len(S), function(s) nb_ns$.gp_lik_sample_cpp(lik, matrix(f), c(5, s)))
  om <- vapply(d, function(e) as.numeric(e$omega), numeric(3))
  ka <- vapply(d, function(e) as.numeric(e$kappa), numeric(3))
  expect_equal(ka, tr * (y - r) / 2 + om * log(r), tolerance = 1e-12)
  b <- tr * (y + r)
  cc <- f - log(r)
  # PG(b, c) mean b tanh(c / 2) / (2 c) and variance b (sinh c - c) / (4 c^3 cosh^2(c / 2))
  m_ex <- b * tanh(cc / 2) / (2 * cc)
  v_ex <- b * (sinh(cc) - cc) / (4 * cc^3 * cosh(cc / 2)^2)
  expect_true(all(abs(rowMeans(om) - m_ex) <= 4 * sqrt(v_ex / S)))
  expect_equal(apply(om, 1, stats::var), v_ex, tolerance = 0.1)
  z <- nb_ns$.gp_lik_sample_cpp(nb_spec(y, r, c(0, 1, 1)), matrix(f), c(1, 2))
  expect_equal(z$omega[1], 0)
})

test_that("Gibbs for the negative binomial agrees with the exact posterior (quadrature, n = 2)", {
  X <- matrix(c(0, 0.6))
  y <- c(7, 1)
  r <- 2
  k <- kernel_se(1.2, 0.8)
  g <- gibbs_two_points(X, k, nb_spec(y, r), seed = 9, warmup = 200)
  # the exact posterior with the likelihood prod NB(y_i | exp(f_i), r)
  ex <- grid_posterior_two_points(g$K, function(G) {
    stats::dnbinom(y[1], size = r, mu = exp(G[, 1]), log = TRUE) +
      stats::dnbinom(y[2], size = r, mu = exp(G[, 2]), log = TRUE)
  }, c(-4.5, 5))
  expect_draws_match_posterior(g$F, ex, band = 8)
  # the prior alone would put the means at 0: the data move them
  expect_gt(ex$mu[1], 1)
})

test_that("the CAVI ELBO never decreases, with r fixed and with r learned", {
  d <- nb_data(80, 3, 2)
  fit <- nb_ns$augp_engine(d$X, kernel = kernel_se(1, 0.2), method = "vi", lik = nb_spec(d$y, 3),
                           mean0 = log(mean(d$y)),
                           control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                          tol = 1e-12, maxit = 300))
  expect_gt(length(fit$elbo), 3)
  expect_true(all(diff(fit$elbo) >= -1e-8 * abs(fit$elbo[-1])))
  ff <- augp_fit(d$x, d$y, likelihood = negative_binomial(), control = augp_control(threads = 1))
  e <- ff$engine$elbo
  expect_gt(length(e), 3)
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
})

test_that("the dispersion step never lowers the local ELBO and maximises it over r", {
  d <- nb_data(60, 3, 4)
  m <- matrix(log(d$mu) + 0.1)
  v <- matrix(0.05, 60)
  tr <- rep(c(1, 2), 30)
  lik <- nb_spec(d$y, 0.5, tr, learn_r = TRUE)
  step <- nb_ns$.lik_learn_params_cpp(lik, m, v)
  expect_gt(step$gain, 0)
  r1 <- step$params$r
  el <- function(r) nb_ns$.gp_lik_eval_cpp(nb_spec(d$y, r, tr), m, v, m)$elbo_local
  expect_equal(el(r1) - el(0.5), step$gain, tolerance = 1e-8)
  opt <- stats::optimize(function(lr) el(exp(lr)), c(log(1e-3), log(1e5)), maximum = TRUE, tol = 1e-10)
  expect_equal(log(r1), opt$maximum, tolerance = 1e-4)
  # starting at the optimum: no change, no gain
  again <- nb_ns$.lik_learn_params_cpp(nb_spec(d$y, r1, tr, learn_r = TRUE), m, v)
  expect_lte(again$gain, 1e-8)
  fixed <- nb_ns$.lik_learn_params_cpp(nb_spec(d$y, 0.5, tr), m, v)
  expect_equal(fixed$gain, 0)
  expect_equal(fixed$params$r, 0.5)
  # the exact expected log-likelihood against numerical integration
  ex <- nb_ns$.lik_expected_loglik_cpp(nb_spec(d$y, 2, tr), m, v, matrix(0, 1, 1))
  ref <- vapply(seq_len(10), function(i) {
    tr[i] * stats::integrate(function(f) stats::dnbinom(d$y[i], size = 2, mu = exp(f), log = TRUE) *
                               stats::dnorm(f, m[i], sqrt(v[i])), m[i] - 12 * sqrt(v[i]), m[i] + 12 * sqrt(v[i]),
                             rel.tol = 1e-10)$value
  }, 0)
  expect_equal(as.numeric(ex)[1:10], ref, tolerance = 1e-7)
})

test_that("the learned dispersion recovers the truth roughly (n = 300, r = 3)", {
  d <- nb_data(300, 3, 11)
  fit <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 1,
                  control = augp_control(threads = 1))
  expect_gt(fit$r, 3 / 1.6)
  expect_lt(fit$r, 3 * 1.6)
  expect_lt(sqrt(mean((log(fitted(fit)) - log(d$mu))^2)), 0.2)
  # Gibbs holds the learned r fixed
  g <- augp_fit(d$x, d$y, likelihood = negative_binomial(), method = "gibbs", seed = 1,
                control = augp_control(threads = 1, iter = 300, warmup = 100, chains = 1))
  expect_equal(g$r, fit$r, tolerance = 1e-6)
  expect_lt(sqrt(mean((log(fitted(g)) - log(d$mu))^2)), 0.25)
})

test_that("an offset multiplies the mean by exp(offset)", {
  set.seed(6)
  n <- 120
  x <- stats::runif(n)
  expo <- exp(stats::runif(n, -1, 1.5))
  y <- stats::rnbinom(n, mu = expo * exp(0.5 + x), size = 5)
  fit <- augp_fit(x, y, likelihood = negative_binomial(r = 5), offset = log(expo), seed = 1,
                  control = augp_control(threads = 1))
  nd <- matrix(c(0.3, 0.3))
  p <- predict(fit, nd, type = "response", offset = c(0, log(4)))
  expect_equal(p[2] / p[1], 4, tolerance = 1e-8)
  pl <- predict(fit, nd, type = "link", offset = c(0, log(4)))
  expect_equal(unname(pl[2] - pl[1]), log(4), tolerance = 1e-10)
  # formula fits: predictions, log_lik() and posterior_epred() on newdata take its offsets
  dat <- data.frame(y = y, x = x, expo = expo)
  ff <- augp(y ~ x + offset(log(expo)), dat, likelihood = negative_binomial(r = 5), seed = 1,
             control = augp_control(threads = 1))
  nd2 <- data.frame(x = c(0.3, 0.3), expo = c(1, 4), y = c(2, 8))
  pf <- predict(ff, nd2)
  expect_equal(unname(pf[2] / pf[1]), 4, tolerance = 1e-8)
  ll <- log_lik(ff, newdata = nd2, ndraws = 4000, seed = 3)
  ep <- posterior_epred(ff, newdata = nd2, ndraws = 4000, seed = 3)
  expect_equal(unname(colMeans(ep)[2] / colMeans(ep)[1]), 4, tolerance = 0.03)
  expect_equal(unname(colMeans(ep)), unname(pf), tolerance = 0.03)
  expect_equal(ll, stats::dnbinom(matrix(nd2$y, 4000, 2, byrow = TRUE), size = 5, mu = ep, log = TRUE),
               tolerance = 1e-10)
  # the rate per unit exposure is close to the truth exp(0.5 + x)
  rate <- predict(fit, matrix(c(0.2, 0.8)), type = "response", offset = c(0, 0))
  expect_equal(unname(log(rate)), 0.5 + c(0.2, 0.8), tolerance = 0.15)
})

test_that("the starting dispersion and prior mean read the exposures", {
  set.seed(9)
  n <- 4000
  expo <- exp(stats::runif(n, -2, 2))
  y <- stats::rnbinom(n, mu = 3 * expo, size = 4)
  lik <- negative_binomial()
  resp <- list(y = y, trials = rep(1, n))
  r_plain <- augmentedGP:::lik_r_start(lik, resp)
  resp$offset <- log(expo)
  r_expo <- augmentedGP:::lik_r_start(lik, resp)
  # with the exposures the moment estimate sees the NB excess variance only (half of it
  # is left to the latent function: about 2 r); without them the exposures' spread
  # counts as overdispersion
  expect_equal(r_expo, 2 * 4, tolerance = 0.25)
  expect_lt(r_plain, 2)
  # the prior mean is the log mean count at the geometric-mean exposure, so that with
  # the centred offset (a constant added to the offset cancels) the log mean of row i
  # is log(3) + log(expo_i)
  resp$offset <- log(expo) + 1.5
  expect_equal(augmentedGP:::lik_prior_mean(lik, resp), log(3) + mean(log(expo)),
               tolerance = 0.03)
  # without an offset the estimates are those of the plain counts
  expect_equal(augmentedGP:::lik_r_start(lik, list(y = y, trials = rep(1, n))), r_plain)
})

test_that("counts select negative_binomial(); 0/1 stays Bernoulli, non-integers Gaussian", {
  d <- nb_data(60, 3, 3)
  dat <- data.frame(count = d$y, x = d$x)
  expect_message(fit <- augp(count ~ x, dat, seed = 1, control = augp_control(threads = 1)),
                 "counts with negative_binomial.*gaussian_noise")
  expect_s3_class(fit$likelihood, "augp_negative_binomial")
  # the message is about the guess only: no message when the likelihood is named
  expect_no_message(suppressWarnings(augp(count ~ x, dat, seed = 1, likelihood = negative_binomial(),
                                          control = augp_control(threads = 1, hyper_maxit = 3))))
  expect_gt(fit$r, 0)
  expect_s3_class(nb_ns$guess_likelihood(c(0, 1, 1, 0)), "augp_bernoulli")
  expect_s3_class(nb_ns$guess_likelihood(c(0.5, 1, 2)), "augp_gaussian")
  expect_s3_class(nb_ns$guess_likelihood(c(0, 2, 1)), "augp_negative_binomial")
  expect_error(augp_fit(d$x, d$y, likelihood = stats::poisson()), "negative_binomial")
})

test_that("bad negative-binomial input is rejected, naming the argument", {
  d <- nb_data(20, 3, 5)
  ctl <- augp_control(threads = 1)
  for (bad in list(0, -1, Inf, NA, c(1, 2), "a")) {
    expect_error(negative_binomial(r = bad), "`r`")
  }
  nb <- negative_binomial(r = 2)
  expect_error(augp_fit(d$x, replace(d$y, 3, -1), likelihood = nb, control = ctl), "`y`.*non-negative")
  expect_error(augp_fit(d$x, replace(d$y, 3, 1.5), likelihood = nb, control = ctl), "`y`.*whole")
  expect_error(augp_fit(d$x, replace(d$y, 3, NA), likelihood = nb, control = ctl), "`y`.*NA")
  expect_error(augp_fit(d$x, replace(d$y, 3, Inf), likelihood = nb, control = ctl), "`y`")
  expect_error(augp_fit(d$x, factor(d$y), likelihood = nb, control = ctl), "`y`")
  expect_error(augp_fit(d$x, d$y * 0, likelihood = nb, control = ctl), "`y`.*zero")
  fit <- augp(count ~ x, data.frame(count = d$y, x = d$x), likelihood = nb, control = ctl)
  expect_error(log_lik(fit, newdata = data.frame(count = c(1, -2), x = c(0.1, 0.2))),
               "`newdata`.*non-negative")
  expect_error(log_lik(fit, newdata = data.frame(count = c(1, 0.5), x = c(0.1, 0.2))),
               "`newdata`.*whole")
  # the C++ likelihood rejects bad data and parameters itself
  expect_error(nb_ns$.lik_response_mean_cpp(nb_spec(c(1, 2), 0), matrix(0)), "r must be positive")
  expect_error(nb_ns$.lik_response_mean_cpp(nb_spec(c(1, -2), 1), matrix(0)), "non-negative")
  # sparse fits run with a fixed or a learned r
  sl <- augp_fit(d$x, d$y, likelihood = negative_binomial(), inducing = 8, control = ctl)
  expect_true(is.finite(sl$engine$lik$r) && sl$engine$lik$r > 0)
  sp <- augp_fit(d$x, d$y, likelihood = nb, inducing = 8, control = ctl)
  expect_true(all(is.finite(fitted(sp))))
})

test_that("the front end works for negative-binomial fits", {
  d <- nb_data(80, 3, 8)
  dat <- data.frame(count = d$y, x = d$x, z = stats::rnorm(80))
  fit <- augp(count ~ x, dat, likelihood = negative_binomial(), seed = 2,
              control = augp_control(threads = 1))
  expect_output(print(fit), "Dispersion: r")
  expect_output(print(summary(fit)), "negative binomial")
  expect_output(print(negative_binomial(r = 2)), "link: log")
  pr <- predict(fit, data.frame(x = c(0.2, 0.7)), interval = "prediction")
  expect_true(all(pr$lwr <= pr$fit & pr$fit <= pr$upr))
  expect_true(all(pr$lwr == round(pr$lwr)))
  cr <- predict(fit, data.frame(x = c(0.2, 0.7)), interval = "credible")
  expect_true(all(cr$upr - cr$lwr < pr$upr - pr$lwr))
  mu <- fitted(fit)
  r <- fit$r
  expect_equal(unname(residuals(fit, type = "pearson")), unname((d$y - mu) / sqrt(mu + mu^2 / r)))
  expect_equal(unname(residuals(fit, type = "response")), unname(d$y - mu))
  dev <- residuals(fit, type = "deviance")
  expect_equal(sum(dev^2), deviance(fit))
  expect_equal(deviance(fit), sum(MASS::negative.binomial(r)$dev.resids(d$y, mu, rep(1, 80))))
  expect_error(sigma(fit), "dispersion")
  sims <- simulate(fit, nsim = 3, seed = 1)
  expect_equal(dim(sims), c(80L, 3L))
  expect_true(all(as.matrix(sims) >= 0 & as.matrix(sims) == round(as.matrix(sims))))
  pp <- posterior_predict(fit)
  expect_equal(ncol(pp), 80L)
  expect_true(all(pp >= 0 & pp == round(pp)))
  ll <- log_lik(fit)
  expect_equal(ncol(ll), 80L)
  expect_true(all(is.finite(ll)))
  lo <- suppressWarnings(loo::loo(fit))
  expect_true(is.finite(lo$estimates["elpd_loo", "Estimate"]))
  p1 <- plot(fit)
  expect_s3_class(p1, "ggplot")
  f2 <- augp(count ~ x + z, dat, likelihood = negative_binomial(r = 3), seed = 2,
             control = augp_control(threads = 1))
  expect_s3_class(plot(f2), "ggplot")
  g <- augp(count ~ x, dat, likelihood = negative_binomial(r = 3), method = "gibbs", seed = 2,
            control = augp_control(threads = 1, iter = 600, warmup = 200, chains = 1))
  gp <- predict(g, data.frame(x = c(0.2, 0.7)), interval = "prediction")
  expect_true(all(gp$lwr <= gp$fit & gp$fit <= gp$upr))
  expect_s3_class(plot(g), "ggplot")
})

test_that("a learned dispersion is fitted from two starts and the higher ELBO is kept", {
  ep <- MASS::epil
  ep$subject <- factor(ep$subject)
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  # a patient random intercept (a linear kernel on the patient's dummy columns): from the
  # moment start (r about 1) the kernel is learned with the patient variation left to the
  # dispersion; from r = 100 the kernel takes it, a far higher ELBO
  k <- kernel_linear(dims = "subject") + kernel_se(dims = "lbase") + kernel_linear(dims = "trt")
  f <- augp(y ~ lbase + trt + subject, ep, likelihood = negative_binomial(), kernel = k,
            seed = 1, control = ctl)
  se <- f$engine$param_start_elbo
  expect_length(se, 2L)
  expect_equal(elbo(f), max(se))
  expect_gt(abs(se[2] - se[1]), 1)
  # the kept fit is the one its own start gives: refitting with the learned kernel and r
  # fixed changes the ELBO by CAVI noise only
  f_fix <- augp(y ~ lbase + trt + subject, ep, likelihood = negative_binomial(r = f$r),
                kernel = f$kernel, seed = 1,
                control = augp_control(threads = 1, integrate_hyper = FALSE, learn_hyper = FALSE))
  expect_equal(elbo(f_fix), elbo(f), tolerance = 1e-4)
  # one start when the dispersion is fixed or the kernel is not learned
  g <- augp(y ~ lbase + trt, ep, likelihood = negative_binomial(), seed = 1,
            control = augp_control(threads = 1, integrate_hyper = FALSE, learn_hyper = FALSE))
  expect_length(g$engine$param_start_elbo, 1L)
})
