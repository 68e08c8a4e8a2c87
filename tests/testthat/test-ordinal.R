# The ordinal() likelihood (continuation-ratio logit): the category probabilities by
# enumeration, the Polya-Gamma augmentation integrated back, Gibbs against importance
# sampling of the un-augmented posterior, CAVI's ELBO and the learned cut points,
# recovery, input checks and the front end. (The shared contract checks are in
# test-likelihood-conformance.R.)
od_ns <- asNamespace("augmentedGP")

od_spec <- function(y, cut, trials = rep(1, length(y)), ...) {
  list(type = "ordinal", q = 1L, y = as.double(y), trials = as.double(trials), cutpoints = cut, ...)
}

# P(y = k | f) written independently of the package: the stick products.
od_prob <- function(f, cut) {
  K <- length(cut) + 1L
  vapply(seq_len(K), function(k) {
    go <- if (k > 1) prod(stats::plogis(f - cut[seq_len(k - 1)])) else 1
    if (k < K) go * stats::plogis(cut[k] - f) else go
  }, numeric(1))
}

# log P(y = k | f), stable in the tails.
od_logprob <- function(f, cut, k) {
  K <- length(cut) + 1L
  go <- if (k > 1) sum(stats::plogis(f - cut[seq_len(k - 1)], log.p = TRUE)) else 0
  if (k < K) go + stats::plogis(cut[k] - f, log.p = TRUE) else go
}

# One draw of y given f: stop at category k with probability plogis(c_k - f).
od_draw <- function(f, cut) {
  K <- length(cut) + 1L
  vapply(f, function(fi) {
    k <- 1L
    while (k < K && stats::runif(1) > stats::plogis(cut[k] - fi)) k <- k + 1L
    k
  }, integer(1))
}

od_data <- function(n = 300, seed = 11, cut = c(-0.5, 0.2, 0.8)) {
  set.seed(seed)
  x <- stats::runif(n, -2, 2)
  f <- sin(1.5 * x)
  y <- od_draw(f, cut)
  list(x = x, f = f, y = y, cut = cut,
       d = data.frame(x = x, rating = factor(y, levels = 1:4, labels = c("low", "mid", "high", "top"),
                                              ordered = TRUE)))
}

test_that("the category probabilities are the stick products and telescope to 1", {
  cut <- c(-1, 0.3, 0.4, 2)
  f <- c(-3, -0.5, 0, 0.35, 1.7, 4)
  P <- od_ns$.lik_response_mean_cpp(od_spec(numeric(0), cut, numeric(0)), matrix(f))
  expect_equal(dim(P), c(6L, 5L))
  expect_equal(rowSums(P), rep(1, 6), tolerance = 1e-14)
  expect_equal(P, t(vapply(f, od_prob, numeric(5), cut = cut)), tolerance = 1e-14)
  # log p(y | f) is the log of the observed category's probability, times the weight
  y <- c(1, 2, 5, 3, 4, 5)
  tr <- c(1, 1, 2, 1, 3, 0)
  ll <- od_ns$.lik_loglik_obs_cpp(od_spec(y, cut, tr), array(f, c(1, 6, 1)))
  expect_equal(as.numeric(ll), tr * log(P[cbind(1:6, y)]), tolerance = 1e-12)
  # a larger f moves mass up: P(y <= k) falls with f for every k
  cum <- t(apply(P, 1, cumsum))[, 1:4]
  expect_true(all(diff(cum) < 0))
})

