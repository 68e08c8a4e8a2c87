# The standard R generics on augp fits (residuals, deviance, formula, ...), glm
# conventions (offsets, na.exclude, empty newdata) and the checks of bad input around
# fitting and prediction.

gen_ctl <- function(...) augp_control(hyper_maxit = 20, maxit = 50, threads = 1, ...)

test_that("residuals of a Bernoulli fit equal the hand computation, as for glm", {
  d <- augp_toy(40)
  fit <- augp(y ~ x1 + x2, d, control = gen_ctl())
  p <- as.numeric(fitted(fit))
  y <- as.numeric(d$y == "pos")
  expect_equal(unname(residuals(fit, type = "response")), y - p)
  expect_equal(unname(residuals(fit, type = "pearson")), (y - p) / sqrt(p * (1 - p)))
  dev_i <- -2 * (y * log(p) + (1 - y) * log(1 - p))
  expect_equal(unname(residuals(fit, type = "deviance")), sign(y - p) * sqrt(dev_i))
  expect_identical(residuals(fit), residuals(fit, type = "deviance"))
  expect_equal(deviance(fit), sum(dev_i))
  expect_equal(sum(residuals(fit)^2), deviance(fit))
  expect_error(residuals(fit, type = "working"), "should be one of")
})

test_that("binomial residuals use the trials; weights act as frequency weights", {
  set.seed(3)
  n <- 25
  x <- matrix(stats::rnorm(n))
  tr <- sample(2:6, n, TRUE)
  s <- stats::rbinom(n, tr, stats::plogis(x[, 1]))
  fit <- augp_fit(x, cbind(s, tr - s), control = gen_ctl())
  p <- as.numeric(fitted(fit))
  expect_equal(unname(residuals(fit, "response")), s / tr - p)
  expect_equal(unname(residuals(fit, "pearson")), (s / tr - p) / sqrt(p * (1 - p) / tr))
  xl <- function(a, b) ifelse(a > 0, a * log(a / b), 0)
  dev <- 2 * (xl(s, tr * p) + xl(tr - s, tr * (1 - p)))
  expect_equal(unname(residuals(fit, "deviance")), sign(s / tr - p) * sqrt(dev))
  expect_equal(deviance(fit), sum(dev))
  expect_equal(weights(fit), rep(1, n))
  # frequency weights: weights(fit) are the prior weights of the rows used
  d <- augp_toy(30)
  w <- rep(c(1, 2, 0), 10)
  fw <- augp(y ~ x1, d, weights = w, control = gen_ctl())
  expect_equal(weights(fw), w[w > 0])
  expect_length(residuals(fw), 20)
  pw <- as.numeric(fitted(fw))
  yw <- as.numeric(d$y[w > 0] == "pos")
  expect_equal(deviance(fw), -2 * sum(w[w > 0] * (yw * log(pw) + (1 - yw) * log(1 - pw))))
})

test_that("multi-class residuals are one column per category; deviance is multinomial", {
  set.seed(6)
  ir <- iris[sample(150, 36), ]
  fit <- augp(Species ~ Petal.Length, ir, control = gen_ctl(pred_draws = 200))
  P <- fitted(fit)
  Y <- diag(3)[as.integer(ir$Species), ]
  r <- residuals(fit, type = "response")
  expect_equal(dim(r), c(36L, 3L))
  expect_equal(colnames(r), levels(ir$Species))
  expect_equal(unname(r), unname(Y - P))
  expect_equal(unname(residuals(fit, "pearson")), unname((Y - P) / sqrt(P * (1 - P))))
  expect_equal(deviance(fit), -2 * sum(log(P[Y == 1])))
  rd <- residuals(fit)
  expect_equal(unname(rd), unname(sign(Y - P) * sqrt(-2 * (Y * log(P) + (1 - Y) * log(1 - P)))))
})

test_that("formula, terms, model.frame, model.matrix, nobs, family of formula and matrix fits", {
  d <- augp_toy(30)
  fit <- augp(y ~ x1 + g, d, control = gen_ctl())
  f <- formula(fit)
  expect_s3_class(f, "formula")
  expect_null(attr(f, "term.labels"))
  expect_equal(f, y ~ x1 + g, ignore_attr = TRUE)
  expect_s3_class(terms(fit), "terms")
  expect_identical(model.frame(fit), fit$model)
  X <- model.matrix(fit)
  expect_equal(colnames(X), c("x1", "gb", "gc"))
  expect_equal(unname(X[, "x1"]), d$x1)  # data units, not standardised
  expect_equal(attr(X, "contrasts")$g, "contr.treatment")
  expect_identical(nobs(fit), 30L)
  expect_s3_class(family(fit), "augp_likelihood")
  expect_identical(family(fit)$name, "bernoulli_logit")
  # a matrix fit has no formula
  x <- as.matrix(d[, c("x1", "x2")])
  mfit <- augp_fit(x, d$y, control = gen_ctl())
  expect_error(formula(mfit), "augp_fit\\(\\) from a matrix")
  expect_error(terms(mfit), "no formula")
  expect_error(model.frame(mfit), "no formula")
  expect_equal(model.matrix(mfit), x)
})

