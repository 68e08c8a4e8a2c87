# The Bayesian workflow of augp fits: rstantools generics, loo, pp_check, tidiers.

wf_data <- function(n = 40, seed = 3) {
  set.seed(seed)
  d <- data.frame(x = rnorm(n), x2 = rnorm(n))
  d$y <- factor(sin(1.5 * d$x) + rnorm(n, sd = 0.4) > 0, labels = c("no", "yes"))
  d
}
wf_d <- wf_data()
wf_vi <- augp(y ~ x, wf_d, seed = 4, control = augp_quick())
wf_gibbs <- short_gibbs(augp(y ~ x, wf_d, method = "gibbs", seed = 4,
                 control = augp_control(iter = 100, warmup = 50, chains = 2, threads = 1,
                                        hyper_maxit = 20)))
wf_iris <- local({
  set.seed(6)
  iris[sample(150, 36), ]
})
wf_soft <- augp(Species ~ Petal.Length + Petal.Width, data = wf_iris, seed = 2,
                control = augp_quick())
wf_soft_gibbs <- short_gibbs(augp(Species ~ Petal.Length + Petal.Width, data = wf_iris,
                      method = "gibbs", seed = 2, control = augp_control(learn_hyper = FALSE,
                      iter = 40, warmup = 20, chains = 2, threads = 1)))

test_that("posterior_* and log_lik have draws x observations shapes (Bernoulli)", {
  for (f in list(wf_vi, wf_gibbs)) {
    S <- if (f$method == "gibbs") 100L else 1000L
    expect_equal(dim(posterior_linpred(f)), c(S, 40L))
    expect_equal(dim(posterior_epred(f)), c(S, 40L))
    expect_equal(dim(posterior_predict(f)), c(S, 40L))
    expect_equal(dim(log_lik(f)), c(S, 40L))
    expect_equal(dim(posterior_epred(f, ndraws = 30)), c(30L, 40L))
    expect_true(all(posterior_predict(f, ndraws = 30) %in% c(0, 1)))
    ep <- posterior_epred(f, ndraws = 30)
    expect_true(all(ep > 0 & ep < 1))
    expect_true(all(log_lik(f, ndraws = 30) < 0))
    # new data: one column per row, NA for a row with a missing predictor
    nd <- data.frame(x = c(-1, NA, 0.5))
    ep_new <- posterior_epred(f, newdata = nd, ndraws = 20)
    expect_equal(dim(ep_new), c(20L, 3L))
    expect_true(all(is.na(ep_new[, 2])) && !anyNA(ep_new[, -2]))
    pp_new <- posterior_predict(f, newdata = nd, ndraws = 20)
    expect_true(all(is.na(pp_new[, 2])) && all(pp_new[, -2] %in% c(0, 1)))
  }
  expect_error(posterior_epred(wf_gibbs, ndraws = 101), "100 stored draws")
  expect_error(posterior_epred(wf_gibbs, draw_ids = 0), "`draw_ids`")
  expect_error(posterior_epred(wf_vi, ndraws = 0), "`ndraws`")
})

