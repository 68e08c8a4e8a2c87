# Fitting GP multinomial models with the stick-breaking likelihood: engine level
# (augp_engine with an engine likelihood list) and front end (augp / augp_fit).

sb_ns <- asNamespace("augmentedGP")
sb_engine <- function(...) sb_ns$augp_engine(...)

# smooth true probability curves for K = 3 on [0, 1]
sb_truth <- function(x) {
  P <- cbind(0.2 + 0.4 * x, 0.3 + 0.15 * sin(2 * pi * x), 0)
  P[, 3] <- 1 - P[, 1] - P[, 2]
  P
}

sb_sim <- function(n, trials, seed) {
  set.seed(seed)
  x <- sort(stats::runif(n))
  P <- sb_truth(x)
  Y <- t(apply(P, 1, function(p) stats::rmultinom(1, trials, p)))
  colnames(Y) <- c("a", "b", "c")
  list(x = x, P = P, Y = Y)
}

# posterior mean probabilities under independent Gaussian marginals (VI)
sb_prob_mc <- function(m, v, S = 400, seed = 1) {
  set.seed(seed)
  acc <- 0
  for (s in seq_len(S)) {
    acc <- acc + pi_SB(m + sqrt(v) * matrix(stats::rnorm(length(m)), nrow(m))) / S
  }
  acc
}

test_that("VI recovers smooth probability curves (engine)", {
  d <- sb_sim(80, 20, 1)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  fit <- sb_engine(matrix(d$x), kernel = kernel_se(), method = "vi", lik = lik,
                   mean0 = sb_prior_mean(3), control = list(threads = 2))
  expect_equal(dim(fit$mean), c(80L, 2L))
  P <- sb_prob_mc(fit$mean, fit$var)
  # tolerance: mean absolute error 0.04, worst point 0.15 (20 trials per point;
  # the binomial standard error of one point is about 0.1)
  expect_lt(mean(abs(P - d$P)), 0.04)
  expect_lt(max(abs(P - d$P)), 0.15)
})

test_that("the CAVI ELBO never decreases for a fixed kernel", {
  d <- sb_sim(60, 5, 2)
  d$Y[c(3, 10), ] <- 0 # rows with no counts are allowed at the engine level
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  fit <- sb_engine(matrix(d$x), kernel = kernel_se(variance = 2, lengthscale = 0.2),
                   method = "vi", lik = lik, mean0 = sb_prior_mean(3),
                   control = list(learn_hyper = FALSE, threads = 2, tol = 1e-12, maxit = 60))
  expect_gt(length(fit$elbo), 5)
  expect_true(all(diff(fit$elbo) >= -1e-9 * abs(fit$elbo[-1])))
  expect_true(all(is.finite(fit$elbo)))
})

test_that("Gibbs matches an independent importance sampler on a tiny problem", {
  # 3 inputs, K = 3: the posterior factorises over the two sticks; self-normalised
  # importance sampling from the prior is an independent reference.
  x <- c(0, 0.5, 1.2)
  Y <- rbind(c(3, 1, 0), c(0, 2, 2), c(1, 0, 4))
  kern <- kernel_se(variance = 1.5, lengthscale = 0.7)
  Kx <- kernel_matrix(kern, matrix(x)) + diag(1e-8, 3)
  mu0 <- sb_prior_mean(3)
  set.seed(42)
  S <- 40000
  L <- t(chol(Kx))
  ref_mean <- ref_sd <- matrix(0, 3, 2)
  rest <- rowSums(Y)
  for (k in 1:2) {
    Fk <- mu0[k] + t(L %*% matrix(stats::rnorm(3 * S), 3))
    lw <- rowSums(sapply(1:3, function(i) stats::dbinom(Y[i, k], rest[i], stats::plogis(Fk[, i]),
                                                        log = TRUE)))
    w <- exp(lw - max(lw))
    w <- w / sum(w)
    ref_mean[, k] <- colSums(w * Fk)
    ref_sd[, k] <- sqrt(colSums(w * Fk^2) - ref_mean[, k]^2)
    rest <- rest - Y[, k]
  }
  g <- sb_engine(matrix(x), kernel = kern, method = "gibbs",
                 lik = list(type = "stick_breaking", q = 2L, Y = Y), mean0 = mu0,
                 control = list(learn_hyper = FALSE, iter = 3200, warmup = 200, chains = 2,
                                threads = 2), seed = 11)
  expect_equal(dim(g$draws), c(3000L, 2L, 6L))
  # Monte Carlo error: generous 0.08 posterior sd (effective sample sizes in the
  # thousands for both samplers)
  expect_lt(max(abs(g$mean - ref_mean) / ref_sd), 0.08)
  expect_lt(max(abs(sqrt(g$var) / ref_sd - 1)), 0.08)
})

