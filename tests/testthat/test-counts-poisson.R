# The poisson_logistic() likelihood, y ~ Poisson(lambda sigmoid(f)): the augmentation
# against the likelihood, the Gibbs conditionals and the structured CAVI step by
# enumeration over the latent count, Gibbs against an exact reference posterior, the
# learned lambda, the log-link limit, input checks and the front end. (The shared
# contract checks are in test-likelihood-conformance.R.)
pl_ns <- asNamespace("augmentedGP")

pl_spec <- function(y, lambda, trials = rep(1, length(y)), ...) {
  list(type = "poisson_logistic", q = 1L, y = y, trials = trials, lambda = lambda, ...)
}

pl_data <- function(n = 60, lambda = 12, seed = 3) {
  set.seed(seed)
  x <- sort(stats::runif(n))
  f <- 3 * sin(6 * x) + 0.5
  list(x = x, f = f, y = stats::rpois(n, lambda * stats::plogis(f)), d = data.frame(x = x))
}

test_that("the augmentation sums and integrates back to the Poisson likelihood", {
  # sum_n e^-lambda lambda^(y+n) / (y! n!) 2^-(y+n) e^((y-n) f / 2) E_PG(y+n,0)[e^(-omega f^2 / 2)],
  # the PG expectation by numerical integration of the package's PG density
  cases <- list(c(y = 0, f = 0.7, lambda = 3), c(y = 2, f = -1.1, lambda = 2.5),
                c(y = 5, f = 1.8, lambda = 4))
  for (cs in cases) {
    y <- cs[["y"]]; f <- cs[["f"]]; lambda <- cs[["lambda"]]
    terms <- vapply(0:40, function(n) {
      b <- y + n
      pgpart <- if (b == 0) 1 else stats::integrate(function(w) exp(-w * f^2 / 2) * dpg(w, b),
                                                    0, Inf, rel.tol = 1e-10)$value
      exp(-lambda + b * log(lambda) - lgamma(y + 1) - lgamma(n + 1) - b * log(2) + (y - n) * f / 2) * pgpart
    }, 0)
    expect_equal(sum(terms), stats::dpois(y, lambda * stats::plogis(f)), tolerance = 1e-7)
    # the n-th term is sigma(f)^y sigma(-f)^n times the Poisson weights, term by term
    direct <- exp(-lambda + (y + 0:40) * log(lambda) - lgamma(y + 1) - lgamma(0:40 + 1)) *
      stats::plogis(f)^y * stats::plogis(-f)^(0:40)
    expect_equal(terms, direct, tolerance = 1e-7)
  }
})

test_that("Gibbs draws n ~ Poisson(t lambda sigma(-f)) and omega ~ PG(t y + n, f)", {
  y <- c(3, 0, 1)
  f <- c(0.4, -1.2, 2)
  tr <- c(1, 2, 0)
  lambda <- 5
  lik <- pl_spec(y, lambda, tr)
  S <- 4000
  dr <- lapply(seq_len(S), function(s) pl_ns$.gp_lik_sample_cpp(lik, matrix(f), c(2, s)))
  kap <- vapply(dr, function(d) as.numeric(d$kappa), numeric(3))
  om <- vapply(dr, function(d) as.numeric(d$omega), numeric(3))
  N <- tr * y - 2 * kap  # the latent counts
  expect_true(all(N == round(N)) && all(N >= 0))
  mu <- tr * lambda * stats::plogis(-f)
  for (i in 1:2) {
    # the counts' distribution: chi-squared goodness of fit against the Poisson law
    k <- 0:max(N[i, ])
    obs <- tabulate(N[i, ] + 1, length(k))
    p <- stats::dpois(k, mu[i])
    p[length(p)] <- p[length(p)] + stats::ppois(max(k), mu[i], lower.tail = FALSE)
    keep <- S * p >= 5
    obs <- c(obs[keep], sum(obs[!keep]))
    p <- c(p[keep], sum(p[!keep]))
    if (p[length(p)] == 0) { obs <- obs[-length(obs)]; p <- p[-length(p)] }
    expect_gt(suppressWarnings(stats::chisq.test(obs, p = p))$p.value, 1e-3)
    # omega given the count: E[omega] = E[(t y + N) tanh(|f| / 2) / (2 |f|)]
    expect_equal(mean(om[i, ]), mean((tr[i] * y[i] + N[i, ]) * pg_mean(1, f[i])),
                 tolerance = 4 * stats::sd(om[i, ]) / sqrt(S) / mean(om[i, ]))
  }
  # a zero weight draws nothing
  expect_true(all(N[3, ] == 0) && all(om[3, ] == 0))
})