test_that("generics without a GP meaning are errors that say what to use", {
  d <- augp_toy(30)
  fit <- augp(y ~ x1, d, control = gen_ctl())
  expect_error(logLik(fit), "ELBO")
  expect_error(AIC(fit), "logLik")
  expect_error(BIC(fit), "logLik")
  expect_error(vcov(fit), "predict\\(fit, se.fit = TRUE\\)")
  expect_error(confint(fit), "interval = \"credible\"")
  expect_error(anova(fit), "cross-validation")
  expect_error(df.residual(fit), "not defined")
  expect_error(sigma(fit), "no scale")
  e <- elbo(fit)
  expect_true(is.numeric(e) && length(e) == 1 && is.finite(e))
  g <- short_gibbs(augp(y ~ x1, d, method = "gibbs", seed = 1,
            control = augp_control(learn_hyper = FALSE, iter = 40, chains = 1, threads = 1)))
  expect_error(elbo(g), "no ELBO")
})

test_that("print and summary name the model from the likelihood", {
  d <- augp_toy(30)
  expect_output(print(augp(y ~ x1, d, control = gen_ctl())), "Augmented GP classifier")
  set.seed(2)
  x <- matrix(stats::rnorm(20))
  s <- stats::rbinom(20, 4, 0.5)
  fb <- augp_fit(x, cbind(s, 4 - s), control = gen_ctl())
  out <- capture.output(print(fb), print(summary(fb)))
  expect_true(any(grepl("Augmented GP binomial regression", out)))
  expect_false(any(grepl("classifier", out)))
  Y <- t(sapply(x[, 1], function(v) stats::rmultinom(1, 5, c(1, 1, 1))))
  colnames(Y) <- c("a", "b", "c")
  fs <- augp_fit(x, Y, control = gen_ctl())
  expect_output(print(fs), "Augmented GP multinomial model")
  fl <- augp(Species ~ Petal.Length, iris[seq(1, 150, 5), ], control = gen_ctl(pred_draws = 100))
  expect_output(print(summary(fl)), "Augmented GP multi-class classifier")
})

test_that("print and summary of sparse fits give m, placement, learning and SVI settings", {
  set.seed(4)
  n <- 120
  x <- matrix(stats::rnorm(2 * n), n)
  y <- factor(x[, 1] + stats::rnorm(n, sd = 0.5) > 0, labels = c("no", "yes"))
  f1 <- augp_fit(x, y, inducing = 8, control = gen_ctl(), seed = 1)
  expect_output(print(f1), "m = 8 inducing points \\(k-means placement, locations fixed\\), full-batch")
  Z <- x[1:6, ]
  f2 <- augp_fit(x, y, inducing = Z, control = gen_ctl(learn_inducing = TRUE), seed = 1)
  expect_output(print(summary(f2)), "m = 6 inducing points \\(user-given placement, locations learned\\)")
  f3 <- augp_fit(x, y, inducing = 8, seed = 1,
                 control = gen_ctl(inducing_method = "random", batch_size = 40, svi_epochs = 2))
  expect_output(print(f3), "random placement.*batch size 40, 2 epochs")
})