test_that("multi-class fits follow brms: S x n x K arrays, category indices or counts", {
  for (f in list(wf_soft, wf_soft_gibbs)) {
    ep <- posterior_epred(f, ndraws = 20)
    expect_equal(dim(ep), c(20L, 36L, 3L))
    expect_equal(dimnames(ep)[[3]], levels(iris$Species))
    expect_equal(apply(ep, c(1, 2), sum), matrix(1, 20, 36), tolerance = 1e-12,
                 ignore_attr = TRUE)
    lp <- posterior_linpred(f, ndraws = 20)
    expect_equal(dim(lp), c(20L, 36L, 3L))
    pp <- posterior_predict(f, ndraws = 20)
    expect_equal(dim(pp), c(20L, 36L))
    expect_true(is.integer(pp) && all(pp %in% 1:3))
    expect_equal(attr(pp, "levels"), levels(iris$Species))
  }
  set.seed(1)
  x <- seq(0, 1, length.out = 25)
  Y <- t(sapply(x, function(s) rmultinom(1, 8, c(s, 1 - s, 1) / 2)))
  colnames(Y) <- c("a", "b", "c")
  sb <- augp_fit(x, Y, likelihood = stick_breaking(), seed = 1, control = augp_quick())
  pp <- posterior_predict(sb, ndraws = 15)
  expect_equal(dim(pp), c(15L, 25L, 3L))
  expect_equal(dimnames(pp)[[3]], c("a", "b", "c"))
  expect_true(all(apply(pp, c(1, 2), sum) == 8))
  # one trial per row: category indices
  expect_equal(dim(posterior_predict(sb, newdata = matrix(c(0.2, 0.8)), ndraws = 5)), c(5L, 2L))
  # the category counts of a stick-breaking fit: multinomial log-pmf at the draws' probabilities
  ep <- posterior_epred(sb, ndraws = 10)
  ll <- log_lik(sb, ndraws = 10)
  ref <- sapply(1:25, function(i) sapply(1:10, function(s) {
    stats::dmultinom(Y[i, ], prob = ep[s, i, ], log = TRUE)
  }))
  expect_equal(ll, ref, tolerance = 1e-10)
})

test_that("posterior_epred averages to predict(type = 'response') within Monte Carlo error", {
  # Gibbs: predict() averages over the same stored draws
  expect_equal(colMeans(posterior_epred(wf_gibbs)), unname(predict(wf_gibbs)), tolerance = 1e-10)
  ep <- apply(posterior_epred(wf_soft_gibbs), c(2, 3), mean)
  expect_equal(ep, unname(predict(wf_soft_gibbs)), tolerance = 1e-10, ignore_attr = TRUE)
  # VI: draws from q against Gauss-Hermite quadrature (Bernoulli) / predict's own draws
  S <- 4000
  ep <- posterior_epred(wf_vi, ndraws = S, seed = 9)
  se <- apply(ep, 2, stats::sd) / sqrt(S)
  expect_true(all(abs(colMeans(ep) - predict(wf_vi)) < 5 * se + 1e-4))
  eps <- posterior_epred(wf_soft, ndraws = S, seed = 9)
  se <- apply(eps, c(2, 3), stats::sd) / sqrt(S)
  # predict() averages over pred_draws = 1000 draws of its own: both errors count
  expect_true(all(abs(apply(eps, c(2, 3), mean) - predict(wf_soft)) < 5 * se * sqrt(1 + S / 1000) + 1e-4))
  # at new data
  nd <- data.frame(x = c(-1.5, 0, 1.5))
  ep_new <- posterior_epred(wf_vi, newdata = nd, ndraws = S, seed = 2)
  se <- apply(ep_new, 2, stats::sd) / sqrt(S)
  expect_true(all(abs(colMeans(ep_new) - predict(wf_vi, nd)) < 5 * se + 1e-4))
  ep_new <- posterior_epred(wf_gibbs, newdata = nd)
  se <- apply(ep_new, 2, stats::sd) / sqrt(100)
  expect_true(all(abs(colMeans(ep_new) - predict(wf_gibbs, nd)) < 5 * se + 1e-4))
})