test_that("VI and Gibbs agree on a small problem; seeds and threads", {
  d <- sb_sim(30, 10, 3)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  kern <- kernel_se(variance = 1, lengthscale = 0.3)
  vi <- sb_engine(matrix(d$x), kernel = kern, method = "vi", lik = lik, mean0 = sb_prior_mean(3),
                  control = list(learn_hyper = FALSE, threads = 2))
  ctl <- list(learn_hyper = FALSE, iter = 900, warmup = 100, chains = 2, threads = 2)
  g <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                 mean0 = sb_prior_mean(3), control = ctl, seed = 5)
  expect_lt(max(abs(g$mean - vi$mean) / sqrt(g$var)), 0.3)
  Pg <- matrix(g$draws, ncol = 60) # (iter * chains) x (n * q)
  Pg_mean <- 0
  for (s in seq_len(nrow(Pg))) Pg_mean <- Pg_mean + pi_SB(matrix(Pg[s, ], 30, 2)) / nrow(Pg)
  expect_lt(max(abs(Pg_mean - sb_prob_mc(vi$mean, vi$var))), 0.03)
  # same seed, same draws; the thread count does not matter
  g2 <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                  mean0 = sb_prior_mean(3), control = utils::modifyList(ctl, list(threads = 1)),
                  seed = 5)
  expect_identical(g$draws, g2$draws)
  g3 <- sb_engine(matrix(d$x), kernel = kern, method = "gibbs", lik = lik,
                  mean0 = sb_prior_mean(3), control = ctl, seed = 6)
  expect_false(identical(g$draws, g3$draws))
  vi1 <- sb_engine(matrix(d$x), kernel = kern, method = "vi", lik = lik,
                   mean0 = sb_prior_mean(3), control = list(learn_hyper = FALSE, threads = 1))
  expect_identical(vi$mean, vi1$mean)
})

# ---- front end -----------------------------------------------------------------

sb_data <- function(n = 40, trials = 6, seed = 8) {
  d <- sb_sim(n, trials, seed)
  data.frame(x = d$x, a = d$Y[, 1], b = d$Y[, 2], c = d$Y[, 3])
}
sb_ctl <- function(...) augp_control(hyper_maxit = 20, threads = 2, ...)

test_that("a count matrix with > 2 columns picks stick_breaking(); predictions have K columns", {
  d <- sb_data()
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  expect_s3_class(fit$likelihood, "augp_stick_breaking")
  P <- predict(fit, data.frame(x = c(0.1, 0.5, 0.9)), type = "response")
  expect_equal(dim(P), c(3L, 3L))
  expect_equal(colnames(P), c("a", "b", "c"))
  expect_equal(unname(rowSums(P)), rep(1, 3), tolerance = 1e-12)
  L <- predict(fit, data.frame(x = c(0.1, 0.5)), type = "link")
  expect_equal(dim(L), c(2L, 2L))
  cls <- predict(fit, data.frame(x = 0.5), type = "class")
  expect_true(is.factor(cls) && identical(levels(cls), c("a", "b", "c")))
  # the default prior mean is the stick-breaking one
  expect_equal(as.numeric(fit$mean0), digamma(1) - digamma(3 - 1:2))
  # expected counts
  C <- predict_counts(fit, data.frame(x = c(0.1, 0.5, 0.9)), size = c(10, 20, 30))
  expect_equal(C, P * c(10, 20, 30))
  Ct <- predict_counts(fit)
  expect_equal(rowSums(Ct), rowSums(d[, c("a", "b", "c")]), tolerance = 1e-10)
  Ci <- predict_counts(fit, data.frame(x = 0.5), size = 100, interval = "credible")
  expect_true(all(Ci$lwr <= Ci$fit & Ci$fit <= Ci$upr))
  expect_error(predict_counts(fit, data.frame(x = 0.5)), "size")
  expect_error(predict_counts(fit, data.frame(x = 0.5), size = -1), "size")
  expect_error(predict_counts(fit, data.frame(x = 0.5), size = 2.5), "size")
})