test_that("the augmented density integrated over the Polya-Gamma variables is the likelihood", {
  cut <- c(-0.7, 0.4, 1.2)
  for (f in c(-1.1, 0.3, 2)) {
    for (k in 1:4) {
      for (t in 1:2) {
        # stick j: 2^-t exp(t kappa_j x_j - w x_j^2 / 2) PG(w | t, 0), x_j = c_j - f
        sticks <- seq_len(min(k, 3))
        val <- prod(vapply(sticks, function(j) {
          x <- cut[j] - f
          kap <- if (j == k) 0.5 else -0.5
          stats::integrate(function(w) 2^-t * exp(t * kap * x - w * x^2 / 2) * dpg(w, t, 0),
                           0, Inf, rel.tol = 1e-10)$value
        }, numeric(1)))
        expect_equal(val, od_prob(f, cut)[k]^t, tolerance = 1e-5)
      }
    }
  }
  # the contract form: kappa and omega add up over the sticks, omega_ij ~ PG(t, c_j - f)
  y <- c(1, 2, 4)
  tr <- c(1, 3, 2)
  m <- matrix(c(0.2, -0.4, 1))
  v <- matrix(c(0.3, 0.1, 0.5))
  ev <- od_ns$.gp_lik_eval_cpp(od_spec(y, cut, tr), m, v, m)
  ref_om <- ref_ka <- numeric(3)
  for (i in 1:3) {
    for (j in seq_len(min(y[i], 3))) {
      w <- pg_mean(tr[i], sqrt((cut[j] - m[i])^2 + v[i]))
      ref_om[i] <- ref_om[i] + w
      ref_ka[i] <- ref_ka[i] + w * cut[j] - tr[i] * (if (j == y[i]) 0.5 else -0.5)
    }
  }
  expect_equal(as.numeric(ev$omega), ref_om, tolerance = 1e-12)
  expect_equal(as.numeric(ev$kappa), ref_ka, tolerance = 1e-12)
})

test_that("Gibbs agrees with importance sampling of the un-augmented posterior (n = 3)", {
  X <- matrix(c(0, 0.5, 1.4))
  y <- c(1, 3, 4)
  cut <- c(-0.6, 0.1, 0.7)
  k <- kernel_se(1.5, 0.9)
  g <- od_ns$augp_engine(X, kernel = k, method = "gibbs", lik = od_spec(y, cut), seed = 3,
                         control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                        iter = 6000, warmup = 300, chains = 1))
  K <- kernel_matrix(k, X) + diag(g$jitter, 3)
  # reference: draws from the prior N(0, K) weighted by p(y | f)
  set.seed(5)
  S0 <- 200000
  Fp <- matrix(stats::rnorm(S0 * 3), S0) %*% chol(K)
  # log P(y_i | f) for a vector of f (the stick sums of od_logprob, vectorised)
  lp_vec <- function(f, k) {
    go <- if (k > 1) rowSums(stats::plogis(outer(f, cut[seq_len(k - 1)], "-"), log.p = TRUE)) else 0
    if (k < 4) go + stats::plogis(cut[k] - f, log.p = TRUE) else go
  }
  expect_equal(lp_vec(c(-1, 0.4), 3), c(od_logprob(-1, cut, 3), od_logprob(0.4, cut, 3)))
  lw <- lp_vec(Fp[, 1], y[1]) + lp_vec(Fp[, 2], y[2]) + lp_vec(Fp[, 3], y[3])
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  mu <- colSums(w * Fp)
  va <- colSums(w * (Fp - rep(mu, each = S0))^2)
  S <- length(g$draws) / 3
  F <- matrix(g$draws, S, 3)
  expect_true(all(abs(colMeans(F) - mu) <= 8 * sqrt(va / S)))
  expect_equal(apply(F, 2, stats::var), unname(va), tolerance = 0.12)
  # and the data moved the posterior: the means are ordered as the categories
  expect_true(mu[1] < mu[2] && mu[2] < mu[3])
})