test_that("posterior_linpred(transform = TRUE) is posterior_epred, the inverse link of linpred", {
  for (f in list(wf_vi, wf_gibbs)) {
    expect_identical(posterior_linpred(f, transform = TRUE, ndraws = 50, seed = 5),
                     posterior_epred(f, ndraws = 50, seed = 5))
    expect_equal(posterior_epred(f, ndraws = 50, seed = 5),
                 stats::plogis(posterior_linpred(f, ndraws = 50, seed = 5)), tolerance = 1e-12)
  }
  expect_identical(posterior_linpred(wf_soft, transform = TRUE, ndraws = 5),
                   posterior_epred(wf_soft, ndraws = 5))
  # the latent draws of a Gibbs fit are its stored draws, chain after chain
  lp <- posterior_linpred(wf_gibbs)
  expect_equal(lp[1:50, ], wf_gibbs$engine$draws[, 1, ])
  expect_equal(lp[51:100, ], wf_gibbs$engine$draws[, 2, ])
  expect_equal(posterior_linpred(wf_gibbs, draw_ids = c(3, 70)), lp[c(3, 70), ])
  # draw_ids of a VI fit pick from the sequence of draws the seed fixes
  expect_equal(posterior_linpred(wf_vi, draw_ids = c(2, 5), seed = 8),
               posterior_linpred(wf_vi, ndraws = 6, seed = 8)[c(2, 5), ])
})

test_that("log_lik is the binomial or categorical log-pmf of the observed response at the draws", {
  y <- as.integer(wf_d$y) - 1
  for (f in list(wf_vi, wf_gibbs)) {
    F <- posterior_linpred(f, ndraws = 40, seed = 1)
    ref <- stats::dbinom(rep(y, each = 40), 1, stats::plogis(F), log = TRUE)
    expect_equal(log_lik(f, ndraws = 40, seed = 1), matrix(ref, 40), tolerance = 1e-12)
  }
  # binomial counts: the binomial coefficient is included
  set.seed(2)
  d <- data.frame(x = seq(-2, 2, length.out = 30))
  d$tr <- rep(c(3, 5, 8), 10)
  d$s <- stats::rbinom(30, d$tr, stats::plogis(d$x))
  fb <- augp(cbind(s, tr - s) ~ x, d, seed = 1, control = augp_quick())
  F <- posterior_linpred(fb, ndraws = 20)
  ref <- stats::dbinom(rep(d$s, each = 20), rep(d$tr, each = 20), stats::plogis(F), log = TRUE)
  expect_equal(log_lik(fb, ndraws = 20), matrix(ref, 20), tolerance = 1e-10)
  # posterior_predict keeps the trials of each row
  pp <- posterior_predict(fb, ndraws = 50)
  expect_true(all(pp <= rep(d$tr, each = 50)) && all(pp >= 0))
  # logistic-softmax: log of the probability of the observed class
  cls <- as.integer(wf_iris$Species)
  for (f in list(wf_soft, wf_soft_gibbs)) {
    ep <- posterior_epred(f, ndraws = 20, seed = 3)
    ref <- sapply(seq_along(cls), function(i) log(ep[, i, cls[i]]))
    expect_equal(log_lik(f, ndraws = 20, seed = 3), ref, tolerance = 1e-10)
  }
})

test_that("log_lik at new data encodes the response with the fit's levels", {
  ll <- log_lik(wf_vi, ndraws = 30, seed = 4)
  # the training rows as new data: the same marginals, the same normals
  expect_equal(log_lik(wf_vi, newdata = wf_d, ndraws = 30, seed = 4), ll, tolerance = 1e-6)
  # a subset holding one class only still uses both levels of the fit
  yes <- which(wf_d$y == "yes")[1:3]
  ll_yes <- log_lik(wf_vi, newdata = wf_d[yes, ], ndraws = 30, seed = 4)
  ep <- posterior_epred(wf_vi, newdata = wf_d[yes, ], ndraws = 30, seed = 4)
  expect_equal(ll_yes, log(ep), tolerance = 1e-10)
  ll_soft <- log_lik(wf_soft, newdata = wf_iris[1:4, ], ndraws = 10, seed = 4)
  ep <- posterior_epred(wf_soft, newdata = wf_iris[1:4, ], ndraws = 10, seed = 4)
  cls <- as.integer(wf_iris$Species[1:4])
  expect_equal(ll_soft, sapply(1:4, function(i) log(ep[, i, cls[i]])), tolerance = 1e-10)
  bad <- wf_d[1:3, ]
  bad$y <- factor(c("no", "maybe", "yes"))
  expect_error(log_lik(wf_vi, newdata = bad), "maybe")
  expect_error(log_lik(wf_vi, newdata = data.frame(x = 1)), "response")
  mfit <- augp_fit(matrix(wf_d$x), wf_d$y, control = augp_quick())
  expect_error(log_lik(mfit, newdata = matrix(1)), "formula")
})

