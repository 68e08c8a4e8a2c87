# Kernel hyperparameters in the units of the data: the inputs are standardised inside
# the fit, kernels are given and reported in data units.

units_data <- function(n = 50, seed = 5) {
  set.seed(seed)
  d <- data.frame(glu = stats::rnorm(n, 120, 30), bmi = stats::rnorm(n, 0, 0.2))
  d$y <- factor(stats::rbinom(n, 1, stats::plogis((d$glu - 120) / 20 + d$bmi / 0.2)),
                labels = c("no", "yes"))
  d
}
units_ctl <- function(...) augp_control(hyper_maxit = 20, maxit = 60, threads = 1, ...)
fixed_ctl <- function(...) augp_control(learn_hyper = FALSE, maxit = 200, tol = 1e-10, threads = 1, ...)

test_that("coef() reports lengthscales in data units: the standardised value times the sd", {
  d <- units_data()
  fit <- augp(y ~ glu, d, control = units_ctl())
  cs <- coef(fit, units = "standardised")
  cd <- coef(fit)
  expect_named(cd, c("se.variance", "se.lengthscale"))
  expect_equal(cd[["se.variance"]], cs[["se.variance"]])
  expect_equal(cd[["se.lengthscale"]], cs[["se.lengthscale"]] * stats::sd(d$glu))
  expect_identical(coef(fit, units = "standardized"), cs)
  expect_error(coef(fit, units = "cm"), "`units` must be one of")
  # the same data in other units: the same fit, lengthscales in the new units
  d10 <- transform(d, glu = glu * 10)
  f10 <- augp(y ~ glu, d10, control = units_ctl())
  expect_equal(coef(f10)[["se.lengthscale"]], 10 * cd[["se.lengthscale"]], tolerance = 1e-6)
  expect_equal(coef(f10)[["se.variance"]], cd[["se.variance"]], tolerance = 1e-6)
  expect_equal(coef(f10, units = "standardised"), cs, tolerance = 1e-6)
  # ARD: one lengthscale per input, each in its own units
  fa <- augp(y ~ glu + bmi, d, kernel = kernel_se(lengthscale = c(30, 0.2)), control = units_ctl())
  ca <- coef(fa)
  expect_named(ca, c("se.variance", "se.lengthscale.glu", "se.lengthscale.bmi"))
  sds <- c(stats::sd(d$glu), stats::sd(d$bmi))
  expect_equal(unname(ca[2:3]), unname(coef(fa, units = "standardised")[2:3]) * sds)
})

test_that("an isotropic kernel on several inputs is reported once per input, l * sd", {
  d <- units_data()
  fit <- augp(y ~ glu + bmi, d, control = units_ctl())
  l <- coef(fit, units = "standardised")[["se.lengthscale"]]
  cd <- coef(fit)
  expect_named(cd, c("se.variance", "se.lengthscale.glu", "se.lengthscale.bmi"))
  expect_equal(unname(cd[2:3]), l * c(stats::sd(d$glu), stats::sd(d$bmi)))
  out <- capture.output(print(fit))
  expect_true(any(grepl("data units", out)))
  expect_true(any(grepl("isotropic on the standardised inputs", out)))
  expect_output(print(summary(fit)), "Kernel \\(data units\\): kernel_se\\(.*lengthscale = c\\(")
  # with standardise = FALSE the data and internal units agree
  fr <- augp(y ~ glu, d, control = units_ctl(standardise = FALSE),
             kernel = kernel_se(lengthscale = 30))
  expect_equal(coef(fr), coef(fr, units = "standardised"))
  expect_false(any(grepl("isotropic", capture.output(print(fr)))))
})