test_that("the learned cut points maximise the local ELBO given q(f), one at a time", {
  set.seed(2)
  n <- 40
  y <- c(1:4, sample(1:4, n - 4, replace = TRUE))
  tr <- rep(c(1, 2), n / 2)
  m <- matrix(stats::rnorm(n, sd = 0.7) + 0.3 * y)
  v <- matrix(stats::runif(n, 0.05, 0.5))
  cut0 <- c(0, 0, 0)
  step <- od_ns$.lik_learn_params_cpp(od_spec(y, cut0, tr, learn_cutpoints = TRUE), m, v)
  expect_gt(step$gain, 0)
  elbo_at <- function(cut) od_ns$.gp_lik_eval_cpp(od_spec(y, cut, tr), m, v, m)$elbo_local
  expect_equal(elbo_at(step$params$cutpoints) - elbo_at(cut0), step$gain, tolerance = 1e-8)
  # each cut point is the 1-D maximiser (the local ELBO separates over the cut points)
  for (j in 1:3) {
    opt <- stats::optimize(function(c) {
      cc <- step$params$cutpoints
      cc[j] <- c
      elbo_at(cc)
    }, c(-6, 6), maximum = TRUE, tol = 1e-10)
    expect_equal(step$params$cutpoints[j], opt$maximum, tolerance = 1e-5)
  }
  # a second step gains nothing; fixed cut points are left alone
  again <- od_ns$.lik_learn_params_cpp(od_spec(y, step$params$cutpoints, tr, learn_cutpoints = TRUE), m, v)
  expect_lt(again$gain, 1e-8)
  fixed <- od_ns$.lik_learn_params_cpp(od_spec(y, cut0, tr), m, v)
  expect_equal(fixed$gain, 0)
  expect_equal(fixed$params$cutpoints, cut0)
})

test_that("the CAVI ELBO never decreases, with the cut points fixed and learned", {
  od <- od_data(120, 4)
  eng <- od_ns$augp_engine(matrix(od$x), kernel = kernel_se(1, 0.8), method = "vi",
                           lik = od_spec(od$y, od$cut),
                           control = list(learn_hyper = FALSE, threads = 1, verbose = FALSE,
                                          tol = 1e-12, maxit = 300))
  expect_gt(length(eng$elbo), 3)
  expect_true(all(diff(eng$elbo) >= -1e-8 * abs(eng$elbo[-1])))
  fit <- augp(rating ~ x, od$d, control = augp_control(threads = 1))
  e <- fit$engine$elbo
  expect_gt(fit$engine$param_rounds, 1)
  expect_true(all(diff(e) >= -1e-8 * abs(e[-1])))
  # the fit is at the optimum along the ridge of a common shift of f and the cut points
  # (the likelihood is flat along it): the best shift a = -1' K^-1 m / 1' K^-1 1 is ~0
  K <- kernel_matrix(fit$engine$kernel, fit$x) + diag(fit$engine$jitter, fit$n)
  a <- -sum(solve(K, fit$engine$mean)) / sum(solve(K, rep(1, fit$n)))
  expect_lt(abs(a), 0.01)
  expect_lt(fit$engine$param_rounds, 20)
  # the expected log-likelihood (quadrature) bounds the local ELBO from above
  m <- matrix(fit$engine$mean)
  v <- matrix(fit$engine$var)
  spec <- fit$engine$lik
  el <- od_ns$.lik_expected_loglik_cpp(spec, m, v, matrix(0, 1, 1))
  expect_gte(sum(el), od_ns$.gp_lik_eval_cpp(spec, m, v, m)$elbo_local - 1e-8)
  ref <- vapply(seq_len(5), function(i) {
    stats::integrate(function(f) vapply(f, od_logprob, 0, cut = spec$cutpoints, k = spec$y[i]) *
                       stats::dnorm(f, m[i], sqrt(v[i])), -Inf, Inf, rel.tol = 1e-10)$value
  }, 0)
  expect_equal(as.numeric(el)[1:5], ref, tolerance = 1e-7)
})

test_that("cut points and the latent function are recovered (n = 300, K = 4)", {
  od <- od_data(300, 11)
  fit <- augp(rating ~ x, od$d, control = augp_control(threads = 1))
  expect_s3_class(fit$likelihood, "augp_ordinal")
  expect_equal(names(fit$cutpoints), c("low|mid", "mid|high", "high|top"))
  expect_true(all(abs(fit$cutpoints - od$cut) < 0.4))
  f_hat <- as.numeric(fitted(fit, type = "link"))
  expect_gt(stats::cor(f_hat, od$f), 0.9)
  expect_lt(sqrt(mean((f_hat - od$f)^2)), 0.4)
  # the fitted probabilities are close to the true ones
  Ptrue <- t(vapply(od$f, od_prob, numeric(4), cut = od$cut))
  expect_lt(mean(abs(unname(fitted(fit)) - Ptrue)), 0.05)
})