test_that("posterior_predict's frequencies match posterior_epred", {
  S <- 3000
  for (f in list(wf_vi, wf_gibbs)) {
    S_f <- if (f$method == "gibbs") 100 else S
    pp <- posterior_predict(f, ndraws = if (f$method == "gibbs") NULL else S, seed = 7)
    ep <- posterior_epred(f, ndraws = if (f$method == "gibbs") NULL else S, seed = 7)
    p <- colMeans(ep)
    expect_true(all(abs(colMeans(pp) - p) < 5 * sqrt(p * (1 - p) / S_f) + 1e-3))
  }
  pp <- posterior_predict(wf_soft, ndraws = S, seed = 7)
  p <- apply(posterior_epred(wf_soft, ndraws = S, seed = 7), c(2, 3), mean)
  freq <- sapply(1:3, function(k) colMeans(pp == k))
  expect_true(all(abs(freq - p) < 5 * sqrt(p * (1 - p) / S) + 1e-3))
})

test_that("seeds reproduce the draws and leave the session's random numbers alone", {
  set.seed(99)
  before <- .Random.seed
  a <- posterior_predict(wf_vi, ndraws = 20, seed = 1)
  b <- posterior_predict(wf_vi, ndraws = 20, seed = 1)
  d <- posterior_predict(wf_vi, ndraws = 20, seed = 2)
  e1 <- posterior_epred(wf_gibbs, ndraws = 20)
  e2 <- posterior_epred(wf_gibbs, ndraws = 20)
  l <- log_lik(wf_gibbs, newdata = wf_d[1:5, ])
  expect_identical(.Random.seed, before)
  expect_identical(a, b)
  expect_false(identical(a, d))
  expect_identical(e1, e2)
  # seed NULL: the fit's seed, so repeated calls agree
  expect_identical(posterior_epred(wf_vi, ndraws = 10), posterior_epred(wf_vi, ndraws = 10, seed = 4))
  expect_error(posterior_epred(wf_vi, seed = "a"), "`seed`")
})

test_that("loo() gives PSIS-LOO and loo_compare() ranks two kernels", {
  skip_if_not_installed("loo")
  lv <- suppressWarnings(loo::loo(wf_vi))
  expect_s3_class(lv, "psis_loo")
  expect_equal(dim(lv$pointwise)[1], 40L)
  expect_true(is.finite(lv$estimates["elpd_loo", "Estimate"]))
  lg <- suppressWarnings(loo::loo(wf_gibbs))
  expect_s3_class(lg, "psis_loo")
  # r_eff from the chains: the same as loo's own computation from the same log-likelihood
  ll <- log_lik(wf_gibbs)
  reff <- loo::relative_eff(exp(ll), chain_id = rep(1:2, each = 50))
  ref <- suppressWarnings(loo::loo(ll, r_eff = reff))
  expect_equal(lg$estimates, ref$estimates)
  lin <- augp(y ~ x, wf_d, kernel = kernel_linear(), seed = 4, control = augp_quick())
  ll_lin <- suppressWarnings(loo::loo(lin))
  cmp <- loo::loo_compare(lv, ll_lin)
  expect_s3_class(cmp, "compare.loo")
  expect_equal(nrow(cmp), 2L)
  expect_setequal(rownames(cmp), c("wf_vi", "lin"))
  expect_error(loo::loo(wf_vi, lin), "loo_compare")
})