test_that("a factor response is accepted with stick_breaking(); order and prior_mean apply", {
  set.seed(4)
  x <- stats::runif(60)
  y <- factor(sample(c("lo", "mid", "hi"), 60, replace = TRUE), levels = c("lo", "mid", "hi"))
  fit <- augp_fit(x, y, likelihood = stick_breaking(), control = sb_ctl(), seed = 2)
  expect_equal(fit$levels, c("lo", "mid", "hi"))
  expect_equal(unname(rowSums(fit$y)), rep(1, 60))
  fo <- augp_fit(x, y, likelihood = stick_breaking(order = c("hi", "lo", "mid")),
                 control = sb_ctl(), seed = 2)
  expect_equal(fo$levels, c("hi", "lo", "mid"))
  expect_equal(colnames(predict(fo, matrix(0.5))), c("hi", "lo", "mid"))
  expect_equal(unname(fo$y[, 1]), as.numeric(y == "hi"))
  fi <- augp_fit(x, y, likelihood = stick_breaking(order = 3:1), control = sb_ctl(), seed = 2)
  expect_equal(fi$levels, c("hi", "mid", "lo"))
  fp <- augp_fit(x, y, likelihood = stick_breaking(prior_mean = c(-1, 0.5)),
                 control = sb_ctl(), seed = 2)
  expect_equal(as.numeric(fp$mean0), c(-1, 0.5))
  expect_error(augp_fit(x, y, likelihood = stick_breaking(order = c("hi", "lo")),
                        control = sb_ctl()), "order")
  expect_error(augp_fit(x, y, likelihood = stick_breaking(order = c("hi", "lo", "xx")),
                        control = sb_ctl()), "order")
  expect_error(augp_fit(x, y, likelihood = stick_breaking(prior_mean = 1:3), control = sb_ctl()),
               "prior_mean")
  expect_error(stick_breaking(order = c("a", "a")), "order")
  expect_error(stick_breaking(prior_mean = NA), "prior_mean")
})

test_that("rows with zero total are dropped; bad counts give clear errors naming `y`", {
  d <- sb_data()
  d[c(2, 5), c("a", "b", "c")] <- 0
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  expect_equal(fit$n, nrow(d) - 2L)
  # frequency weights multiply the counts; zero weights drop rows
  w <- rep(c(0, 2), length.out = nrow(d))
  fw <- augp_fit(d$x, as.matrix(d[, c("a", "b", "c")]), likelihood = stick_breaking(),
                 weights = w, control = sb_ctl(), seed = 1)
  kept <- w > 0 & rowSums(d[, c("a", "b", "c")]) > 0
  expect_equal(unname(fw$y), unname(2 * as.matrix(d[kept, c("a", "b", "c")])))
  x <- d$x
  Y <- as.matrix(d[, c("a", "b", "c")])
  sb <- stick_breaking()
  bad <- Y
  bad[1, 1] <- -1
  expect_error(augp_fit(x, bad, likelihood = sb), "`y`.*non-negative")
  bad <- Y
  bad[1, 1] <- 1.5
  expect_error(augp_fit(x, bad, likelihood = sb), "`y`.*whole")
  bad <- Y
  bad[1, 1] <- NA
  expect_error(augp_fit(x, bad, likelihood = sb), "`y`.*NA")
  expect_error(augp_fit(x, Y[, 1, drop = FALSE], likelihood = sb), "`y`.*single category")
  expect_error(augp_fit(x, factor(rep("a", nrow(Y))), likelihood = sb), "`y`.*single category")
  expect_error(augp_fit(x, Y * 0, likelihood = sb), "`y`.*total zero")
  only <- Y
  only[, 2:3] <- 0
  only[, 1] <- 1
  expect_error(augp_fit(x, only, likelihood = sb), "`y`.*single category")
  expect_error(augp_fit(x, list(1, 2), likelihood = sb), "`y`")
})