test_that("the structured CAVI step and local ELBO match enumeration over the latent count", {
  set.seed(11)
  n <- 6
  y <- c(0, 4, 1, 9, 2, 0)
  tr <- c(1, 2, 1, 1, 3, 0)
  lambda <- 7
  m <- matrix(stats::rnorm(n, sd = 1.5))
  v <- matrix(stats::runif(n, 0.05, 2))
  ev <- pl_ns$.gp_lik_eval_cpp(pl_spec(y, lambda, tr), m, v, m)
  # per copy, after the optimal q(omega | n) = PG(y + n, c): the bound's n-th term g(n)
  c2 <- m^2 + v
  cc <- sqrt(c2)
  nn <- 0:300
  local <- 0
  for (i in seq_len(n)) {
    g <- -lambda + (y[i] + nn) * log(lambda) - lgamma(y[i] + 1) - lgamma(nn + 1) +
      (y[i] - nn) * m[i] / 2 - (y[i] + nn) * log(2 * cosh(cc[i] / 2))
    top <- max(g)
    qn <- exp(g - top) / sum(exp(g - top))  # the optimal q(n)
    En <- sum(nn * qn)
    expect_equal(ev$kappa[i], tr[i] * (y[i] - En) / 2, tolerance = 1e-10)
    expect_equal(ev$omega[i], tr[i] * sum((y[i] + nn) * qn) * pg_mean(1, cc[i]), tolerance = 1e-10)
    local <- local + tr[i] * (top + log(sum(exp(g - top))))
    # q(n) is Poisson: its variance equals its mean
    expect_equal(sum((nn - En)^2 * qn), En, tolerance = 1e-8)
  }
  expect_equal(ev$elbo_local, local, tolerance = 1e-10)
  # no cancellation far in the tails (rate far below lambda, m very negative)
  far <- pl_ns$.gp_lik_eval_cpp(pl_spec(c(0, 1), 1e8), matrix(c(-25, -20)), matrix(c(0, 0)),
                                matrix(c(-25, -20)))
  expect_equal(far$elbo_local, sum(stats::dpois(c(0, 1), 1e8 * stats::plogis(c(-25, -20)), log = TRUE)),
               tolerance = 1e-9)
})

test_that("the learned lambda is the closed-form maximiser of the local ELBO", {
  d <- pl_data(40, 9, 4)
  m <- matrix(d$f + 0.3)
  v <- matrix(0.2, 40)
  tr <- rep(c(1, 2), 20)
  step <- pl_ns$.lik_learn_params_cpp(pl_spec(d$y, 30, tr), m, v)
  expect_gt(step$gain, 0)
  lam <- step$params$lambda
  el <- function(l) pl_ns$.gp_lik_eval_cpp(pl_spec(d$y, l, tr), m, v, m)$elbo_local
  expect_equal(el(lam) - el(30), step$gain, tolerance = 1e-8)
  expect_gt(el(lam), el(lam * 1.01))
  expect_gt(el(lam), el(lam * 0.99))
  # the closed form sum t y / sum t (1 - a), a = e^(-m / 2) / (2 cosh(c / 2))
  a <- exp(-m / 2) / (2 * cosh(sqrt(m^2 + v) / 2))
  expect_equal(lam, sum(tr * d$y) / sum(tr * (1 - a)), tolerance = 1e-10)
  fixed <- pl_ns$.lik_learn_params_cpp(pl_spec(d$y, 30, tr, learn_lambda = FALSE), m, v)
  expect_equal(fixed$gain, 0)
  expect_equal(fixed$params$lambda, 30)
  # started at the optimum: no gain, lambda kept
  again <- pl_ns$.lik_learn_params_cpp(pl_spec(d$y, lam, tr), m, v)
  expect_equal(again$params$lambda, lam, tolerance = 1e-8)
  expect_lte(again$gain, 1e-8)
})