test_that("pp_check() draws bayesplot checks", {
  skip_if_not_installed("bayesplot")
  p <- bayesplot::pp_check(wf_vi)
  expect_s3_class(p, "ggplot")
  # bars of 0/1 outcomes: y holds the observed successes
  expect_equal(sort(unique(p$data$x)), c(0, 1))
  expect_s3_class(bayesplot::pp_check(wf_gibbs, type = "stat", stat = "mean"), "ggplot")
  expect_s3_class(bayesplot::pp_check(wf_soft, ndraws = 20), "ggplot")
  g <- factor(rep(c("a", "b"), 20))
  pg <- bayesplot::pp_check(wf_vi, type = "bars_grouped", group = g, ndraws = 10)
  expect_s3_class(pg, "ggplot")
  expect_setequal(as.character(unique(pg$data$group)), c("a", "b"))
  expect_error(bayesplot::pp_check(wf_vi, type = "bars_grouped", group = "x2"), "x2")
  # binned errors: one panel per draw of the expected values (9 by default)
  pb <- bayesplot::pp_check(wf_gibbs, type = "error_binned")
  expect_s3_class(pb, "ggplot")
  expect_equal(length(unique(pb$data$rep_id)), 9L)
  expect_error(bayesplot::pp_check(wf_vi, type = "nonsense"), "available_ppc")
  expect_error(bayesplot::pp_check(wf_vi, type = "bars_grouped"), "`group`")
})

test_that("pp_check() defaults to the check that suits the response, and counts simulate one per row", {
  skip_if_not_installed("bayesplot")
  set.seed(11)
  d <- data.frame(x = seq(0, 1, length.out = 40))
  d$y <- stats::rnbinom(40, size = 4, mu = exp(1 + sin(4 * d$x)))
  d$z <- sin(4 * d$x) + stats::rnorm(40, sd = 0.2)
  ctl <- augp_control(threads = 1)
  nb <- augp(y ~ x, d, likelihood = negative_binomial(), weights = rep(c(1, 3), 20), control = ctl)
  # rootogram: its data hold the expected (tyexp) and observed (ty) frequencies per count
  p <- bayesplot::pp_check(nb, ndraws = 20, seed = 1)
  expect_true(all(c("ty", "tyexp") %in% names(p$data)))
  # frequency weights: one simulated count per row, as stats::simulate() for a Poisson glm
  sims <- simulate(nb, nsim = 400, seed = 2)
  expect_equal(dim(sims), c(40, 400))
  ratio <- mean(as.matrix(sims[rep(c(FALSE, TRUE), 20), ])) /
    mean(as.matrix(sims[rep(c(TRUE, FALSE), 20), ]))
  expect_lt(abs(log(ratio)), 0.3)
  # (type-II: on these data the averaging over the kernel hyperparameters warns that their
  # posterior is far from Gaussian, and the check here is of the simulations)
  po <- augp(y ~ x, d, likelihood = poisson_logistic(), weights = rep(c(1, 3), 20),
             control = augp_control(threads = 1, integrate_hyper = FALSE))
  ps <- as.matrix(simulate(po, nsim = 5, seed = 3))
  expect_true(all(ps == round(ps)))
  expect_true(all(c("ty", "tyexp") %in% names(bayesplot::pp_check(po, ndraws = 20)$data)))
  # a continuous response: overlaid densities (bars would need whole numbers)
  ga <- augp(z ~ x, d, control = ctl)
  # augment(): the observed response minus the fitted mean, as residuals(type = "response")
  au <- augment(ga)
  expect_equal(au$.resid, unname(as.numeric(residuals(ga, type = "response"))))
  expect_equal(au$.resid, d$z - au$.fitted)
  pg <- bayesplot::pp_check(ga, ndraws = 10, seed = 1)
  expect_s3_class(pg, "ggplot")
  expect_true(any(vapply(pg$layers, function(l) inherits(l$geom, "GeomDensity") ||
                                       inherits(l$stat, "StatDensity"), logical(1))))
})