test_that("offsets enter the latent mean; predict() evaluates them on newdata", {
  d <- augp_toy(40)
  d$o <- seq(-1.5, 1.5, length.out = 40)
  f0 <- augp(y ~ x1, d, control = gen_ctl())
  f1 <- augp(y ~ x1 + offset(o), d, control = gen_ctl())
  f2 <- augp(y ~ x1, d, offset = o, control = gen_ctl())
  expect_false(isTRUE(all.equal(fitted(f0), fitted(f1))))
  expect_equal(fitted(f1), fitted(f2))
  expect_equal(f1$offset, d$o)
  nd <- data.frame(x1 = c(-1, 0, 1), o = c(0, 0, 0))
  nd2 <- transform(nd, o = c(1, -2, 0.5))
  for (f in list(f1, f2)) {
    l1 <- predict(f, nd, type = "link")
    l2 <- predict(f, nd2, type = "link")
    expect_equal(unname(l2 - l1), nd2$o)  # the offset adds to the latent mean
  }
  expect_error(predict(f1, data.frame(x1 = 0)), "missing column.*'o'")
  expect_error(predict(f1, nd, offset = 1:3), "evaluates its offsets on `newdata`")
  expect_error(predict(f0, nd, offset = 1:3), "has no offset")
  expect_error(predict(f2, data.frame(x1 = 0)), "`newdata`: the fit's `offset` \\(o\\) cannot be evaluated")
  # a constant offset is absorbed by the constant prior mean, as glm's intercept does
  f3 <- augp(y ~ x1 + offset(rep(2, 40)), d, control = gen_ctl())
  expect_equal(fitted(f3), fitted(f0))
  # Gibbs fits shift their predictions by the offset too
  ctl <- augp_control(learn_hyper = FALSE, iter = 60, chains = 1, threads = 1)
  g <- short_gibbs(augp(y ~ x1 + offset(o), d, method = "gibbs", seed = 2, control = ctl))
  expect_equal(unname(predict(g, nd2, type = "link") - predict(g, nd, type = "link")), nd2$o,
               tolerance = 1e-8)
  # matrix fits take the offsets of newdata in predict()
  x <- as.matrix(d[, "x1", drop = FALSE])
  fm <- augp_fit(x, d$y, offset = d$o, control = gen_ctl())
  expect_equal(unname(fitted(fm)), unname(fitted(f1)))
  expect_error(predict(fm, x[1:3, , drop = FALSE]), "`offset`.*one value per row")
  expect_equal(unname(predict(fm, x[1:3, , drop = FALSE], offset = d$o[1:3])),
               unname(fitted(fm)[1:3]), tolerance = 1e-6)
  expect_error(predict(fm, x[1:3, , drop = FALSE], offset = 1), "one value per row")
  expect_equal(dim(simulate(fm, nsim = 2, seed = 1)), c(40L, 2L))
  # sparse fits (full batch and minibatches) take per-row prior means
  fs <- augp(y ~ x1 + offset(o), d, inducing = 10, control = gen_ctl(), seed = 1)
  expect_equal(unname(predict(fs, nd2, type = "link") - predict(fs, nd, type = "link")), nd2$o)
  fv <- augp(y ~ x1 + offset(o), d, inducing = 10, seed = 1,
             control = gen_ctl(batch_size = 20, svi_epochs = 2))
  expect_false(isTRUE(fv$engine$sparse$full_batch))
  expect_equal(unname(predict(fv, nd2, type = "link") - predict(fv, nd, type = "link")), nd2$o)
  # bad offsets, and likelihoods without a single linear predictor
  expect_error(augp_fit(x, d$y, offset = 1:3), "`offset` has 3 value")
  expect_error(augp_fit(x, d$y, offset = c(NA, d$o[-1])), "`offset` must be finite")
  ir <- iris[seq(1, 150, 5), ]
  expect_error(augp(Species ~ Petal.Length + offset(Sepal.Width), ir, control = gen_ctl()),
               "`offset`: the logistic_softmax likelihood takes no offset")
})

test_that("na.exclude pads fitted, residuals, weights and predict without newdata", {
  d <- augp_toy(40)
  d$x1[c(4, 17)] <- NA
  fe <- augp(y ~ x1 + x2, d, na.action = na.exclude, control = gen_ctl())
  fo <- augp(y ~ x1 + x2, d, na.action = na.omit, control = gen_ctl())
  expect_identical(nobs(fe), 38L)
  for (v in list(fitted(fe), fitted(fe, type = "link"), residuals(fe),
                 residuals(fe, "pearson"), predict(fe), predict(fe, type = "link"),
                 weights(fe))) {
    expect_length(v, 40)
    expect_equal(which(is.na(v)), c(4L, 17L))
  }
  pc <- predict(fe, type = "class")
  expect_length(pc, 40)
  expect_true(all(is.na(pc[c(4, 17)])))
  ps <- predict(fe, se.fit = TRUE, interval = "credible")
  expect_equal(nrow(ps), 40L)
  expect_true(all(is.na(ps[c(4, 17), ])))
  expect_equal(unname(fitted(fe)[-c(4, 17)]), unname(fitted(fo)))
  expect_length(fitted(fo), 38)
  expect_length(residuals(fo), 38)
  # multi-class: matrices padded by rows
  ir <- iris[seq(1, 150, 4), ]
  ir$Petal.Length[3] <- NA
  fm <- augp(Species ~ Petal.Length, ir, na.action = na.exclude, control = gen_ctl(pred_draws = 100))
  expect_equal(dim(fitted(fm)), c(38L, 3L))
  expect_equal(dim(residuals(fm)), c(38L, 3L))
  expect_true(all(is.na(predict(fm)[3, ])))
})