test_that("newdata problems give clear errors or NA rows", {
  d <- sb_data()
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  expect_error(predict(fit, data.frame(z = 1)), "newdata")
  expect_error(predict(fit, matrix(1)), "newdata")
  P <- predict(fit, data.frame(x = c(0.3, NA)))
  expect_true(all(is.na(P[2, ])) && all(!is.na(P[1, ])))
  S <- simulate(fit, nsim = 2, seed = 1, newdata = data.frame(x = c(0.3, NA)), size = 5)
  expect_true(all(is.na(S[2, , ])))
  expect_equal(unname(colSums(S[1, , ])), c(5, 5))
  expect_error(simulate(fit, nsim = 0), "nsim")
  expect_error(simulate(fit, nsim = 1, size = c(1, 2)), "size")
})

test_that("simulate() draws count tables with the right totals and moments; seeds reproduce", {
  d <- sb_data(n = 30, trials = 8)
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  s1 <- simulate(fit, nsim = 3, seed = 10)
  expect_equal(dim(s1), c(30L, 3L, 3L))
  expect_equal(dimnames(s1)[[2]], c("a", "b", "c"))
  expect_equal(apply(s1, c(1, 3), sum), matrix(8, 30, 3, dimnames = list(NULL, paste0("sim_", 1:3))))
  expect_identical(s1, simulate(fit, nsim = 3, seed = 10))
  expect_false(identical(s1, simulate(fit, nsim = 3, seed = 11)))
  # the user's random stream is left alone
  set.seed(5)
  u1 <- stats::runif(1)
  set.seed(5)
  invisible(simulate(fit, nsim = 1, seed = 99))
  expect_identical(stats::runif(1), u1)
  # posterior predictive means: average simulated counts match size x probabilities
  big <- simulate(fit, nsim = 2000, seed = 3, newdata = data.frame(x = 0.5), size = 10)
  P <- predict(fit, data.frame(x = 0.5))
  m <- rowMeans(big[1, , ])
  expect_lt(max(abs(m - 10 * P[1, ]) / sqrt(10 * P[1, ] * 4 / 2000)), 4.5)
})

test_that("Gibbs front end: same seed same fit, thread count irrelevant, simulate works", {
  d <- sb_data(n = 25, trials = 5)
  ctl <- function(th) augp_control(learn_hyper = FALSE, iter = 200, warmup = 50, chains = 2,
                                   threads = th)
  k <- kernel_se(variance = 1, lengthscale = 0.3)
  gfit <- function(th) {
    suppressWarnings(augp(cbind(a, b, c) ~ x, data = d, kernel = k, method = "gibbs",
                          control = ctl(th), seed = 7), classes = "augp_convergence_warning")
  }
  g1 <- gfit(1)
  g2 <- gfit(2)
  expect_identical(g1$engine$draws, g2$engine$draws)
  # predictions at new inputs draw the conditional part with R's RNG: seed it
  set.seed(1)
  p1 <- predict(g1, data.frame(x = 0.4))
  set.seed(1)
  expect_identical(p1, predict(g2, data.frame(x = 0.4)))
  expect_identical(predict(g1), predict(g2))
  s <- simulate(g1, nsim = 2, seed = 1, newdata = data.frame(x = c(0.2, 0.8)), size = 4)
  expect_equal(unname(apply(s, c(1, 3), sum)), matrix(4, 2, 2))
  v1 <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 7)
  v2 <- augp(cbind(a, b, c) ~ x, data = d,
             control = augp_control(hyper_maxit = 20, threads = 1), seed = 7)
  expect_identical(v1$engine$mean, v2$engine$mean)
})

