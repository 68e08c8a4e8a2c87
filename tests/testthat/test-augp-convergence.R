# Convergence warnings (one per stage that stopped early, classed, saying what to do),
# Gibbs diagnostics on identified quantities, and summaries of short chains.
cv_ns <- asNamespace("augmentedGP")

# The classes (first class) of the warnings `expr` gives, muffled.
cv_warnings <- function(expr) {
  cl <- character()
  withCallingHandlers(expr, warning = function(w) {
    cl <<- c(cl, class(w)[1])
    invokeRestart("muffleWarning")
  })
  cl
}

cv_data <- function(n = 40, seed = 3) {
  set.seed(seed)
  x <- matrix(stats::rnorm(2 * n), n)
  list(x = x, y = factor(x[, 1] + stats::rnorm(n, sd = 0.5) > 0, labels = c("no", "yes")))
}

test_that("VI stopped at maxit warns once, with the setting to raise; a converged fit does not", {
  d <- cv_data()
  expect_warning(f <- augp_fit(d$x, d$y, control = augp_control(learn_hyper = FALSE, maxit = 2,
                                                                threads = 1)),
                 class = "augp_vi_warning")
  expect_false(f$engine$converged)
  expect_output(print(f), "NOT converged: updates stopped at `maxit`")
  w <- tryCatch(augp_fit(d$x, d$y, control = augp_control(learn_hyper = FALSE, maxit = 2,
                                                          threads = 1)),
                warning = function(w) w)
  expect_s3_class(w, "augp_convergence_warning")
  expect_null(conditionCall(w))
  expect_match(conditionMessage(w), "Increase `maxit`")
  expect_identical(cv_warnings(augp_fit(d$x, d$y, control = augp_control(learn_hyper = FALSE,
                                                                         maxit = 2, threads = 1))),
                   "augp_vi_warning")
  # well converged: no convergence warning, and print says so
  expect_no_warning(f <- augp_fit(d$x, d$y, control = augp_control(threads = 1)))
  expect_true(f$engine$converged)
  expect_true(f$engine$hyper_converged)
  expect_output(print(f), "\\((coordinate ascent )?converged\\)")
})

test_that("the hyperparameter search stopped at hyper_maxit warns, and is recorded apart from CAVI", {
  d <- cv_data()
  expect_warning(f <- augp_fit(d$x, d$y, control = augp_control(hyper_maxit = 1, threads = 1)),
                 "Increase `hyper_maxit`", class = "augp_hyper_warning")
  expect_false(f$engine$hyper_converged)
  expect_true(f$engine$converged)
  s <- summary(f)
  expect_false(s$converged)
  expect_false(s$hyper_converged)
  expect_output(print(s), "hyperparameter search stopped at `hyper_maxit`")
  # fixed kernel: nothing searched
  f0 <- augp_fit(d$x, d$y, control = augp_control(learn_hyper = FALSE, threads = 1))
  expect_true(is.na(f0$engine$hyper_converged))
  # the harness reports L-BFGS-B's code: 1 (maxit) is the only non-convergence
  quad <- function(p) list(value = -sum((p - 3)^2), gradient = -2 * (p - 3))
  ctl <- augp_control(hyper_tol = 1e-10, tol = 1e-10)
  o1 <- cv_ns$hyper_optimise(quad, c(0, 0), c(-10, -10), c(10, 10), ctl, maxit = 1)
  expect_identical(o1$code, 1L)
  expect_false(o1$converged)
  o2 <- cv_ns$hyper_optimise(quad, c(0, 0), c(-10, -10), c(10, 10), ctl, maxit = 100)
  expect_identical(o2$code, 0L)
  expect_true(o2$converged)
})

test_that("sparse full-batch fits warn for CAVI and the search, not when converged", {
  d <- cv_data()
  expect_identical(cv_warnings(augp_fit(d$x, d$y, inducing = 10, seed = 1,
                                        control = augp_control(learn_hyper = FALSE, maxit = 2,
                                                               threads = 1))),
                   "augp_vi_warning")
  expect_identical(cv_warnings(augp_fit(d$x, d$y, inducing = 10, seed = 1,
                                        control = augp_control(hyper_maxit = 1, threads = 1))),
                   "augp_hyper_warning")
  expect_no_warning(f <- augp_fit(d$x, d$y, inducing = 10, seed = 1,
                                  control = augp_control(threads = 1)))
  expect_true(f$engine$converged)
  expect_true(f$engine$hyper_converged)
})