test_that("predict() on newdata without rows returns empty results of the right type", {
  d <- augp_toy(30)
  fit <- augp(y ~ x1 + g, d, control = gen_ctl())
  nd <- d[0, ]
  expect_identical(predict(fit, nd), numeric(0))
  expect_identical(predict(fit, nd, type = "link"), numeric(0))
  cl <- predict(fit, nd, type = "class")
  expect_s3_class(cl, "factor")
  expect_length(cl, 0)
  expect_identical(levels(cl), c("neg", "pos"))
  ps <- predict(fit, nd, se.fit = TRUE, interval = "credible")
  expect_s3_class(ps, "data.frame")
  expect_equal(dim(ps), c(0L, 4L))
  x <- as.matrix(d[, c("x1", "x2")])
  mf <- augp_fit(x, d$y, control = gen_ctl())
  expect_identical(predict(mf, x[0, ]), numeric(0))
  g <- short_gibbs(augp(y ~ x1, d, method = "gibbs", seed = 1,
            control = augp_control(learn_hyper = FALSE, iter = 40, chains = 1, threads = 1)))
  expect_equal(nrow(predict(g, nd, type = "link", interval = "credible")), 0L)
  expect_equal(nrow(simulate(g, newdata = nd)), 0L)
  ir <- iris[seq(1, 150, 5), ]
  fm <- augp(Species ~ Petal.Length, ir, control = gen_ctl(pred_draws = 100))
  P <- predict(fm, ir[0, ])
  expect_equal(dim(P), c(0L, 3L))
  expect_equal(colnames(P), levels(ir$Species))
  expect_equal(dim(predict(fm, ir[0, ], type = "link")), c(0L, 3L))
})

test_that("no rows to fit: empty data and a subset that selects nothing", {
  d <- augp_toy(30)
  expect_error(augp(y ~ x1, d[0, ]), "`data` has no rows")
  expect_error(augp(y ~ x1, d, subset = x1 > 100), "`subset` selects no rows")
  d$x1 <- NA
  expect_error(augp(y ~ x1, d), "`data` has no rows without missing values")
  expect_error(augp_fit(matrix(numeric(0), 0, 2), factor(character(0))), "`x` has 0 usable row")
})

test_that("seeds outside the integer range are errors on every path", {
  d <- augp_toy(30)
  x <- as.matrix(d[, c("x1", "x2")])
  fit <- augp(y ~ x1, d, control = gen_ctl(), seed = 1)
  for (s in list(1e12, -1e12, 2^31, 1.5, NA_real_, c(1, 2), "1")) {
    expect_error(augp(y ~ x1, d, control = gen_ctl(), seed = s), "`seed` must be NULL or a single whole number")
    expect_error(augp_fit(x, d$y, control = gen_ctl(), seed = s), "`seed`")
    expect_error(simulate(fit, seed = s), "`seed`")
  }
  expect_error(augp(y ~ x1, d, method = "gibbs", seed = 2^31), "`seed`")
  expect_error(augp(y ~ x1, d, inducing = 5, seed = -2^31), "`seed`")
  # the ends of the range work
  f2 <- augp(y ~ x1, d, control = gen_ctl(), seed = .Machine$integer.max)
  expect_length(predict(f2, d[1:2, ]), 2)
  expect_s3_class(simulate(fit, seed = -.Machine$integer.max), "data.frame")
})

test_that("`level` must be strictly between 0 and 1 wherever it is taken", {
  d <- augp_toy(30)
  fit <- augp(y ~ x1, d, control = gen_ctl())
  for (l in list(NA, NA_real_, 0, 1, -0.5, 1.5, c(0.5, 0.9), "0.9", Inf)) {
    expect_error(predict(fit, d[1:3, ], interval = "credible", level = l), "`level` must be")
    expect_error(predict(fit, level = l), "`level` must be")
    expect_error(predict_counts(fit, d[1:3, ], size = 2, interval = "credible", level = l),
                 "`level` must be")
  }
})

test_that("messages of predict() and simulate() name the user's arguments", {
  d <- augp_toy(30)
  fit <- augp(y ~ x1 + x2, d, control = gen_ctl())
  x <- as.matrix(d[, c("x1", "x2")])
  mf <- augp_fit(x, d$y, control = gen_ctl())
  msgs <- c(
    tryCatch(predict(fit, d[, "x1", drop = FALSE]), error = conditionMessage),
    tryCatch(predict(mf, x[, 1, drop = FALSE]), error = conditionMessage),
    tryCatch(predict(mf, unname(cbind(x, 1))), error = conditionMessage),
    tryCatch(predict(mf, "a"), error = conditionMessage),
    tryCatch(simulate(mf, newdata = x[, 1, drop = FALSE]), error = conditionMessage),
    tryCatch(predict(mf, x * Inf), error = conditionMessage))
  expect_true(all(grepl("`newdata`", msgs)))
  expect_false(any(grepl("Xnew|`X`|mean0", msgs)))
})