test_that("simulate() also works for binary fits (factor and binomial responses)", {
  set.seed(1)
  x <- matrix(stats::rnorm(60), 30)
  y <- factor(x[, 1] + stats::rnorm(30, sd = 0.5) > 0, labels = c("no", "yes"))
  fit <- augp_fit(x, y, control = augp_control(hyper_maxit = 20, threads = 2), seed = 1)
  s <- simulate(fit, nsim = 4000, seed = 2)
  expect_equal(dim(s), c(30L, 4000L))
  expect_true(is.factor(s$sim_1) && identical(levels(s$sim_1), c("no", "yes")))
  freq <- rowMeans(vapply(s, function(v) v == "yes", logical(30)))
  p <- fitted(fit)
  expect_lt(max(abs(freq - p) / sqrt(p * (1 - p) / 4000)), 4.5)
  s2 <- simulate(fit, nsim = 2, seed = 1, newdata = x[1:4, ], size = 10)
  expect_true(all(s2$sim_1 >= 0 & s2$sim_1 <= 10))
  Yb <- cbind(stats::rbinom(30, 5, 0.3), 0)
  Yb[, 2] <- 5 - Yb[, 1]
  fb <- augp_fit(x, Yb, control = augp_control(hyper_maxit = 20, threads = 2), seed = 1)
  sb <- simulate(fb, nsim = 3, seed = 1)
  expect_true(all(as.matrix(sb) >= 0 & as.matrix(sb) <= 5))
  expect_identical(sb, simulate(fb, nsim = 3, seed = 1))
})

test_that("plots of a stick-breaking fit build (probabilities along one covariate, ELBO, trace)", {
  d <- sb_data(n = 20, trials = 4)
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  p <- ggplot2::autoplot(fit, type = "predictive", level = 0.9)
  expect_s3_class(p, "ggplot")
  built <- ggplot2::ggplot_build(p)
  expect_true(any(vapply(built$data, function(l) "ymin" %in% names(l), logical(1))))
  expect_s3_class(ggplot2::autoplot(fit, type = "elbo"), "ggplot")
  g <- suppressWarnings(augp(cbind(a, b, c) ~ x, data = d, method = "gibbs", seed = 1,
                             control = augp_control(learn_hyper = FALSE, iter = 100, warmup = 50,
                                                    chains = 1, threads = 2)),
                        classes = "augp_convergence_warning")
  expect_s3_class(ggplot2::autoplot(g, type = "trace"), "ggplot")
})

test_that("per-stick parallel Gaussian steps (n >= 150, one chain): 1 thread == 2 threads", {
  # src/parallel.h runs the sticks in parallel only for n >= 150 and, in Gibbs, when
  # chains < threads: n = 160 and chains = 1 exercise that path.
  d <- sb_sim(160, 6, 31)
  lik <- list(type = "stick_breaking", q = 2L, Y = d$Y)
  kern <- kernel_se(variance = 1, lengthscale = 0.3)
  g1 <- expect_threads_identical(function(th, method) {
    sb_engine(matrix(d$x), kernel = kern, method = method, lik = lik, mean0 = sb_prior_mean(3),
              seed = 9, control = list(learn_hyper = FALSE, threads = th, maxit = 15, chains = 1,
                                       iter = 40, warmup = 10))
  })
  expect_equal(dim(g1), c(30L, 1L, 320L))
  # the same through the front end, threads set by augp_control()
  df <- data.frame(x = d$x, a = d$Y[, 1], b = d$Y[, 2], c = d$Y[, 3])
  fe <- function(th) {
    suppressWarnings(augp(cbind(a, b, c) ~ x, data = df, kernel = kern, method = "gibbs", seed = 3,
                          control = augp_control(learn_hyper = FALSE, threads = th, chains = 1,
                                                 iter = 30, warmup = 10)),
                     classes = "augp_convergence_warning")$engine$draws
  }
  expect_identical(fe(1), fe(2))
})

