# augp_control(kernel_search =): the kernel chosen per data set by the penalised ELBO
# among the candidates of kernel_search_candidates() (R/kernel_search.R).
ks_ns <- asNamespace("augmentedGP")
ks_ctl <- function(...) augp_control(threads = 1, ...)

# counts whose mean depends on the first of four inputs only
ks_ard_data <- function(n = 150, seed = 1) {
  set.seed(seed)
  x <- matrix(stats::rnorm(n * 4), n, dimnames = list(NULL, paste0("x", 1:4)))
  list(x = x, y = stats::rnbinom(n, size = 5, mu = exp(1 + sin(2 * x[, 1]))))
}

# counts on one input with a smooth (log-linear) mean
ks_smooth_data <- function(n = 100, seed = 1) {
  set.seed(seed)
  x <- seq(-2, 2, length.out = n)
  list(x = matrix(x, dimnames = list(NULL, "x")),
       y = stats::rnbinom(n, size = 5, mu = exp(1 + 0.5 * x)))
}

test_that("an input-selective mean: the search picks an ARD kernel, and the fit is the direct fit with it", {
  d <- ks_ard_data()
  fit <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 3, control = ks_ctl())
  tab <- fit$kernel_search
  expect_s3_class(tab, "data.frame")
  expect_identical(tab$kernel, c("squared exponential", "squared exponential with ARD",
                                 "Matern 3/2", "Matern 5/2", "Matern 3/2 with ARD"))
  expect_identical(tab$hyperparameters, c(2L, 5L, 2L, 2L, 5L))
  chosen <- tab$kernel[tab$chosen]
  expect_length(chosen, 1L)
  expect_match(chosen, "with ARD$")
  expect_false(fit$kernel_default)
  k <- if (chosen == "squared exponential with ARD") kernel_se(lengthscale = rep(1, 4)) else
    kernel_matern(nu = 1.5, lengthscale = rep(1, 4))
  direct <- augp_fit(d$x, d$y, likelihood = negative_binomial(), kernel = k, seed = 3,
                     control = ks_ctl())
  expect_null(direct$kernel_search)
  xnew <- matrix(stats::rnorm(40), 10)
  expect_equal(predict(fit, xnew, type = "link"), predict(direct, xnew, type = "link"),
               tolerance = 1e-8)
  expect_equal(elbo(fit), elbo(direct), tolerance = 1e-10)
  expect_equal(coef(fit), coef(direct), tolerance = 1e-8)
  expect_equal(fit$r, direct$r, tolerance = 1e-10)
  expect_equal(tab$elbo[tab$chosen], elbo(direct), tolerance = 1e-10)
})

test_that("a smooth mean on one input keeps the default, and the fit equals kernel_search = FALSE's", {
  d <- ks_smooth_data()
  fit <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 2, control = ks_ctl())
  off <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 2,
                  control = ks_ctl(kernel_search = FALSE))
  tab <- fit$kernel_search
  # one input: the ARD kernels are the isotropic ones and are left out
  expect_identical(tab$kernel, c("squared exponential", "Matern 3/2", "Matern 5/2"))
  expect_identical(tab$chosen, c(TRUE, FALSE, FALSE))
  expect_true(fit$kernel_default)
  expect_null(off$kernel_search)
  xnew <- matrix(seq(-2.5, 2.5, length.out = 7))
  expect_identical(predict(fit, xnew, type = "link"), predict(off, xnew, type = "link"))
  expect_identical(elbo(fit), elbo(off))
  expect_identical(coef(fit), coef(off))
  expect_identical(fit$engine$mean, off$engine$mean)
  expect_identical(fit$r, off$r)
})