test_that("bad ordinal input is rejected, naming the argument", {
  od <- od_data(30, 2)
  d <- od$d
  expect_error(ordinal(cutpoints = c(0, Inf)), "`cutpoints`")
  expect_error(ordinal(cutpoints = c(0, NA)), "`cutpoints`")
  expect_error(ordinal(cutpoints = 1), "`cutpoints`")
  expect_error(ordinal(cutpoints = "a"), "`cutpoints`")
  # K < 3
  d2 <- data.frame(x = d$x, r = factor(d$x > 0, ordered = TRUE))
  expect_error(augp(r ~ x, d2, likelihood = ordinal()), "`y`.*bernoulli_logit")
  # an empty category: say so and suggest droplevels() (a formula's model frame drops it,
  # with a warning, as for every factor response)
  d3 <- d
  d3$rating <- factor(ifelse(d$rating == "mid", "low", as.character(d$rating)),
                      levels = levels(d$rating), ordered = TRUE)
  expect_error(augp_fit(d3$x, d3$rating), "'mid'.*droplevels")
  expect_warning(f3 <- augp(rating ~ x, d3, control = augp_control(threads = 1)), "'mid'.*dropped")
  expect_equal(f3$levels, c("low", "high", "top"))
  # NA in the response (na.action = na.fail) and in the engine
  d4 <- d
  d4$rating[3] <- NA
  expect_error(augp(rating ~ x, d4, likelihood = ordinal(), na.action = stats::na.fail), "missing")
  expect_error(augp_fit(d$x, replace(d$rating, 3, NA), likelihood = ordinal()), "`y`.*NA")
  # cut points of the wrong length, with an unordered or character response (a message)
  expect_message(expect_error(augp_fit(d$x, factor(as.character(d$rating)),
                                       likelihood = ordinal(cutpoints = c(0, 1))), "`cutpoints`"),
                 "unordered")
  expect_message(expect_error(augp_fit(d$x, as.character(d$rating),
                                       likelihood = ordinal(cutpoints = c(0, 1, 2, 3))), "`cutpoints`"),
                 "character")
  expect_error(augp_fit(d$x, as.numeric(d$rating), likelihood = ordinal()), "`y`.*ordered factor")
  expect_error(augp_fit(d$x, cbind(1:30, 1:30), likelihood = ordinal()), "`y`")
  # the engine checks its own data
  expect_error(od_ns$.lik_response_mean_cpp(od_spec(5, c(0, 1)), matrix(0)), "1..K")
  expect_error(od_ns$.lik_response_mean_cpp(od_spec(1, c(0, NaN)), matrix(0)), "finite")
  expect_error(od_ns$.lik_response_mean_cpp(od_spec(1, numeric(0)), matrix(0)), "cut point")
})

test_that("an ordered factor picks ordinal(); an unordered one logistic_softmax()", {
  od <- od_data(60, 3)
  fit <- augp(rating ~ x, od$d, control = augp_control(threads = 1))
  expect_s3_class(fit$likelihood, "augp_ordinal")
  expect_identical(class(od_ns$guess_likelihood(od$d$rating))[1], "augp_ordinal")
  expect_identical(class(od_ns$guess_likelihood(factor(od$d$rating, ordered = FALSE)))[1],
                   "augp_logistic_softmax")
  expect_identical(class(od_ns$guess_likelihood(factor(c("a", "b", "a"), ordered = TRUE)))[1],
                   "augp_bernoulli")
  # a factor is accepted with ordinal(), with a message on the order taken
  expect_message(f2 <- augp_fit(od$x, factor(od$y), likelihood = ordinal(),
                                control = augp_control(threads = 1)), "unordered factor")
  expect_equal(unname(f2$cutpoints), unname(fit$cutpoints), tolerance = 1e-6)
})

