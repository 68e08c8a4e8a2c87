# Kernels on some of the inputs (`dims`): the kernel matrix is the one of the selected
# columns, fits with such kernels equal fits on those columns alone, names resolve
# against the formula's variables and the design's columns, and bad `dims` are refused.

kd_data <- function(n = 60, seed = 11) {
  set.seed(seed)
  d <- data.frame(a = stats::runif(n, 0, 3), b = stats::rnorm(n, 10, 4),
                  g = factor(sample(c("u", "v", "w"), n, replace = TRUE)))
  d$z <- factor(ifelse(sin(2 * d$a) + 0.2 * (d$b - 10) + stats::rnorm(n, sd = 0.5) > 0, "yes", "no"))
  d$y <- sin(2 * d$a) + 0.1 * d$b + stats::rnorm(n, sd = 0.3)
  d$count <- stats::rpois(n, exp(1 + 0.5 * sin(2 * d$a)))
  d
}

test_that("a kernel on some inputs is the kernel of those columns", {
  set.seed(1)
  x <- matrix(stats::rnorm(40), 20, 2, dimnames = list(NULL, c("a", "b")))
  y <- matrix(stats::rnorm(10), 5, 2, dimnames = list(NULL, c("a", "b")))
  k <- kernel_se(lengthscale = 0.7, dims = "a") + kernel_matern(2.5, 2, 1.3, dims = 2)
  expect_equal(kernel_matrix(k, x, y),
               kernel_matrix(kernel_se(lengthscale = 0.7), x[, 1], y[, 1]) +
                 kernel_matrix(kernel_matern(2.5, 2, 1.3), x[, 2], y[, 2]), tolerance = 1e-14)
  # ARD lengthscales follow the order of dims
  expect_equal(kernel_matrix(kernel_se(1, c(0.5, 2), dims = c("b", "a")), x),
               kernel_matrix(kernel_se(1, c(2, 0.5)), x), tolerance = 1e-14)
  # a kernel on one input is not the kernel on all of them (the check can fail)
  expect_gt(max(abs(kernel_matrix(kernel_se(dims = 1), x) - kernel_matrix(kernel_se(), x))), 0.01)
  expect_match(format(k), 'dims = "a"', fixed = TRUE)
  expect_match(format(kernel_se(dims = c(2, 3))), "dims = c(2, 3)", fixed = TRUE)
})

test_that("a fit with a kernel on some inputs equals the fit on those inputs alone", {
  d <- kd_data()
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  # binary VI with the kernel learned: the same ELBO, kernel and predictions
  f1 <- augp(z ~ a + b, d, kernel = kernel_se(dims = "a"), seed = 3, control = ctl)
  f0 <- augp(z ~ a, d, seed = 3, control = ctl)
  expect_equal(elbo(f1), elbo(f0), tolerance = 1e-8)
  expect_equal(unname(coef(f1)), unname(coef(f0)), tolerance = 1e-6)
  expect_equal(names(coef(f1)), c("se(a).variance", "se(a).lengthscale"))
  expect_equal(predict(f1, d[1:7, ], type = "response"),
               predict(f0, d[1:7, ], type = "response"), tolerance = 1e-6)
  # Gibbs: the same draws (short chains: the convergence warning is not the point)
  g1 <- suppressWarnings(augp(z ~ a + b, d, kernel = kernel_se(dims = "a"), method = "gibbs", seed = 3,
             control = augp_control(threads = 1, iter = 60, warmup = 20, chains = 1,
                                    learn_hyper = FALSE)))
  g0 <- suppressWarnings(augp(z ~ a, d, method = "gibbs", seed = 3,
             control = augp_control(threads = 1, iter = 60, warmup = 20, chains = 1,
                                    learn_hyper = FALSE)))
  expect_equal(fitted(g1), fitted(g0), tolerance = 1e-10)
  # Gaussian exact (its ARD search leaves a one-input kernel alone)
  r1 <- augp(y ~ a + b, d, likelihood = gaussian_noise(), kernel = kernel_se(dims = "a"),
             seed = 3, control = ctl)
  r0 <- augp(y ~ a, d, likelihood = gaussian_noise(), kernel = kernel_se(), seed = 3, control = ctl)
  expect_equal(sigma(r1), sigma(r0), tolerance = 1e-6)
  expect_equal(predict(r1, d[1:5, ]), predict(r0, d[1:5, ]), tolerance = 1e-6)
})

