# kernel = NULL (the default of augp() and augp_fit()) asks the likelihood for its kernel:
# Matern 5/2 for gaussian_noise(), the squared exponential for every other likelihood.

dk_data <- function(n = 40, seed = 3) {
  set.seed(seed)
  d <- data.frame(x = stats::runif(n), z = stats::runif(n))
  d$y <- sin(6 * d$x) + stats::rnorm(n, sd = 0.2)
  d
}

test_that("gaussian_noise() defaults to kernel_matern(nu = 2.5), the same fit as naming it", {
  d <- dk_data()
  ctl <- augp_control(threads = 1)
  f0 <- augp(y ~ x + z, d, likelihood = gaussian_noise(), control = ctl)
  f1 <- augp(y ~ x + z, d, likelihood = gaussian_noise(), kernel = kernel_matern(nu = 2.5),
             control = ctl)
  expect_identical(f0$kernel$type, "matern")
  expect_identical(f0$kernel$nu, 2.5)
  expect_equal(coef(f0), coef(f1))
  expect_equal(elbo(f0), elbo(f1))
  expect_equal(predict(f0, d[1:5, ]), predict(f1, d[1:5, ]))
  # a numeric response without a likelihood is Gaussian regression: the same default
  fn <- augp(y ~ x + z, d, control = ctl)
  expect_s3_class(fn$likelihood, "augp_gaussian")
  expect_equal(coef(fn), coef(f0))
  # print() and summary() say the kernel is the likelihood's default; not when it is given
  expect_output(print(f0), "kernel_matern\\(nu = 2.5\\), the likelihood's default kernel")
  expect_output(print(summary(f0)), "kernel_matern\\(nu = 2.5\\), the likelihood's default kernel")
  expect_false(any(grepl("default kernel", utils::capture.output(print(f1)))))
  # an explicit squared exponential is kept
  fs <- augp(y ~ x + z, d, likelihood = gaussian_noise(), kernel = kernel_se(), control = ctl)
  expect_identical(fs$kernel$type, "se")
  expect_true(all(grepl("^se\\.", names(coef(fs)))))
})

test_that("the other likelihoods keep the squared exponential default", {
  d <- dk_data()
  ctl <- augp_control(threads = 1, maxit = 50)
  ns <- asNamespace("augmentedGP")
  for (lik in list(student_t(), laplace(), heteroscedastic_gaussian(), bernoulli_logit())) {
    expect_identical(ns$lik_default_kernel(lik)$type, "se")
  }
  ft <- augp(y ~ x, d, likelihood = student_t(), control = ctl)
  expect_identical(ft$kernel$type, "se")
  d$b <- factor(d$y > 0)
  fb <- augp(b ~ x, d, control = ctl)
  fb_se <- augp(b ~ x, d, kernel = kernel_se(), control = ctl)
  expect_identical(fb$kernel$type, "se")
  expect_equal(coef(fb), coef(fb_se))
  expect_output(print(fb), "kernel_se\\(\\), the likelihood's default kernel")
})

test_that("a kernel that is neither NULL nor a kernel object is rejected, naming `kernel`", {
  d <- dk_data()
  expect_error(augp(y ~ x, d, kernel = "se"), "`kernel` must be NULL or a kernel object")
  expect_error(augp_fit(as.matrix(d["x"]), d$y, kernel = 1), "`kernel`")
})