test_that("predict(type = 'response') integrates over q(psi), not the plug-in pi_SB(mean)", {
  d <- sb_data(n = 30, trials = 3, seed = 12)
  k <- kernel_se(variance = 4, lengthscale = 0.2)
  fit <- augp(cbind(a, b, c) ~ x, data = d, kernel = k,
              control = augp_control(learn_hyper = FALSE, threads = 1), seed = 1)
  # extrapolation far from the data: latent variance near the prior's (4), where
  # E[pi_SB(psi)] and pi_SB(E[psi]) clearly differ
  new <- data.frame(x = c(0.5, 2, 3))
  pr <- predict(fit, newdata = new, type = "response", se.fit = TRUE)
  lk <- predict(fit, newdata = new, type = "link", se.fit = TRUE)
  S <- 40000
  set.seed(2)
  acc <- acc2 <- 0
  for (s in seq_len(S / 1000)) {
    Z <- array(stats::rnorm(1000 * 3 * 2), c(1000, 3, 2))
    for (b in seq_len(1000)) {
      P <- pi_SB(lk$fit + lk$se.fit * Z[b, , ])
      acc <- acc + P
      acc2 <- acc2 + P^2
    }
  }
  mc <- acc / S
  mc_se <- sqrt(pmax(acc2 / S - mc^2, 0) / S)
  # the package averages over control$pred_draws = 1000 draws; se.fit is their sd
  pkg_se <- pr$se.fit / sqrt(1000)
  err <- sqrt(mc_se^2 + pkg_se^2)
  expect_true(all(abs(pr$fit - mc) < 4.5 * err),
              info = paste(round((pr$fit - mc) / err, 2), collapse = " "))
  plug <- pi_SB(lk$fit)
  # at the extrapolated points the plug-in is off by far more than the MC error
  # at the extrapolated points (latent sd 2) the plug-in is off by far more than the MC
  # error (measured: 0.083 in category a against an error of about 0.01)
  gap <- abs(plug[2:3, ] - mc[2:3, ])
  expect_true(all(apply(gap, 1, max) > 6 * apply(err[2:3, ], 1, max)))
  expect_true(all(rowSums(gap) > 0.1))
})

test_that("a fit with some all-zero rows: predict, predict_counts, simulate and autoplot", {
  d <- sb_data(n = 30, trials = 5, seed = 13)
  d[c(3, 10, 17), c("a", "b", "c")] <- 0
  fit <- augp(cbind(a, b, c) ~ x, data = d, control = sb_ctl(), seed = 1)
  n_used <- 27L
  expect_equal(fit$n, n_used)
  expect_equal(fit$kept, setdiff(1:30, c(3, 10, 17)))
  P <- predict(fit)
  expect_equal(dim(P), c(n_used, 3L))
  expect_equal(unname(rowSums(P)), rep(1, n_used), tolerance = 1e-12)
  # newdata: every row of the data, zero rows included, gets a prediction
  Pn <- predict(fit, newdata = d)
  expect_equal(dim(Pn), c(30L, 3L))
  expect_equal(unname(Pn[fit$kept, ]), unname(P), tolerance = 0.03)
  expect_equal(dim(predict(fit, type = "link")), c(n_used, 2L))
  C <- predict_counts(fit)
  expect_equal(dim(C), c(n_used, 3L))
  expect_equal(unname(rowSums(C)), rep(5, n_used), tolerance = 1e-10)
  Cn <- predict_counts(fit, newdata = d, size = 7)
  expect_equal(dim(Cn), c(30L, 3L))
  s <- simulate(fit, nsim = 2, seed = 4)
  expect_equal(dim(s), c(n_used, 3L, 2L))
  expect_true(all(apply(s, c(1, 3), sum) == 5))
  sn <- simulate(fit, nsim = 2, seed = 4, newdata = d, size = 2)
  expect_equal(dim(sn), c(30L, 3L, 2L))
  p <- ggplot2::autoplot(fit, type = "predictive")
  b <- ggplot2::ggplot_build(p)
  pts <- b$data[[length(b$data)]]
  expect_equal(nrow(pts), n_used * 3L)  # observed proportions: the rows used, per category
  expect_false(anyNA(pts$y))
})
