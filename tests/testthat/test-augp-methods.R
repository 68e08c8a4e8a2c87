test_that("methods return the right shapes and classes (VI)", {
  d <- augp_toy()
  # refine = FALSE: elbo() is then the augmented bound the fit maximised (refined fits:
  # test-cvi-refine.R)
  fit <- augp(y ~ x1 + x2, d, control = augp_quick(refine = FALSE))
  expect_output(print(fit), "Augmented GP classifier")
  s <- summary(fit)
  expect_s3_class(s, "summary.augp")
  expect_output(print(s), "Training accuracy")
  expect_true(s$accuracy >= 0 && s$accuracy <= 1)
  expect_true(s$logloss > 0)
  expect_length(fitted(fit), 40)
  expect_length(fitted(fit, type = "link"), 40)
  expect_identical(nobs(fit), 40L)
  # the ELBO under its own name, never as logLik (nor AIC/BIC)
  expect_error(logLik(fit), "elbo\\(fit\\)")
  expect_error(AIC(fit), "logLik\\(\\) is not defined")
  expect_true(is.finite(elbo(fit)))
  expect_equal(elbo(fit), fit$engine$elbo[length(fit$engine$elbo)])
  expect_true(is.numeric(coef(fit)) && all(coef(fit) > 0) && !is.null(names(coef(fit))))
  # variational fits give draws from q(f) (test-augp-draws.R)
  expect_equal(posterior::ndraws(posterior::as_draws_array(fit, ndraws = 10)), 10)
})

test_that("Gibbs fits give draws, diagnostics and conversions", {
  d <- augp_toy(30)
  # short chains: the convergence warning is expected (test-augp-convergence.R)
  fit <- suppressWarnings(augp(y ~ x1, d, method = "gibbs", seed = 1,
                               control = augp_control(iter = 120, warmup = 60, chains = 2,
                                                      threads = 1)),
                          classes = "augp_convergence_warning")
  expect_equal(dim(fit$engine$draws), c(60L, 2L, 30L))
  s <- summary(fit)
  expect_output(print(s), "R-hat")
  expect_equal(nrow(s$diagnostics), 30)
  expect_error(elbo(fit), "Gibbs fit")
  # same seed, same fit
  fit2 <- suppressWarnings(augp(y ~ x1, d, method = "gibbs", seed = 1,
                                control = augp_control(iter = 120, warmup = 60, chains = 2,
                                                       threads = 1)),
                           classes = "augp_convergence_warning")
  expect_identical(fit$engine$draws, fit2$engine$draws)
  skip_if_not_installed("posterior")
  da <- posterior::as_draws_array(fit)
  expect_s3_class(da, "draws_array")
  expect_equal(posterior::ndraws(da), 120)
  expect_equal(posterior::variables(da)[1:2], c("f[1]", "f[2]"))
  expect_s3_class(posterior::as_draws_df(fit), "draws_df")
  skip_if_not_installed("coda")
  ml <- coda::as.mcmc.list(fit)
  expect_s3_class(ml, "mcmc.list")
  expect_length(ml, 2)
  expect_equal(dim(ml[[1]]), c(60L, 30L))
})

test_that("verbose fits report what they do", {
  d <- augp_toy(20)
  msgs <- capture_messages(augp(y ~ x1, d, control = augp_quick(verbose = TRUE)))
  expect_match(msgs[1], "augp: variational inference on 20 observations")
})

test_that("summaries of large Gibbs fits check a subset of the latent values", {
  set.seed(1)
  dr <- array(rnorm(50 * 2 * 300), c(50, 2, 300))
  dg <- mcmc_diagnostics(dr, max_vars = 20)
  expect_equal(nrow(dg), 20)
  expect_true(all(dg$rhat < 1.2))
})