test_that("likelihood parameters at their cap warn with what to do", {
  d <- iris[c(1:10, 51:60, 101:110), ]
  # at prior mean 0 the weights take more than two rounds to converge here
  lik <- logistic_softmax(learn_theta = TRUE, prior_mean = 0)
  w <- cv_warnings(f <- augp(Species ~ Petal.Length, d, likelihood = lik,
                             control = augp_control(threads = 1, maxit = 2)))
  expect_true("augp_lik_params_warning" %in% w)
  expect_identical(sum(w == "augp_lik_params_warning"), 1L)
  expect_false(f$engine$param_converged)
  expect_equal(f$engine$param_rounds, 2L)
  msg <- NULL
  withCallingHandlers(augp(Species ~ Petal.Length, d, likelihood = lik,
                           control = augp_control(threads = 1, maxit = 2)),
                      augp_convergence_warning = function(w) {
                        if (inherits(w, "augp_lik_params_warning")) msg <<- conditionMessage(w)
                        invokeRestart("muffleWarning")
                      })
  expect_match(msg, "class weights.*after 2 rounds.*Increase `maxit`")
  expect_no_warning(f <- augp(Species ~ Petal.Length, d, likelihood = lik,
                              control = augp_control(threads = 1)))
  expect_true(f$engine$param_converged)
})

test_that("the SVI trend rule flags a clearly rising ELBO only", {
  set.seed(1)
  flat <- -1000 + stats::rnorm(50, sd = 5)
  expect_false(cv_ns$svi_trend(flat, 25)$rising)
  rising <- -1000 + 2 * seq_len(50) + stats::rnorm(50, sd = 5)
  tr <- cv_ns$svi_trend(rising, 25)
  expect_true(tr$rising)
  expect_equal(tr$rise, 48, tolerance = 0.3)
  # significant but immaterial (below 0.1% of the ELBO over the window): not flagged
  expect_false(cv_ns$svi_trend(-1000 + 0.01 * seq_len(50), 25)$rising)
  # too few steps for a trend
  expect_true(is.na(cv_ns$svi_trend(rising[1:5], 25)$rising))
})

test_that("an SVI fit started from the prior and stopped early warns; print says so", {
  set.seed(4)
  n <- 600
  x <- matrix(stats::rnorm(2 * n), n)
  y <- factor(2 * x[, 1] + stats::rnorm(n, sd = 0.3) > 0, labels = c("no", "yes"))
  # small steps (rho_t = (t + 200)^-1) from the prior: the ELBO is still rising
  ctl <- augp_control(learn_hyper = FALSE, hyper_subsample = 0, batch_size = 50,
                      svi_epochs = 1, step_tau = 200, step_kappa = 1, threads = 1)
  expect_identical(cv_warnings(f <- augp_fit(x, y, inducing = 10, control = ctl, seed = 1)),
                   "augp_svi_warning")
  expect_true(f$engine$svi_trend$rising)
  expect_output(print(f), "ELBO still rising")
  # warm-started from the subsample fit (the default), three epochs: no warning
  expect_no_warning(f <- augp_fit(x, y, inducing = 10, seed = 1,
                                  control = augp_control(batch_size = 50, svi_epochs = 3,
                                                         threads = 1)))
  expect_false(f$engine$svi_trend$rising)
  expect_false(grepl("rising", paste(utils::capture.output(print(f)), collapse = "\n")))
})