test_that("Gibbs agrees with the exact posterior (quadrature, n = 2)", {
  X <- matrix(c(0, 0.6))
  y <- c(7, 1)
  lambda <- 9
  k <- kernel_se(1.5, 0.7)
  g <- gibbs_two_points(X, k, pl_spec(y, lambda), seed = 6, warmup = 300)
  # the exact posterior with the likelihood prod Poisson(y_i | lambda sigma(f_i))
  ex <- grid_posterior_two_points(g$K, function(G) {
    stats::dpois(y[1], lambda * stats::plogis(G[, 1]), log = TRUE) +
      stats::dpois(y[2], lambda * stats::plogis(G[, 2]), log = TRUE)
  }, c(-6, 6))
  # a conservative effective sample size for the correlated draws: a quarter of them
  expect_draws_match_posterior(g$F, ex, band = 4, ess = nrow(g$F) / 4)
  # and the variational mean is close (the structured q is tight for one count each)
  vi <- pl_ns$augp_engine(X, kernel = k, method = "vi", lik = pl_spec(y, lambda),
                          control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                         tol = 1e-12, maxit = 500))
  expect_true(all(abs(as.numeric(vi$mean) - ex$mu) < 0.2))
})

test_that("the CAVI ELBO never decreases, with lambda fixed and learned", {
  d <- pl_data(50, 10, 8)
  fit <- pl_ns$augp_engine(matrix(d$x), kernel = kernel_se(2, 0.2), method = "vi",
                           lik = pl_spec(d$y, 15),
                           control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                          tol = 1e-12, maxit = 300))
  expect_gt(length(fit$elbo), 3)
  expect_true(all(diff(fit$elbo) >= -1e-8 * abs(fit$elbo[-1])))
  ff <- augp_fit(d$x, d$y, likelihood = poisson_logistic(), control = augp_control(threads = 1))
  e <- ff$engine$elbo
  expect_gte(ff$engine$param_rounds, 1)
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  # the learned lambda is not below the largest fitted rate
  expect_gte(ff$lambda, max(fitted(ff)))
})

test_that("lambda is recovered roughly on simulated data whose rates approach it", {
  set.seed(21)
  n <- 300
  x <- stats::runif(n)
  lambda <- 10
  y <- stats::rpois(n, lambda * stats::plogis(6 * sin(5 * x)))
  fit <- suppressWarnings(augp_fit(x, y, likelihood = poisson_logistic(),
                                   control = augp_control(threads = 1, maxit = 1000)))
  expect_gt(fit$lambda, 0.75 * lambda)
  expect_lt(fit$lambda, 1.33 * lambda)
  truth <- lambda * stats::plogis(6 * sin(5 * x))
  expect_lt(sqrt(mean((fitted(fit) - truth)^2)), 0.8)
})

test_that("a large lambda with f shifted by -log(lambda) is Poisson with a log link", {
  y <- c(0, 2, 5, 13)
  f <- c(-1, 0.5, 1.6, 2.5)
  lambda <- 1e7
  spec <- pl_spec(y, lambda)
  ll <- pl_ns$.lik_loglik_obs_cpp(spec, array(f - log(lambda), c(1, 4, 1)))
  expect_equal(as.numeric(ll), stats::dpois(y, exp(f), log = TRUE), tolerance = 1e-5)
  expect_equal(as.numeric(pl_ns$.lik_response_mean_cpp(spec, matrix(f - log(lambda)))), exp(f),
               tolerance = 1e-5)
  v <- c(0.1, 0.3, 0.05, 0.2)
  el <- pl_ns$.lik_expected_loglik_cpp(spec, matrix(f - log(lambda)), matrix(v), matrix(0, 1, 1))
  expect_equal(as.numeric(el), y * f - exp(f + v / 2) - lgamma(y + 1), tolerance = 1e-5)
})