test_that("a user's kernel is read in data units: the same fit as the standardised equivalent", {
  d <- units_data()
  sg <- stats::sd(d$glu)
  ds <- transform(d, glu = (glu - mean(glu)) / sg)
  nd <- data.frame(glu = c(60, 110, 170), bmi = c(-0.2, 0, 0.3))
  nds <- transform(nd, glu = (glu - mean(d$glu)) / sg)
  # one input: lengthscale 25 glucose units = 25 / sd on the standardised input
  f1 <- augp(y ~ glu, d, kernel = kernel_se(variance = 2, lengthscale = 25), control = fixed_ctl())
  f2 <- augp(y ~ glu, ds, kernel = kernel_se(variance = 2, lengthscale = 25 / sg),
             control = fixed_ctl())
  expect_equal(elbo(f1), elbo(f2), tolerance = 1e-8)
  expect_equal(predict(f1, nd), predict(f2, nds), tolerance = 1e-8)
  expect_equal(coef(f1), c(se.variance = 2, se.lengthscale = 25))
  expect_equal(coef(f1, units = "standardised")[["se.lengthscale"]], 25 / sg)
  # ARD, a Matern and a periodic kernel (period in data units)
  sb <- stats::sd(d$bmi)
  dsb <- transform(ds, bmi = (bmi - mean(bmi)) / sb)
  ndsb <- transform(nds, bmi = (bmi - mean(d$bmi)) / sb)
  ka <- kernel_matern(nu = 2.5, lengthscale = c(40, 0.3))
  fa <- augp(y ~ glu + bmi, d, kernel = ka, control = fixed_ctl())
  fb <- augp(y ~ glu + bmi, dsb, kernel = kernel_matern(nu = 2.5, lengthscale = c(40 / sg, 0.3 / sb)),
             control = fixed_ctl())
  expect_equal(predict(fa, nd), predict(fb, ndsb), tolerance = 1e-8)
  kp <- kernel_periodic(lengthscale = 0.8, period = 50)
  fp <- augp(y ~ glu, d, kernel = kp, control = fixed_ctl())
  fq <- augp(y ~ glu, ds, kernel = kernel_periodic(lengthscale = 0.8, period = 50 / sg),
             control = fixed_ctl())
  expect_equal(predict(fp, nd), predict(fq, nds), tolerance = 1e-8)
  expect_equal(coef(fp)[["periodic.period"]], 50)
  expect_equal(coef(fp)[["periodic.lengthscale"]], 0.8)
  # the linear kernel: lengthscale in data units as well
  fl <- augp(y ~ glu, d, kernel = kernel_linear(lengthscale = 30), control = fixed_ctl())
  fm <- augp(y ~ glu, ds, kernel = kernel_linear(lengthscale = 30 / sg), control = fixed_ctl())
  expect_equal(predict(fl, nd), predict(fm, nds), tolerance = 1e-8)
  # the default lengthscale is one standard deviation of each input
  f0 <- augp(y ~ glu, d, kernel = kernel_se(variance = 2), control = fixed_ctl())
  fs <- augp(y ~ glu, d, kernel = kernel_se(variance = 2, lengthscale = sg), control = fixed_ctl())
  expect_equal(predict(f0, nd), predict(fs, nd), tolerance = 1e-10)
  expect_output(print(kernel_se()), "lengthscale = 1 sd")
  expect_output(print(kernel_periodic()), "period = 1 sd")
})

test_that("one lengthscale on inputs of different scales is read in units of each sd, with a message", {
  d <- units_data()
  sds <- c(stats::sd(d$glu), stats::sd(d$bmi))
  expect_message(
    fi <- augp(y ~ glu + bmi, d, kernel = kernel_se(lengthscale = 2), control = fixed_ctl()),
    "read in units of each input's standard deviation")
  expect_equal(coef(fi, units = "standardised")[["se.lengthscale"]], 2)
  fa <- augp(y ~ glu + bmi, d, kernel = kernel_se(lengthscale = 2 * sds), control = fixed_ctl())
  expect_equal(predict(fi, d[1:5, ]), predict(fa, d[1:5, ]), tolerance = 1e-8)
  expect_equal(unname(coef(fi)[2:3]), 2 * sds)
  # the default kernel and standardise = FALSE need no message
  expect_silent(augp(y ~ glu + bmi, d, control = fixed_ctl()))
  expect_silent(augp(y ~ glu + bmi, d, kernel = kernel_se(lengthscale = 2),
                     control = fixed_ctl(standardise = FALSE)))
})