test_that("Gibbs chains that have not mixed warn once; long chains and tiny chains do not", {
  d <- cv_data(30)
  expect_warning(g <- augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                               control = augp_control(threads = 1, iter = 60)),
                 "Run longer chains: increase `iter`", class = "augp_mcmc_warning")
  expect_identical(cv_warnings(augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                                        control = augp_control(threads = 1, iter = 60))),
                   "augp_mcmc_warning")
  # long enough: R-hat and bulk ESS pass on the fitted probabilities
  expect_no_warning(g <- augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                                  control = augp_control(threads = 1, iter = 3000)))
  e <- cv_ns$mcmc_extremes(g$engine$mcmc)
  expect_lt(e$rhat, cv_ns$MCMC_RHAT_MAX)
  expect_gte(e$ess_bulk, 100 * 2)
  expect_output(print(g), "Convergence \\(fitted response means at 30 training point")
  # 2 draws per chain: no warning at fit time, and a summary without base-R warnings
  expect_no_warning(g2 <- augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                                   control = augp_control(threads = 1, iter = 4, warmup = 2)))
  expect_no_warning(s2 <- summary(g2))
  expect_no_warning(out <- utils::capture.output(print(s2), print(g2)))
  out <- paste(out, collapse = "\n")
  expect_match(out, "too few draws for diagnostics")
  expect_false(grepl("Inf|NaN|NA", out))
  # one chain of 3 draws
  g3 <- augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                 control = augp_control(threads = 1, iter = 4, warmup = 1, chains = 1))
  expect_no_warning(utils::capture.output(print(summary(g3))))
})

test_that("summaries report max R-hat and min bulk and tail ESS of the probabilities", {
  d <- cv_data(30)
  g <- suppressWarnings(augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                                 control = augp_control(threads = 1, iter = 200)))
  s <- summary(g)
  dg <- s$diagnostics
  expect_equal(nrow(dg), 30)
  expect_identical(attr(dg, "what"), "response")
  expect_true(all(is.finite(dg$rhat) & is.finite(dg$ess_bulk) & is.finite(dg$ess_tail)))
  e <- cv_ns$mcmc_extremes(dg)
  out <- paste(utils::capture.output(print(s)), collapse = "\n")
  expect_match(out, "fitted response means at 30 training point\\(s\\)\\): max split R-hat")
  expect_match(out, sprintf("min bulk ESS %d, min tail ESS %d", round(e$ess_bulk), round(e$ess_tail)))
  # the values are posterior's, on the probabilities (not on the latent values)
  p <- stats::plogis(g$engine$draws[, , 7])
  expect_equal(dg$rhat[7], posterior::rhat(p))
  expect_equal(dg$ess_bulk[7], posterior::ess_bulk(p))
  # at most about max_vars quantities, evenly spread over the points
  dg20 <- cv_ns$mcmc_diagnostics(g, max_vars = 10)
  expect_equal(nrow(dg20), 10)
  expect_equal(range(dg20$point), c(1, 30))
})

test_that("diagnostics use identified quantities: latents drifting together do not warn", {
  # logistic-softmax with 3 classes: P_k = theta_k s(f_k) / sum_j theta_j s(f_j). For
  # very negative f, s(f) ~ exp(f), so adding a common offset to the K latents leaves
  # the probabilities unchanged: the chains below differ by their offsets (latent
  # R-hat far above 1) while the probabilities are stationary.
  d <- iris[c(1:10, 51:60, 101:110), ]
  fit <- augp(Species ~ Petal.Length, d, control = augp_control(learn_hyper = FALSE, threads = 1))
  lik <- fit$engine$lik
  n <- 30
  q <- 3
  it <- 200
  set.seed(5)
  draws <- array(0, c(it, 2, n * q))
  base <- matrix(stats::rnorm(n * q, sd = 0.5), n, q) - 12
  for (ch in 1:2) {
    offset <- c(-5, 3)[ch] + cumsum(stats::rnorm(it, sd = 0.05))
    for (s in seq_len(it)) {
      draws[s, ch, ] <- base + stats::rnorm(n * q, sd = 0.3) + offset[s]
    }
  }
  eng <- list(draws = draws, lik = lik, method = "gibbs", control = fit$control)
  latent <- cv_ns$mcmc_diagnostics(draws)
  expect_gt(max(latent$rhat), 1.5)
  resp <- cv_ns$mcmc_diagnostics(eng)
  expect_equal(nrow(resp), n * 3)
  expect_lt(max(resp$rhat), cv_ns$MCMC_RHAT_MAX)
  expect_no_warning(cv_ns$engine_check_convergence(eng))
  # the same probabilities with chains that disagree do warn
  draws2 <- draws
  draws2[, 2, seq_len(n)] <- draws2[, 2, seq_len(n)] + 1
  eng$draws <- draws2
  expect_warning(cv_ns$engine_check_convergence(eng), class = "augp_mcmc_warning")
})