test_that("bad poisson_logistic input is rejected, naming the argument", {
  d <- pl_data(10)
  expect_error(poisson_logistic(lambda = 0), "`lambda`")
  expect_error(poisson_logistic(lambda = -1), "`lambda`")
  expect_error(poisson_logistic(lambda = Inf), "`lambda`")
  expect_error(poisson_logistic(lambda = NA), "`lambda`")
  expect_error(poisson_logistic(lambda = c(1, 2)), "`lambda`")
  expect_error(poisson_logistic(lambda = "a"), "`lambda`")
  lik <- poisson_logistic()
  expect_error(augp_fit(d$x, replace(d$y, 3, -1), likelihood = lik), "`y`.*negative")
  expect_error(augp_fit(d$x, replace(d$y, 3, 1.5), likelihood = lik), "`y`.*whole numbers")
  expect_error(augp_fit(d$x, replace(d$y, 3, NA), likelihood = lik), "`y`.*NA")
  expect_error(augp_fit(d$x, replace(d$y, 3, Inf), likelihood = lik), "`y`.*Inf")
  expect_error(augp_fit(d$x, factor(d$y), likelihood = lik), "`y`.*counts")
  expect_error(augp_fit(d$x, rep(0, 10), likelihood = lik), "`y`.*0 everywhere")
  expect_silent(augp_fit(d$x, rep(0, 10), likelihood = poisson_logistic(lambda = 3),
                         control = augp_control(threads = 1)))
  expect_error(pl_ns$.lik_response_mean_cpp(pl_spec(1, -2), matrix(0)), "lambda")
  expect_error(pl_ns$.lik_response_mean_cpp(pl_spec(1.5, 2), matrix(0)), "whole numbers")
  expect_error(pl_ns$.lik_response_mean_cpp(pl_spec(-1, 2), matrix(0)), "whole numbers")
  expect_error(augp_fit(d$x, d$y, likelihood = "poisson"), "poisson_logistic()")
})