test_that("ordinal fits through augp(): predict, fitted, residuals, simulate, posterior and plots", {
  od <- od_data(80, 6)
  ctl <- augp_control(threads = 1)
  fit <- augp(rating ~ x, od$d, control = ctl)
  lev <- levels(od$d$rating)
  P <- predict(fit, type = "response")
  expect_equal(dim(P), c(80L, 4L))
  expect_equal(colnames(P), lev)
  expect_equal(unname(rowSums(P)), rep(1, 80), tolerance = 1e-10)
  expect_equal(P, fitted(fit))
  cls <- predict(fit, type = "class")
  expect_s3_class(cls, "factor")
  expect_equal(levels(cls), lev)
  lk <- predict(fit, type = "link", se.fit = TRUE)
  expect_equal(colnames(lk$fit), "f")
  ci <- predict(fit, od$d[1:5, ], type = "response", interval = "credible")
  expect_true(all(ci$lwr <= ci$fit + 1e-12 & ci$fit <= ci$upr + 1e-12))
  pint <- predict(fit, od$d[1:5, ], type = "response", interval = "prediction")
  expect_equal(dim(pint$lwr), c(5L, 4L))
  expect_equal(dim(residuals(fit)), c(80L, 4L))
  expect_gt(deviance(fit), 0)
  sims <- simulate(fit, nsim = 4, seed = 1)
  expect_equal(dim(sims), c(80L, 4L, 4L))
  expect_true(all(apply(sims, c(1, 3), sum) == 1))
  pp <- posterior_predict(fit, ndraws = 6, seed = 1)
  expect_equal(dim(pp), c(6L, 80L))
  expect_true(all(pp %in% 1:4))
  pe <- posterior_epred(fit, ndraws = 6, seed = 1)
  expect_equal(dim(pe), c(6L, 80L, 4L))
  ll <- log_lik(fit, ndraws = 20, seed = 1)
  expect_equal(dim(ll), c(20L, 80L))
  # log_lik at new data with the response: the same values at the training rows
  ll2 <- log_lik(fit, newdata = od$d, ndraws = 20, seed = 1)
  expect_equal(ll2, ll, tolerance = 1e-5)
  expect_output(print(fit), "Cut points")
  expect_output(print(summary(fit)), "continuation ratio")
  expect_output(print(fit$likelihood), "continuation-ratio logit")
  expect_equal(summary(fit)$cutpoints, fit$cutpoints)
  td <- tidy(fit)
  expect_equal(td$estimate[td$component == "likelihood"], unname(fit$cutpoints))
  if (requireNamespace("loo", quietly = TRUE)) {
    expect_s3_class(suppressWarnings(loo::loo(fit)), "psis_loo")
  }
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
  od$d$x2 <- stats::rnorm(80)
  fit2 <- augp(rating ~ x + x2, od$d, control = ctl)
  expect_s3_class(ggplot2::autoplot(fit2), "ggplot")
  expect_s3_class(ggplot2::autoplot(fit2, type = "effects"), "ggplot")
})

test_that("an offset shifts f; Gibbs holds the cut points fixed; sparse fits need fixed cut points", {
  od <- od_data(80, 8)
  ctl <- augp_control(threads = 1)
  off <- seq(-1, 1, length.out = 80)
  od$d$off <- off
  fo <- augp(rating ~ x + offset(off), od$d, control = ctl)
  nd <- od$d[1:3, ]
  a <- predict(fo, nd, type = "link")
  nd$off <- nd$off + 1
  b <- predict(fo, nd, type = "link")
  expect_equal(unname(b - a), matrix(1, 3, 1), tolerance = 1e-10)
  # Gibbs with given cut points: they stay as given
  cut <- c(-0.4, 0.1, 0.9)
  g <- augp(rating ~ x, od$d, likelihood = ordinal(cutpoints = cut), method = "gibbs", seed = 2,
            control = augp_control(threads = 1, iter = 1500, warmup = 300, chains = 2))
  expect_equal(unname(g$cutpoints), cut)
  expect_equal(g$engine$lik$cutpoints, cut)
  expect_equal(dim(predict(g, type = "response")), c(80L, 4L))
  # sparse: fixed cut points (learned ones: test-sparse-lik-params.R)
  sp <- augp(rating ~ x, od$d, inducing = 15, likelihood = ordinal(cutpoints = cut), control = ctl)
  ex <- augp(rating ~ x, od$d, likelihood = ordinal(cutpoints = cut), control = ctl)
  expect_lt(max(abs(fitted(sp) - fitted(ex))), 0.05)
})