test_that("the scores are the candidates' ELBOs minus their hyperparameters, and the rule picks by them", {
  d <- ks_ard_data(n = 80, seed = 5)
  fit <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 1, control = ks_ctl())
  tab <- fit$kernel_search
  kernels <- list(kernel_se(), kernel_se(lengthscale = rep(1, 4)), kernel_matern(nu = 1.5),
                  kernel_matern(nu = 2.5), kernel_matern(nu = 1.5, lengthscale = rep(1, 4)))
  fits <- lapply(kernels, function(k) {
    augp_fit(d$x, d$y, likelihood = negative_binomial(), kernel = k, seed = 1, control = ks_ctl())
  })
  e <- vapply(fits, elbo, 0)
  # 1 nat per hyperparameter: the variance and one lengthscale, or one per input (ARD)
  np <- c(2, 5, 2, 2, 5)
  expect_equal(tab$elbo, e, tolerance = 1e-10)
  expect_equal(tab$hyperparameters, c(2L, 5L, 2L, 2L, 5L))
  expect_equal(tab$score, e - np, tolerance = 1e-10)
  s <- e - np
  want <- if (max(s[-1]) - s[1] > 1) which.max(s) else 1L
  expect_identical(which(tab$chosen), want)
  # the rule on given numbers: the default kept at a gain of exactly 1 nat, replaced above
  # it; the first of tied scores; a failed candidate (NA) left out
  tb <- ks_ns$kernel_search_table
  expect_identical(which(tb(c("a", "b"), c(2, 5), c(-100, -96))$chosen), 1L)
  expect_identical(which(tb(c("a", "b"), c(2, 5), c(-100, -95.99))$chosen), 2L)
  expect_identical(which(tb(c("a", "b", "c"), c(2, 2, 5), c(-100, -98, -95))$chosen), 2L)
  expect_identical(which(tb(c("a", "b", "c"), c(2, 2, 5), c(-100, NA, -95.5))$chosen), 3L)
  expect_identical(which(tb(c("a", "b"), c(2, NA), c(-100, NA))$chosen), 1L)
})

test_that("a Gibbs fit samples at the chosen kernel, as a direct Gibbs fit with it", {
  d <- ks_ard_data(n = 60, seed = 2)
  ctl <- ks_ctl(iter = 60, warmup = 20, chains = 1)
  fit <- suppressWarnings(augp_fit(d$x, d$y, likelihood = negative_binomial(), method = "gibbs",
                                   seed = 4, control = ctl))
  tab <- fit$kernel_search
  expect_s3_class(tab, "data.frame")
  k <- ks_ns$kernel_search_candidates(kernel_se(), 4L, colnames(d$x))[[which(tab$chosen)]]$kernel
  direct <- suppressWarnings(augp_fit(d$x, d$y, likelihood = negative_binomial(), kernel = k,
                                      method = "gibbs", seed = 4, control = ctl))
  expect_identical(fit$engine$draws, direct$engine$draws)
  expect_identical(coef(fit), coef(direct))
})

test_that("\"auto\" searches negative-binomial and Poisson-logistic fits only, with the default kernel on the exact GP", {
  d <- ks_smooth_data(n = 40)
  pl <- augp_fit(d$x, d$y, likelihood = poisson_logistic(), seed = 1,
                 control = ks_ctl(integrate_hyper = FALSE))
  expect_s3_class(pl$kernel_search, "data.frame")
  yb <- factor(d$y > stats::median(d$y))
  expect_null(augp_fit(d$x, yb, seed = 1, control = ks_ctl())$kernel_search)
  expect_null(augp_fit(d$x, log1p(d$y), likelihood = gaussian_noise(), seed = 1,
                       control = ks_ctl())$kernel_search)
  given <- augp_fit(d$x, d$y, likelihood = negative_binomial(), kernel = kernel_matern(nu = 1.5),
                    seed = 1, control = ks_ctl())
  expect_null(given$kernel_search)
  expect_false(given$kernel_default)
  sparse <- augp_fit(d$x, d$y, likelihood = negative_binomial(), inducing = 10, seed = 1,
                     control = ks_ctl())
  expect_null(sparse$kernel_search)
  fixed <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 1,
                    control = ks_ctl(learn_hyper = FALSE))
  expect_null(fixed$kernel_search)
  # "auto" up to KERNEL_SEARCH_AUTO_N observations times latent columns
  use <- function(nq, lik = negative_binomial()) {
    ks_ns$kernel_search_use("auto", lik, TRUE, sparse = FALSE, learn_kernel = TRUE,
                            exact_marginal = FALSE, sample_hyper = FALSE, nq = nq)
  }
  expect_true(use(ks_ns$KERNEL_SEARCH_AUTO_N))
  expect_false(use(ks_ns$KERNEL_SEARCH_AUTO_N + 1))
  expect_true(use(100, poisson_logistic()))
  expect_false(use(100, bernoulli_logit()))
  # TRUE searches any likelihood
  fb <- augp_fit(d$x, yb, seed = 1, control = ks_ctl(kernel_search = TRUE))
  expect_s3_class(fb$kernel_search, "data.frame")
  expect_identical(nrow(fb$kernel_search), 3L)
})