test_that("tidy, glance and augment return broom-style data frames", {
  td <- tidy(wf_vi)
  expect_s3_class(td, "data.frame")
  expect_named(td, c("term", "estimate", "component"))
  expect_equal(td$estimate, unname(coef(wf_vi)))
  ts <- tidy(wf_soft)
  expect_equal(ts$term[ts$component == "likelihood"], paste0("theta[", levels(iris$Species), "]"))
  gl <- glance(wf_vi)
  expect_equal(nrow(gl), 1L)
  expect_equal(gl$nobs, 40L)
  expect_equal(gl$elbo, elbo(wf_vi))
  expect_true(is.na(gl$ndraws))
  gg <- glance(wf_gibbs)
  expect_equal(names(gg), names(gl))
  expect_equal(gg$ndraws, 100L)
  expect_true(is.na(gg$elbo) && gg$rhat_max > 0.9)
  au <- augment(wf_vi)
  expect_equal(nrow(au), 40L)
  expect_equal(au$.fitted, unname(predict(wf_vi)))
  expect_equal(au$.resid, (as.integer(wf_d$y) - 1) - au$.fitted)
  au2 <- augment(wf_vi, se_fit = TRUE, interval = "credible")
  expect_true(all(c(".se.fit", ".lower", ".upper") %in% names(au2)))
  expect_true(all(au2$.lower <= au2$.fitted & au2$.fitted <= au2$.upper))
  an <- augment(wf_vi, newdata = data.frame(x = c(0, 1)))
  expect_named(an, c("x", ".fitted"))
  as <- augment(wf_soft)
  expect_true(all(paste0(".fitted_", levels(iris$Species)) %in% names(as)))
  expect_equal(unname(as.matrix(as[paste0(".fitted_", levels(iris$Species))])),
               unname(predict(wf_soft)))
  obs <- unname(1 * outer(as.integer(wf_iris$Species), 1:3, "=="))
  expect_equal(unname(as.matrix(as[paste0(".resid_", levels(iris$Species))])),
               unname(obs - predict(wf_soft)))
  expect_error(augment(wf_vi, data = wf_d[1:3, ]), "one row per observation")
})

test_that("Gibbs draws at new inputs are predicted for the requested draws only, each with its own kernel", {
  set.seed(1)
  n <- 30
  d <- data.frame(x = runif(n, 0, 10))
  d$y <- sin(d$x) + rnorm(n, 0, 0.3)
  f <- suppressWarnings(augp(y ~ x, d, method = "gibbs", seed = 2,
                             control = augp_control(sample_hyper = TRUE, chains = 2, iter = 300,
                                                    threads = 2)))
  th <- f$engine$theta
  lv <- matrix(th, dim(th)[1] * dim(th)[2], dim(th)[3])[, grepl("\\.variance$", dimnames(th)[[3]])]
  ids <- c(which.max(lv), which.min(lv))
  expect_gt(lv[ids[1]] - lv[ids[2]], 1)
  # far from the data (and from each other) f* is independent N(mean0, variance of that draw)
  far <- data.frame(x = 1000 + 50 * seq_len(300))
  P <- posterior_linpred(f, newdata = far, draw_ids = ids)
  expect_equal(dim(P), c(2L, 300L))
  expect_lt(abs(log(var(P[1, ]) / var(P[2, ])) - (lv[ids[1]] - lv[ids[2]])), 0.5)
  # at training inputs f* is the stored draw of f (up to the jitter)
  near <- posterior_linpred(f, newdata = d[1:3, , drop = FALSE], draw_ids = ids)
  expect_equal(near, posterior_linpred(f, draw_ids = ids)[, 1:3], tolerance = 0.02,
               ignore_attr = TRUE)
  # the same seed gives the same subset draws; ndraws picks distinct stored draws
  expect_identical(posterior_linpred(f, newdata = far[1:5, , drop = FALSE], ndraws = 7, seed = 4),
                   posterior_linpred(f, newdata = far[1:5, , drop = FALSE], ndraws = 7, seed = 4))
  expect_equal(dim(log_lik(f, newdata = d[1:4, ], ndraws = 7)), c(7L, 4L))
})