test_that("an additive kernel beats one kernel on all inputs when the truth is additive", {
  set.seed(5)
  n <- 150
  d <- data.frame(a = stats::runif(n), b = stats::runif(n), c = stats::runif(n))
  d$y <- sin(6 * d$a) + cos(5 * d$b) + stats::rnorm(n, sd = 0.2)
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  add <- augp(y ~ a + b + c, d, likelihood = gaussian_noise(), seed = 1, control = ctl,
              kernel = kernel_se(dims = "a") + kernel_se(dims = "b") + kernel_se(dims = "c"))
  full <- augp(y ~ a + b + c, d, likelihood = gaussian_noise(), seed = 1, control = ctl,
               kernel = kernel_se(lengthscale = rep(1, 3)))
  # the exact log marginal likelihood of the additive model is higher
  expect_gt(elbo(add), elbo(full) + 5)
  # the additive fit finds c irrelevant: its predictions move little along c, much along a
  grid <- data.frame(a = 0.5, b = 0.5, c = seq(0, 1, length.out = 11))
  along_c <- diff(range(predict(add, grid)))
  grid_a <- data.frame(a = seq(0, 1, length.out = 11), b = 0.5, c = 0.5)
  along_a <- diff(range(predict(add, grid_a)))
  expect_lt(along_c, 0.1)
  expect_gt(along_a, 1)
})

test_that("names in dims are formula variables or design columns; ARD per selected column", {
  d <- kd_data()
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  # a factor variable stands for all its dummy columns
  f <- augp(count ~ a + b + g, d, likelihood = poisson_logistic(), seed = 1, control = ctl,
            kernel = kernel_se(dims = "a") + kernel_linear(dims = "g"))
  expect_equal(f$kernel$k2$dims, c("gv", "gw"))
  expect_equal(f$kernel$k2$dims_idx, 3:4)
  # its parameters are named by the variable as given
  # (one lengthscale on the two columns of different sds is listed per column)
  expect_equal(names(coef(f))[3:5], c("linear(g).variance", "linear(g).lengthscale.gv",
                                      "linear(g).lengthscale.gw"))
  # a design column by name
  f2 <- augp(count ~ a + b + g, d, likelihood = poisson_logistic(), seed = 1, control = ctl,
             kernel = kernel_se(dims = "a") + kernel_linear(dims = c("gv", "gw")))
  expect_equal(elbo(f2), elbo(f), tolerance = 1e-8)
  # the fitted kernel is reusable: its dims are column names
  f3 <- augp(count ~ a + b + g, d, likelihood = poisson_logistic(), seed = 1,
             control = augp_control(threads = 1, integrate_hyper = FALSE, learn_hyper = FALSE),
             kernel = f$kernel)
  expect_equal(coef(f3), coef(f), tolerance = 1e-10)
  # ARD lengthscales in data units, one per selected input, each converted by its sd
  k <- kernel_se(lengthscale = c(2, 0.5), dims = c("b", "a"))
  f4 <- augp(z ~ a + b + g, d, kernel = k, seed = 1,
             control = augp_control(threads = 1, learn_hyper = FALSE, integrate_hyper = FALSE))
  expect_equal(unname(f4$kernel$lengthscale), c(2 / sd(d$b), 0.5 / sd(d$a)), tolerance = 1e-12)
  expect_equal(coef(f4)[c("se(b,a).lengthscale.b", "se(b,a).lengthscale.a")],
               c(`se(b,a).lengthscale.b` = 2, `se(b,a).lengthscale.a` = 0.5), tolerance = 1e-10)
})

test_that("a fit's inputs outside the kernel's dims do not change it", {
  d <- kd_data()
  ctl <- augp_control(threads = 1, integrate_hyper = FALSE)
  f1 <- augp(z ~ a + b, d, kernel = kernel_se(dims = "a"), seed = 3, control = ctl)
  d2 <- d
  d2$b <- d2$b * 1000 + 7
  f2 <- augp(z ~ a + b, d2, kernel = kernel_se(dims = "a"), seed = 3, control = ctl)
  expect_equal(elbo(f2), elbo(f1), tolerance = 1e-8)
  nd <- d2[1:4, ]
  nd$b <- -50
  expect_equal(predict(f2, nd, type = "response"), predict(f1, d[1:4, ], type = "response"),
               tolerance = 1e-8)
})

test_that("sparse fits take kernels on some inputs", {
  d <- kd_data(200)
  f <- augp(z ~ a + b, d, kernel = kernel_se(dims = "a") + kernel_se(dims = "b"), inducing = 15,
            seed = 2, control = augp_control(threads = 1))
  expect_true(all(is.finite(coef(f))))
  p <- predict(f, d[1:10, ], type = "response")
  expect_true(all(p > 0 & p < 1))
  expect_gt(mean((p > 0.5) == (d$z[1:10] == "yes")), 0.6)
})

