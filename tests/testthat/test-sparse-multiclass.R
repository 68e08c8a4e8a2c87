# Sparse GP with the multi-class likelihoods (logistic-softmax, stick-breaking):
# front end, exactness at Z = X, plots of sparse fits.
mc_ns <- asNamespace("augmentedGP")

test_that("augp(Species ~ ., iris, inducing = 20) fits and predicts class probabilities", {
  fit <- suppressWarnings(augp(Species ~ ., iris, inducing = 20, seed = 1,
                               control = augp_control(hyper_maxit = 3, threads = 2,
                                                      pred_draws = 200)),
                          classes = "augp_convergence_warning")
  expect_s3_class(fit$engine, "augp_sparse_engine")
  expect_equal(fit$engine$lik$type, "logistic_softmax")
  expect_equal(nrow(fit$engine$Z), 20L)
  new <- iris[c(1, 51, 101, 150), ]
  P <- predict(fit, newdata = new, type = "response")
  expect_equal(dim(P), c(4L, 3L))
  expect_identical(colnames(P), levels(iris$Species))
  expect_equal(unname(rowSums(P)), rep(1, 4), tolerance = 1e-10)
  expect_true(all(P >= 0 & P <= 1))
  Pall <- predict(fit, newdata = iris, type = "response")
  expect_equal(dim(Pall), c(150L, 3L))
  acc <- mean(levels(iris$Species)[max.col(Pall)] == iris$Species)
  expect_gt(acc, 0.9)
  cl <- predict(fit, newdata = new, type = "class")
  expect_true(all(as.character(cl) %in% levels(iris$Species)))
  expect_true(is.finite(elbo(fit)))
  expect_output(print(summary(fit)), "Categories \\(3\\)")
})

mc_check_exact <- function(lik, X, k, mean0) {
  ctl <- list(learn_hyper = FALSE, tol = 1e-13, maxit = 2000, threads = 2)
  ex <- mc_ns$augp_engine(X, kernel = k, method = "vi", lik = lik, control = ctl, mean0 = mean0)
  sp <- mc_ns$augp_sparse_engine(X, kernel = k, inducing = X, lik = lik, mean0 = mean0, seed = 1,
                                 control = c(ctl, list(jitter = ex$jitter / 1.2)))
  expect_true(sp$sparse$full_batch)
  expect_equal(sp$elbo[length(sp$elbo)], ex$elbo[length(ex$elbo)], tolerance = 1e-6)
  expect_equal(unname(sp$mean), unname(ex$mean), tolerance = 1e-5)
  expect_equal(unname(sp$var), unname(ex$var), tolerance = 1e-5)
  set.seed(41)
  Xn <- matrix(stats::rnorm(16), 8)
  pe <- mc_ns$augp_engine_predict(ex, Xn)
  ps <- mc_ns$augp_engine_predict.augp_sparse_engine(sp, Xn)
  expect_equal(unname(ps$mean), unname(pe$mean), tolerance = 1e-5)
  expect_equal(unname(ps$var), unname(pe$var), tolerance = 1e-5)
}

test_that("inducing points at the training inputs reproduce the exact multi-class fits", {
  set.seed(42)
  n <- 45
  X <- matrix(stats::rnorm(n * 2), n)
  cls <- max.col(cbind(X[, 1], -X[, 1], X[, 2]) + matrix(stats::rnorm(n * 3, sd = 0.5), n))
  Y <- diag(3)[cls, ]
  k <- kernel_se(variance = 1.2, lengthscale = 0.9)
  # logistic-softmax (K latent functions, non-default theta), bijective (K - 1), stick-breaking
  mc_check_exact(list(type = "logistic_softmax", q = 3L, Y = Y, bijective = FALSE,
                      theta = c(1, 1.5, 0.8)), X, k, mean0 = c(0.1, -0.2, 0))
  mc_check_exact(list(type = "logistic_softmax", q = 2L, Y = Y, bijective = TRUE,
                      theta = c(1, 1, 1)), X, k, mean0 = 0)
  mc_check_exact(list(type = "stick_breaking", q = 2L, Y = Y), X, k, mean0 = c(0.3, -0.1))
})

