# gp() terms in augp() formulas: the same model as the kernel they stand for (one
# kernel per gp() term on its variables, a linear kernel on each other term), the
# user's formula kept for formula() and update(), and bad terms refused.

fg_data <- function(n = 80, seed = 2) {
  set.seed(seed)
  d <- data.frame(a = stats::runif(n, 0, 3), b = stats::rnorm(n, 5, 2), c = stats::runif(n),
                  g = factor(sample(c("p", "q", "r"), n, replace = TRUE)),
                  expo = stats::runif(n, 1, 3))
  d$y <- sin(2 * d$a) + 0.3 * d$b + 0.5 * (d$g == "q") + stats::rnorm(n, sd = 0.3)
  d$count <- stats::rpois(n, d$expo * exp(0.5 + 0.6 * sin(2 * d$a)))
  d
}

test_that("gp() terms fit the model of the kernel they stand for", {
  d <- fg_data()
  ctl <- augp_control(threads = 1)
  f1 <- augp(y ~ gp(a) + gp(b, c) + g, d, likelihood = gaussian_noise(), seed = 1, control = ctl)
  k <- kernel_matern(2.5, dims = "a") + kernel_matern(2.5, dims = c("b", "c")) +
    kernel_linear(dims = "g")
  f0 <- augp(y ~ a + b + c + g, d, likelihood = gaussian_noise(), kernel = k, seed = 1,
             control = ctl)
  expect_equal(elbo(f1), elbo(f0), tolerance = 1e-10)
  expect_equal(coef(f1), coef(f0), tolerance = 1e-10)
  expect_equal(predict(f1, d[1:6, ]), predict(f0, d[1:6, ]), tolerance = 1e-10)
  # the order of the formula's terms does not matter
  f2 <- augp(y ~ g + gp(b, c) + gp(a), d, likelihood = gaussian_noise(), seed = 1, control = ctl)
  expect_equal(elbo(f2), elbo(f1), tolerance = 1e-10)
  # a term's own kernel, and an offset, with a count likelihood
  f3 <- augp(count ~ gp(a, kernel = kernel_se(lengthscale = 0.5)) + b + offset(log(expo)), d,
             likelihood = negative_binomial(), seed = 1, control = ctl)
  f4 <- augp(count ~ a + b + offset(log(expo)), d, likelihood = negative_binomial(), seed = 1,
             control = ctl, kernel = kernel_se(lengthscale = 0.5, dims = "a") + kernel_linear(dims = "b"))
  expect_equal(elbo(f3), elbo(f4), tolerance = 1e-10)
  expect_equal(predict(f3, d[1:4, ], type = "response"), predict(f4, d[1:4, ], type = "response"),
               tolerance = 1e-10)
  # with the offset left out the fit differs (the check can fail)
  f5 <- augp(count ~ gp(a, kernel = kernel_se(lengthscale = 0.5)) + b, d,
             likelihood = negative_binomial(), seed = 1, control = ctl)
  expect_gt(abs(elbo(f5) - elbo(f3)), 1)
})

test_that("formula() gives the formula with its gp() terms, and update() refits from it", {
  d <- fg_data()
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  f <- augp(y ~ gp(a) + gp(b) + c, d, likelihood = gaussian_noise(), seed = 1, control = ctl)
  expect_equal(formula(f), y ~ gp(a) + gp(b) + c, ignore_attr = TRUE)
  u <- update(f, . ~ . - c)
  expect_equal(formula(u), y ~ gp(a) + gp(b), ignore_attr = TRUE)
  expect_equal(names(coef(u)), c("matern(a).variance", "matern(a).lengthscale",
                                 "matern(b).variance", "matern(b).lengthscale"))
  # a formula without gp() terms keeps its kernel on all inputs
  g <- augp(y ~ a + b, d, likelihood = gaussian_noise(), seed = 1, control = ctl)
  expect_false(any(grepl("(", names(coef(g)), fixed = TRUE)))
})

test_that("bad gp() terms are refused with a message naming the formula", {
  d <- fg_data()
  expect_error(augp(y ~ gp(a):g, d), "gp\\(a\\) appears in an interaction")
  expect_error(augp(y ~ gp(a, nu = 2), d), "gp\\(\\) takes variables and `kernel`, not `nu`")
  expect_error(augp(y ~ gp(kernel = kernel_se()), d), "names no variable")
  expect_error(augp(y ~ gp(a, kernel = 3), d), "must be a kernel")
  expect_error(augp(y ~ gp(a, kernel = kernel_se(dims = "b")), d), "sets `dims`")
  expect_error(augp(y ~ gp(a), d, kernel = kernel_se()), "`kernel`: the formula's gp\\(\\) terms")
  expect_error(augp(y ~ gp(zz), d), "zz")
  expect_error(gp(1), "not a function to call")
})