test_that("ARD lengthscales given for every predictor lose those of dropped columns", {
  d <- units_data()
  x <- cbind(glu = d$glu, flat = 1, bmi = d$bmi)
  expect_warning(
    f <- augp_fit(x, d$y, kernel = kernel_se(lengthscale = c(30, 1, 0.2)), control = fixed_ctl()),
    "zero variance")
  expect_equal(unname(coef(f)[2:3]), c(30, 0.2))
})

test_that("per-latent kernels keep their matrix shape in data units", {
  set.seed(3)
  ir <- iris[sample(150, 36), ]
  fit <- augp(Species ~ Petal.Length + Sepal.Width, ir, likelihood = logistic_softmax(),
              control = units_ctl(shared_hyper = FALSE, pred_draws = 100))
  cd <- coef(fit)
  cs <- coef(fit, units = "standardised")
  expect_true(is.matrix(cd))
  expect_equal(dim(cd), c(3L, 3L))
  expect_equal(rownames(cd), levels(ir$Species))
  expect_equal(colnames(cd), c("se.variance", "se.lengthscale.Petal.Length", "se.lengthscale.Sepal.Width"))
  expect_equal(unname(cd[, 1]), unname(cs[, 1]))
  expect_equal(unname(cd[, 2]), unname(cs[, 2]) * stats::sd(ir$Petal.Length))
})

test_that("absurd kernel hyperparameters are errors naming the kernel", {
  d <- units_data()
  for (k in list(kernel_se(variance = 1e300), kernel_se(variance = 1e-300),
                 kernel_se(lengthscale = 1e-300), kernel_se(lengthscale = 1e300),
                 kernel_periodic(period = 1e300), kernel_se() + kernel_linear(variance = 1e12))) {
    expect_error(augp(y ~ glu, d, kernel = k, control = units_ctl()), "`kernel`: the .* is outside the range")
  }
  # the range is on the standardised scale: 1e-5 glucose units is 3e-7 sd
  expect_error(augp(y ~ glu, d, kernel = kernel_se(lengthscale = 1e-5)), "standard deviations")
  x <- as.matrix(d[, c("glu", "bmi")])
  expect_error(augp_fit(x, d$y, kernel = kernel_se(lengthscale = c(1e9, 1))), "`kernel`")
  expect_error(augp(y ~ glu + bmi, d, kernel = kernel_se(lengthscale = c(1, 2, 3))),
               "`kernel` has 3 lengthscales")
})

test_that("inducing locations are in data units, like the kernel", {
  d <- units_data(80)
  sg <- stats::sd(d$glu)
  ds <- transform(d, glu = (glu - mean(glu)) / sg)
  Z <- matrix(c(70, 100, 130, 160, 190))
  f1 <- augp(y ~ glu, d, inducing = Z, kernel = kernel_se(lengthscale = 25),
             control = fixed_ctl(), seed = 1)
  f2 <- augp(y ~ glu, ds, inducing = (Z - mean(d$glu)) / sg,
             kernel = kernel_se(lengthscale = 25 / sg), control = fixed_ctl(), seed = 1)
  expect_equal(unname(fitted(f1)), unname(fitted(f2)), tolerance = 1e-6)
})

test_that("a fitted kernel passed to another fit on the same data is reused as fitted", {
  set.seed(11)
  d <- data.frame(a = rnorm(40, sd = 30), b = rnorm(40, sd = 0.2))
  d$y <- factor(d$a / 30 + d$b / 0.2 + rnorm(40) > 0, labels = c("n", "y"))
  fit <- augp(y ~ a + b, data = d, kernel = kernel_se(lengthscale = c(40, 0.3)),
              control = augp_control(hyper_maxit = 20), seed = 1)
  refit <- augp(y ~ a + b, data = d, kernel = fit$kernel,
                control = augp_control(learn_hyper = FALSE), seed = 1)
  expect_equal(coef(refit), coef(fit), tolerance = 1e-10)
  expect_match(format(fit$kernel), "sd\\)$")
})