test_that("multi-chain Gibbs through future warns once, on the combined draws", {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  d <- cv_data(30)
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  ctl <- augp_control(threads = 1, iter = 60, chains = 3, parallel = "future")
  w <- cv_warnings(g <- augp_fit(d$x, d$y, method = "gibbs", seed = 1, control = ctl))
  expect_identical(w, "augp_mcmc_warning")
  expect_identical(attr(g$engine$mcmc, "chains"), 3L)
  expect_identical(g$engine$draws,
                   suppressWarnings(augp_fit(d$x, d$y, method = "gibbs", seed = 1,
                                             control = augp_control(threads = 1, iter = 60,
                                                                    chains = 3)))$engine$draws)
})

test_that("the C++ split R-hat and bulk ESS equal posterior's", {
  set.seed(4)
  S <- 301
  a <- array(stats::rnorm(S * 4 * 5), c(S, 4, 5))
  a[, , 2] <- apply(a[, , 2], 2, cumsum) / 10              # slow chains
  a[, , 3] <- round(a[, , 3])                               # ties
  a[, , 4] <- a[, , 4] + rep(c(0, 0, 0, 2), each = S)       # one chain apart
  a[, , 5] <- 0.5                                           # constant: NA
  for (s in c(S, S - 1)) {
    b <- a[seq_len(s), , , drop = FALSE]
    out <- cv_ns$.mcmc_rhat_ess_cpp(b)
    ref <- t(vapply(1:5, function(k) {
      m <- b[, , k]
      if (k == 5) return(c(NA_real_, NA_real_))
      suppressWarnings(c(posterior::rhat(m), posterior::ess_bulk(m)))
    }, numeric(2)))
    expect_equal(out, ref, tolerance = 1e-10)
    # quantities spread over threads: the same values
    big <- b[, , rep(1:5, 8), drop = FALSE]
    expect_identical(cv_ns$.mcmc_rhat_ess_cpp(big, 2L), out[rep(1:5, 8), ])
  }
  # capped short chains: posterior caps tau at 1 / log10(S M)
  sh <- array(rep(c(1, -1), 20), c(10, 4, 1)) + array(stats::rnorm(40, 0, 1e-3), c(10, 4, 1))
  expect_equal(cv_ns$.mcmc_rhat_ess_cpp(sh)[1, 2],
               suppressWarnings(posterior::ess_bulk(sh[, , 1])), tolerance = 1e-10)
})

test_that("the fit's diagnostics without the tail ESS equal those of the response-mean draws", {
  d <- cv_data(30)
  g <- suppressWarnings(augp_fit(d$x, d$y, method = "gibbs", seed = 2,
                                 control = augp_control(threads = 2, iter = 80, chains = 3)))
  eng <- g$engine
  lik <- cv_ns$lik_with_draws(eng)
  P <- cv_ns$mcmc_response_draws(eng$draws, lik, max_vars = 7)
  pts <- attr(P, "points")
  expect_length(pts, 7L)
  # the response means of the chosen points, draw by draw
  expect_equal(P[, , 3], stats::plogis(eng$draws[, , pts[3]]), tolerance = 1e-12)
  ref <- cv_ns$.mcmc_rhat_ess_cpp(P, 1L)
  for (th in 1:2) {
    expect_identical(cv_ns$.mcmc_response_rhat_ess_cpp(lik, eng$draws, as.integer(pts), th), ref)
  }
  full <- cv_ns$mcmc_diagnostics(eng, max_vars = 7)
  short <- cv_ns$mcmc_diagnostics(eng, max_vars = 7, tail = FALSE)
  expect_identical(short$rhat, full$rhat)
  expect_identical(short$ess_bulk, full$ess_bulk)
  expect_identical(short$point, full$point)
  expect_identical(attributes(short)[c("iterations", "chains", "reliable", "what")],
                   attributes(full)[c("iterations", "chains", "reliable", "what")])
})