test_that("poisson_logistic() fits through augp(): methods, Gibbs, sparse, offsets", {
  d <- pl_data(60, 12, 3)
  dat <- data.frame(x = d$x, y = d$y)
  ctl <- augp_control(threads = 1)
  fit <- augp(y ~ x, dat, likelihood = poisson_logistic(), control = augp_control(threads = 1, maxit = 1000))
  expect_output(print(fit), "Maximal rate: lambda .*learned by the ELBO")
  expect_output(print(summary(fit)), "mean deviance")
  expect_output(print(poisson_logistic(lambda = 4)), "lambda 4, fixed")
  mu <- fitted(fit)
  expect_equal(length(mu), 60)
  expect_true(all(mu > 0 & mu < fit$lambda))
  # residuals as glm(family = poisson) defines them, and the deviance
  expect_equal(unname(residuals(fit, type = "response")), d$y - unname(mu))
  expect_equal(unname(residuals(fit, type = "pearson")), (d$y - unname(mu)) / sqrt(unname(mu)))
  dr <- residuals(fit, type = "deviance")
  expect_equal(sum(dr^2), deviance(fit))
  ref <- stats::poisson()$dev.resids(d$y, unname(mu), rep(1, 60))
  expect_equal(unname(dr^2), ref)
  # predict: the rate and its credible interval, a count interval, the link
  nd <- data.frame(x = c(0.1, 0.5, 0.9))
  cr <- predict(fit, nd, type = "response", interval = "credible")
  pr <- predict(fit, nd, type = "response", interval = "prediction")
  ln <- predict(fit, nd, type = "link", interval = "credible")
  expect_equal(cr$fit, pr$fit)
  expect_true(all(cr$lwr < cr$fit & cr$fit < cr$upr))
  expect_true(all(pr$lwr <= cr$lwr & pr$upr >= cr$upr))
  expect_true(all(pr$lwr == round(pr$lwr) & pr$upr == round(pr$upr)))
  # (quantiles of the same draws; the default averages this fit over its kernel
  # hyperparameters, and the quantiles interpolate between draws on each scale)
  expect_equal(cr$lwr, fit$lambda * stats::plogis(ln$lwr), tolerance = 1e-6)
  expect_error(predict(fit, nd, type = "class"), "count response")
  # simulate, posterior_predict, log_lik, loo
  sims <- simulate(fit, nsim = 3, seed = 1)
  expect_equal(dim(sims), c(60, 3))
  expect_true(all(as.matrix(sims) == round(as.matrix(sims))))
  pp <- posterior_predict(fit, ndraws = 20, seed = 2)
  expect_equal(dim(pp), c(20, 60))
  ll <- log_lik(fit, ndraws = 30, seed = 3)
  expect_equal(dim(ll), c(30, 60))
  lln <- log_lik(fit, newdata = data.frame(x = c(0.2, 0.4), y = c(3, 8)), ndraws = 30, seed = 3)
  expect_equal(dim(lln), c(30, 2))
  expect_error(log_lik(fit, newdata = data.frame(x = 0.2, y = 2.5)), "`newdata`.*whole numbers")
  expect_s3_class(loo::loo(fit), "loo")
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
  # Gibbs holds lambda at its ELBO value
  g <- suppressWarnings(augp(y ~ x, dat, likelihood = poisson_logistic(), method = "gibbs", seed = 1,
                             control = augp_control(threads = 1, maxit = 1000, iter = 300, warmup = 150,
                                                    chains = 1)))
  expect_equal(g$lambda, fit$lambda, tolerance = 1e-6)
  expect_equal(as.numeric(fitted(g)), as.numeric(mu), tolerance = 0.15)
  # sparse: a fixed lambda works
  s <- augp(y ~ x, dat, likelihood = poisson_logistic(lambda = fit$lambda), inducing = 15, control = ctl)
  expect_equal(as.numeric(fitted(s)), as.numeric(mu), tolerance = 0.1)
  # an offset shifts the logit of rate / lambda (centred: a constant offset changes nothing)
  o1 <- augp(y ~ x, dat, likelihood = poisson_logistic(lambda = 20), offset = rep(2, 60), control = ctl)
  o0 <- augp(y ~ x, dat, likelihood = poisson_logistic(lambda = 20), control = ctl)
  expect_equal(as.numeric(fitted(o1)), as.numeric(fitted(o0)), tolerance = 1e-6)
  dat$off <- rep(c(-0.5, 0.5), 30)
  o2 <- augp(y ~ x + offset(off), dat, likelihood = poisson_logistic(lambda = 20), control = ctl)
  expect_equal(as.numeric(predict(o2, dat, type = "response")), as.numeric(fitted(o2)), tolerance = 1e-6)
  hi <- lo <- dat
  hi$off <- 0.5
  lo$off <- -0.5
  expect_equal(as.numeric(predict(o2, hi, type = "link") - predict(o2, lo, type = "link")), rep(1, 60),
               tolerance = 1e-8)
})

test_that("the effects plot takes its y scale from the likelihood (rates, means beyond [0, 1])", {
  set.seed(4)
  dat <- data.frame(x1 = stats::runif(50), x2 = stats::runif(50))
  dat$y <- stats::rpois(50, 12 * stats::plogis(2 * sin(5 * dat$x1) + dat$x2))
  dat$z <- 5 + dat$y / 3 + stats::rnorm(50, sd = 0.2)
  ctl <- augp_control(threads = 1, maxit = 1000)
  for (fit in list(augp(y ~ x1 + x2, dat, likelihood = poisson_logistic(), control = ctl),
                   augp(z ~ x1 + x2, dat, likelihood = gaussian_noise(), control = ctl))) {
    b <- ggplot2::ggplot_build(ggplot2::autoplot(fit, type = "effects"))
    lines <- b$data[[2]]
    expect_gt(nrow(lines), 0)
    expect_false(anyNA(lines$y))
    expect_gt(max(lines$y), 1)
  }
})