test_that("autoplot builds ELBO, predictive and latent plots for sparse fits", {
  skip_if_not_installed("ggplot2")
  set.seed(43)
  n <- 400
  d <- data.frame(x1 = stats::rnorm(n), x2 = stats::rnorm(n))
  d$y <- factor(stats::rbinom(n, 1, stats::plogis(3 * sin(d$x1))), labels = c("a", "b"))
  for (bs in list(NULL, 100)) {
    fit <- suppressWarnings(augp(y ~ x1 + x2, d, inducing = 15, seed = 1,
                                 control = augp_control(hyper_maxit = 3, threads = 2,
                                                        batch_size = bs, svi_epochs = 2)),
                            classes = "augp_convergence_warning")
    e <- ggplot2::autoplot(fit, type = "elbo")
    expect_s3_class(e, "ggplot")
    expect_equal(nrow(e$data), length(fit$engine$elbo))
    p <- ggplot2::autoplot(fit, type = "predictive", grid = 15)
    expect_s3_class(p, "ggplot")
    expect_equal(nrow(p$data), 225)
    expect_true(all(p$data$prob >= 0 & p$data$prob <= 1))
    l <- ggplot2::autoplot(fit, type = "latent")
    expect_s3_class(l, "ggplot")
    expect_equal(nrow(l$data), n)
    expect_s3_class(ggplot2::ggplot_build(p), "ggplot_built")
    expect_s3_class(ggplot2::ggplot_build(l), "ggplot_built")
    expect_s3_class(ggplot2::ggplot_build(e), "ggplot_built")
  }
  fm <- suppressWarnings(augp(Species ~ Petal.Length + Petal.Width, iris, inducing = 12, seed = 2,
                              control = augp_control(hyper_maxit = 2, threads = 2,
                                                     pred_draws = 100)),
                         classes = "augp_convergence_warning")
  pm <- ggplot2::autoplot(fm, type = "predictive", grid = 10)
  expect_s3_class(ggplot2::ggplot_build(pm), "ggplot_built")
  lm <- ggplot2::autoplot(fm, type = "latent")
  expect_s3_class(ggplot2::ggplot_build(lm), "ggplot_built")
})

test_that("the subset-level search keeps large multi-class fits accurate", {
  # 7 classes, 10 inputs, class probabilities a softmax of smooth functions of three
  # directions. Searching the kernel on subsets of a few hundred rows, or starting a
  # level's CAVI from the prior at the large kernel variance a smaller level chose, ends
  # this fit at a poor fixed point near the uniform one (test error near 0.79, Bayes
  # error 0.55): the levels must be large enough and pass q(u) up.
  K <- 7
  set.seed(77)
  dirs <- matrix(stats::rnorm(30), 10, 3)
  dirs <- sweep(dirs, 2, sqrt(colSums(dirs^2)), "/")
  sim <- function(n, seed) {
    set.seed(seed)
    X <- matrix(stats::rnorm(n * 10), n, 10)
    P <- X %*% dirs
    ang <- 2 * pi * (seq_len(K) - 1) / K
    F <- sapply(ang, function(a) 2 * cos(1.2 * P[, 1] - a) + 1.2 * sin(P[, 2] + a) * P[, 3] / 2)
    E <- exp(F - apply(F, 1, max))
    E <- E / rowSums(E)
    y <- 1L + rowSums(stats::runif(n) > t(apply(E, 1, cumsum)))
    list(X = X, y = factor(pmin(y, K), levels = seq_len(K)), p = E)
  }
  tr <- sim(6000, 118)
  te <- sim(4000, 7)
  fit <- augp_fit(tr$X, tr$y, inducing = 100, seed = 1, control = augp_control(threads = 2))
  expect_equal(fit$engine$sparse$levels, c(3000, 6000))
  P <- as.matrix(predict(fit, newdata = te$X, type = "response"))
  yi <- as.integer(te$y)
  bayes <- mean(max.col(te$p) != yi)
  expect_lt(mean(max.col(P) != yi), bayes + 0.12)
  expect_lt(-mean(log(P[cbind(seq_along(yi), yi)])), 1.55)
})