test_that("kernel_search = TRUE where the search cannot apply, and bad values, are errors naming it", {
  d <- ks_smooth_data(n = 30)
  nb <- function(..., control = ks_ctl(kernel_search = TRUE)) {
    augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 1, control = control, ...)
  }
  expect_error(nb(kernel = kernel_se()), "kernel_search = TRUE.*a kernel was given")
  expect_error(nb(inducing = 10), "kernel_search = TRUE.*sparse GP")
  expect_error(nb(control = ks_ctl(kernel_search = TRUE, learn_hyper = FALSE)),
               "kernel_search = TRUE.*not learned")
  expect_error(nb(control = ks_ctl(kernel_search = TRUE, hyper_maxit = 0)),
               "kernel_search = TRUE.*not learned")
  expect_error(nb(method = "gibbs", control = ks_ctl(kernel_search = TRUE, sample_hyper = TRUE)),
               "kernel_search = TRUE.*sample_hyper")
  expect_error(augp_fit(d$x, log1p(d$y), likelihood = gaussian_noise(), seed = 1,
                        control = ks_ctl(kernel_search = TRUE)),
               "kernel_search = TRUE.*`ard`")
  expect_error(augp(y ~ gp(x), data.frame(x = d$x[, 1], y = d$y),
                    likelihood = negative_binomial(), control = ks_ctl(kernel_search = TRUE)),
               "kernel_search = TRUE.*gp\\(\\) terms")
  expect_error(augp_control(kernel_search = "yes"), "`kernel_search` must be \"auto\", TRUE or FALSE")
  expect_error(augp_control(kernel_search = NA), "`kernel_search`")
  expect_error(augp_control(kernel_search = c(TRUE, FALSE)), "`kernel_search`")
  expect_error(augp_fit(d$x, d$y, likelihood = negative_binomial(),
                        control = list(kernel_search = 1)), "`control\\$kernel_search`")
})

test_that("print() names the kernel chosen and the rule, summary() lists the candidates", {
  d <- ks_ard_data()
  fit <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 3, control = ks_ctl())
  chosen <- fit$kernel_search$kernel[fit$kernel_search$chosen]
  out <- capture.output(print(fit))
  expect_true(any(grepl(sprintf("^Kernel: %s, chosen by the penalised ELBO among 5 candidates$",
                                chosen), out)))
  expect_true(any(grepl("chosen by the kernel search; data units", out)))
  so <- capture.output(print(summary(fit)))
  expect_true(any(grepl("chosen by the penalised ELBO among 5 candidates", so)))
  for (lab in fit$kernel_search$kernel) expect_true(any(grepl(lab, so, fixed = TRUE)))
  expect_true(any(grepl("score = ELBO - 1 nat per kernel hyperparameter", so)))
  kept <- augp_fit(ks_smooth_data()$x, ks_smooth_data()$y, likelihood = negative_binomial(),
                   seed = 2, control = ks_ctl())
  expect_true(any(grepl("^Kernel: squared exponential \\(the likelihood's default\\), kept by",
                        capture.output(print(kept)))))
  off <- augp_fit(d$x, d$y, likelihood = negative_binomial(), seed = 3,
                  control = ks_ctl(kernel_search = FALSE))
  expect_false(any(grepl("penalised ELBO", capture.output(print(off)))))
})

test_that("only the chosen candidate's warnings are given, and a failed candidate is left out", {
  cands <- list(list(label = "a", kernel = kernel_se()),
                list(label = "b", kernel = kernel_se(lengthscale = rep(1, 3))),
                list(label = "c", kernel = kernel_matern(nu = 1.5)))
  elbos <- c(a = -100, b = -90, c = NA)
  fit_one <- function(k) {
    lab <- cands[[which(vapply(cands, function(cd) identical(cd$kernel, k), TRUE))]]$label
    if (lab == "c") stop("no fit")
    warning(sprintf("warning of %s", lab), call. = FALSE)
    list(engine = list(elbo = c(-1e3, elbos[[lab]]), kernel = k), kernel_std = k)
  }
  expect_warning(res <- ks_ns$kernel_search_fit(cands, fit_one), "warning of b")
  expect_identical(res$label, "b")
  expect_identical(res$table$hyperparameters, c(2L, 4L, NA))
  expect_equal(res$table$score, c(-102, -94, NA))
  expect_identical(res$table$chosen, c(FALSE, TRUE, FALSE))
  w <- character(0)
  withCallingHandlers(ks_ns$kernel_search_fit(cands, fit_one),
                      warning = function(cnd) {
                        w <<- c(w, conditionMessage(cnd))
                        invokeRestart("muffleWarning")
                      })
  expect_identical(w, "warning of b")
  expect_message(suppressWarnings(ks_ns$kernel_search_fit(cands, fit_one, verbose = TRUE)),
                 "Kernel search: candidate 2 of 3, b")
})