test_that("the parameter extrapolation finds the limit of a linearly converging sequence", {
  pe <- asNamespace("augmentedGP")$param_extrapolate
  # positive values: geometric convergence on the log scale; others: on the raw scale
  h <- lapply(1:3, function(k) list(lambda = exp(log(3) + 0.9^k), cut = c(-1 + 0.9^k, 2 - 0.9^k)))
  out <- pe(h)
  expect_equal(out$lambda, 3, tolerance = 1e-12)
  expect_equal(out$cut, c(-1, 2), tolerance = 1e-12)
  # steps that grow, change direction or vanish: no jump
  expect_length(pe(lapply(1:3, function(k) list(lambda = exp(k^2)))), 0)
  expect_length(pe(lapply(c(1, 2, 1), function(k) list(lambda = k))), 0)
  expect_length(pe(lapply(1:3, function(k) list(lambda = 4))), 0)
  expect_length(pe(h[1:2]), 0)
})

test_that("the maximal rate converges in a few rounds to the optimum of a long alternation", {
  set.seed(1)
  d <- data.frame(x = stats::runif(150, 0, 6))
  d$y <- stats::rpois(150, 8 * stats::plogis(2 * sin(d$x)))
  # the plain alternation converges linearly here with a step ratio near 1; the
  # extrapolated jumps must reach the long alternation's optimum in a few rounds
  expect_no_warning(f <- augp(y ~ x, d, likelihood = poisson_logistic(), seed = 1,
                              control = augp_control(threads = 2)))
  expect_lt(f$engine$param_rounds, 30)
  tight <- augp(y ~ x, d, likelihood = poisson_logistic(), seed = 1,
                control = augp_control(threads = 2, tol = 1e-11, maxit = 5000))
  expect_true(tight$engine$param_converged)
  expect_lt(tight$engine$param_rounds, 60)
  # (the ELBO is flat along lambda here: lambda 13-17 are within 0.05 nats of each other)
  expect_equal(f$likelihood$lambda, tight$likelihood$lambda, tolerance = 0.1)
  expect_gt(elbo(f), elbo(tight) - 0.02)
  expect_true(all(diff(f$engine$elbo) >= -1e-8 * abs(elbo(f))))
  # the sparse engine's alternation takes the same jumps
  expect_no_warning(fs <- augp(y ~ x, d, likelihood = poisson_logistic(), inducing = 15, seed = 1,
                               control = augp_control(threads = 2)))
  expect_lt(fs$engine$param_rounds, 30)
  # (the sparse fit runs from the first start only: its lambda may sit elsewhere on the
  # flat ridge, its ELBO not)
  expect_equal(elbo(fs), elbo(f), tolerance = 0.1 / abs(elbo(f)))
  expect_true(all(diff(fs$engine$elbo) >= -1e-8 * abs(elbo(fs))))
})

test_that("a learned lambda is fitted from two starts and the higher ELBO is kept", {
  d <- data.frame(x = seq(0, 1, length.out = 40))
  set.seed(8)
  d$y <- stats::rpois(40, 12 * stats::plogis(3 * sin(6 * d$x)))
  f <- augp(y ~ x, d, likelihood = poisson_logistic(), seed = 1,
            control = augp_control(threads = 1, integrate_hyper = FALSE))
  se <- f$engine$param_start_elbo
  expect_length(se, 2L)
  expect_equal(elbo(f), max(se))
  # a fixed lambda has nothing to learn: no restart (and no parameter rounds)
  g <- augp(y ~ x, d, likelihood = poisson_logistic(lambda = 20), seed = 1,
            control = augp_control(threads = 1, integrate_hyper = FALSE))
  expect_null(g$engine$param_start_elbo)
})