test_that("bad dims are refused with a message naming the argument", {
  d <- kd_data()
  expect_error(kernel_se(dims = NA), "`dims` must not contain NA")
  expect_error(kernel_se(dims = 0), "`dims` must be input names or column numbers")
  expect_error(kernel_se(dims = 1.5), "`dims` must be input names or column numbers")
  expect_error(kernel_se(dims = c("a", "a")), "`dims` must not repeat")
  expect_error(kernel_se(dims = character(0)), "`dims` must name at least one input")
  expect_error(kernel_se(dims = TRUE), "`dims` must be input names")
  expect_error(augp(z ~ a + b, d, kernel = kernel_se(dims = "q")),
               "`kernel`: dims names \"q\", which is not an input")
  expect_error(augp(z ~ a + b, d, kernel = kernel_se(dims = 4)),
               "`kernel`: dims = 4 selects a column beyond the 2 input column")
  expect_error(augp(z ~ a + b, d, kernel = kernel_se(lengthscale = c(1, 2, 3), dims = c("a", "b"))),
               "3 lengthscales \\(ARD\\) but its dims select 2 columns")
  d$k <- 1
  expect_warning(expect_error(augp(z ~ a + b + k, d, kernel = kernel_se(dims = "a") + kernel_se(dims = "k")),
                              "every input of a kernel with dims = k is constant"))
  x <- matrix(stats::rnorm(10), 5, 2)
  expect_error(kernel_matrix(kernel_se(dims = "a"), x), "dims names \"a\", which is not an input")
})

test_that("full-Bayes default lengthscale priors are set from each kernel's own inputs", {
  ns <- asNamespace("augmentedGP")
  set.seed(4)
  X <- cbind(stats::runif(40), stats::runif(40) * 50)
  k <- ns$kernel_resolve_dims(kernel_se(dims = 1) + kernel_se(dims = 2), NULL, 2)
  tab <- ns$hyper_prior_table(k, NULL, X)
  ls_rows <- which(tab$role == "lengthscale")
  expect_equal(tab$prior[[ls_rows[1]]], ns$default_lengthscale_prior(X, 1))
  expect_equal(tab$prior[[ls_rows[2]]], ns$default_lengthscale_prior(X, 2))
  expect_false(isTRUE(all.equal(tab$prior[[ls_rows[1]]], tab$prior[[ls_rows[2]]])))
})

test_that("every kind of fit takes a kernel on some inputs", {
  k <- kernel_se(dims = "Sepal.Length") + kernel_se(dims = c("Petal.Length", "Petal.Width"))
  nms <- c("se(Sepal.Length).variance", "se(Sepal.Length).lengthscale",
           "se(Petal.Length,Petal.Width).variance")
  fixed <- augp_control(threads = 1, learn_hyper = FALSE, integrate_hyper = FALSE)
  probs_ok <- function(p) {
    expect_true(all(is.finite(as.matrix(p))))
    expect_equal(unname(rowSums(as.matrix(p))), rep(1, nrow(p)), tolerance = 1e-8)
  }
  # multi-class: shared kernel, one kernel per class, stick-breaking, sparse
  for (ctl in list(fixed, utils::modifyList(fixed, list(shared_hyper = FALSE)))) {
    f <- augp(Species ~ ., iris, kernel = k, seed = 1, control = ctl)
    probs_ok(predict(f, iris[c(1, 60, 120), ]))
    expect_true(all(nms %in% colnames(rbind(coef(f)))))
  }
  probs_ok(predict(augp(Species ~ ., iris, kernel = k, likelihood = stick_breaking(), seed = 1,
                        control = fixed), iris[c(1, 60, 120), ]))
  probs_ok(predict(augp(Species ~ ., iris, kernel = k, inducing = 12, seed = 1, control = fixed),
                   iris[c(1, 60, 120), ]))
  # ordinal (cut points learned), robust regression with a factor's linear kernel
  d <- data.frame(y = cut(iris$Sepal.Width, 3, ordered_result = TRUE), iris[c(1, 3, 4)])
  fo <- augp(y ~ ., d, kernel = k, seed = 1, control = fixed)
  probs_ok(predict(fo, d[1:3, ]))
  ft <- augp(Sepal.Width ~ ., iris, kernel = k + kernel_linear(dims = "Species"),
             likelihood = student_t(), seed = 1, control = fixed)
  expect_true("linear(Species).variance" %in% names(coef(ft)))
  expect_true(all(is.finite(predict(ft, iris[1:5, ]))))
})
