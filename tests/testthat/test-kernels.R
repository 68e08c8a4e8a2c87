# Kernels: values against R references, symmetry, PSD, combination, gradients, checks.
ns <- asNamespace("augmentedGP")

set.seed(101)
kx <- matrix(rnorm(30 * 3), 30, 3)
ky <- matrix(rnorm(7 * 3), 7, 3)

ref_dist <- function(x, l) as.matrix(stats::dist(sweep(x, 2, rep_len(l, ncol(x)), "/")))

test_that("stationary kernels equal an R reference built from dist()", {
  l <- c(0.7, 1.3, 2)
  r <- ref_dist(kx, l)
  expect_equal(kernel_matrix(kernel_se(2, l), kx), 2 * exp(-r^2 / 2), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(kernel_matrix(kernel_matern(0.5, 1.5, l), kx), 1.5 * exp(-r),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(kernel_matrix(kernel_matern(1.5, 1, l), kx),
               (1 + sqrt(3) * r) * exp(-sqrt(3) * r), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(kernel_matrix(kernel_matern(2.5, 1, 0.8), kx),
               {r8 <- ref_dist(kx, 0.8); (1 + sqrt(5) * r8 + 5 * r8^2 / 3) * exp(-sqrt(5) * r8)},
               tolerance = 1e-12, ignore_attr = TRUE)
  x1 <- kx[, 1, drop = FALSE]
  d1 <- as.matrix(stats::dist(x1))
  expect_equal(kernel_matrix(kernel_periodic(1.2, 0.6, 2.5), x1),
               1.2 * exp(-2 * sin(pi * d1 / 2.5)^2 / 0.6^2), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(kernel_matrix(kernel_linear(3, l), kx),
               3 * kx %*% diag(1 / l^2) %*% t(kx), tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("cross-covariances match the reference", {
  l <- 1.1
  d2 <- outer(rowSums(kx^2), rowSums(ky^2), "+") - 2 * kx %*% t(ky)
  Kxy <- kernel_matrix(kernel_se(1, l), kx, ky)
  expect_equal(dim(Kxy), c(30L, 7L))
  expect_equal(Kxy, exp(-pmax(d2, 0) / (2 * l^2)), tolerance = 1e-10, ignore_attr = TRUE)
})

kernel_zoo <- list(
  se = kernel_se(1.3, c(0.5, 1, 2)),
  m12 = kernel_matern(0.5, 1, 0.9),
  m32 = kernel_matern(1.5, 2, c(1, 2, 0.5)),
  m52 = kernel_matern(2.5, 0.5, 1.2),
  lin = kernel_linear(0.7, c(1, 2, 3)),
  per = kernel_periodic(1, c(0.8, 1.1, 1.4), 1.7),
  sum = kernel_se(1, 0.8) + kernel_linear(0.3),
  prod = kernel_matern(1.5, 1, 1) * kernel_periodic(2, 1, 3),
  nested = (kernel_se(1, c(1, 2, 1)) + kernel_matern(0.5)) * kernel_linear(1, 2)
)

test_that("kernel matrices are symmetric and positive semi-definite", {
  for (nm in names(kernel_zoo)) {
    K <- kernel_matrix(kernel_zoo[[nm]], kx)
    expect_true(isSymmetric(K, tol = 1e-12), info = nm)
    ev <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
    expect_gte(min(ev), -1e-10 * max(ev))
    expect_equal(diag(K), ns$kernel_diag(kernel_zoo[[nm]], kx), tolerance = 1e-12)
  }
})

test_that("+ and * combine kernels elementwise", {
  k1 <- kernel_se(1, 0.8)
  k2 <- kernel_matern(2.5, 0.5, 2)
  K1 <- kernel_matrix(k1, kx)
  K2 <- kernel_matrix(k2, kx)
  expect_equal(kernel_matrix(k1 + k2, kx), K1 + K2, tolerance = 1e-12)
  expect_equal(kernel_matrix(k1 * k2, kx), K1 * K2, tolerance = 1e-12)
  expect_equal(kernel_matrix((k1 + k2) * k1, kx), (K1 + K2) * K1, tolerance = 1e-12)
  expect_s3_class(k1 + k2, "augp_kernel")
  expect_error(k1 - k2, "only be combined")
  expect_error(k1 + 1, "must be kernels")
  expect_error(2 * k1, "must be kernels")
})

test_that("log-parameter get/set round-trips", {
  k <- kernel_zoo$nested
  th <- ns$kernel_get_params(k)
  expect_length(th, 4 + 2 + 2)
  k2 <- ns$kernel_set_params(k, th + 0.1)
  expect_equal(unname(ns$kernel_get_params(k2)), unname(th) + 0.1)
  expect_equal(kernel_matrix(ns$kernel_set_params(k, th), kx), kernel_matrix(k, kx))
  expect_error(ns$kernel_set_params(k, th[-1]), "elements")
})

test_that("analytic gradients match finite differences", {
  x <- kx[1:12, ]
  for (nm in names(kernel_zoo)) {
    k <- kernel_zoo[[nm]]
    th <- ns$kernel_get_params(k)
    g <- ns$kernel_grad(k, x)
    expect_equal(g$K, kernel_matrix(k, x), tolerance = 1e-12)
    expect_length(g$grad, length(th))
    for (j in seq_along(th)) {
      h <- 1e-5
      tp <- th; tp[j] <- tp[j] + h
      tm <- th; tm[j] <- tm[j] - h
      fd <- (kernel_matrix(ns$kernel_set_params(k, tp), x) -
               kernel_matrix(ns$kernel_set_params(k, tm), x)) / (2 * h)
      expect_lt(max(abs(fd - g$grad[[j]])), 1e-6 * max(1, max(abs(fd))))
    }
  }
})

test_that("constructors reject bad parameters, naming the argument", {
  expect_error(kernel_se(variance = -1), "variance")
  expect_error(kernel_se(variance = c(1, 2)), "variance")
  expect_error(kernel_se(lengthscale = 0), "lengthscale")
  expect_error(kernel_se(lengthscale = c(1, NA)), "lengthscale")
  expect_error(kernel_se(lengthscale = numeric(0)), "lengthscale")
  expect_error(kernel_matern(nu = 1), "nu")
  expect_error(kernel_matern(nu = "a"), "nu")
  expect_error(kernel_periodic(period = -2), "period")
  expect_error(kernel_linear(variance = Inf), "variance")
  expect_error(kernel_se(variance = "a"), "variance")
  expect_error(kernel_matrix(kernel_se(lengthscale = c(1, 2)), kx), "lengthscales")
  expect_error(kernel_matrix(kernel_se(), kx, ky[, 1:2]), "columns")
  expect_error(kernel_matrix(list(), kx), "augp_kernel")
})

test_that("kernels print and format", {
  expect_output(print(kernel_se(2, c(1, 3))), "kernel_se\\(variance = 2, lengthscale = c\\(1, 3\\)\\)")
  expect_match(format(kernel_se() * (kernel_linear() + kernel_matern(0.5))),
               "kernel_se.* \\* \\(kernel_linear.* \\+ kernel_matern\\(nu = 0.5")
  expect_match(format(kernel_periodic(period = 2)), "period = 2")
})

test_that("kernel_matrix accepts vectors as one-column inputs", {
  x <- seq(0, 1, length.out = 4)
  expect_equal(kernel_matrix(kernel_se(), x), exp(-as.matrix(stats::dist(x))^2 / 2),
               ignore_attr = TRUE)
})

test_that("the gradient contraction equals sum(M * dK) for every kernel family", {
  set.seed(21)
  n <- 30
  X <- matrix(rnorm(n * 3), n)
  M <- matrix(rnorm(n * n), n)  # not symmetric on purpose
  ks <- list(kernel_se(1.3, 0.7), kernel_se(0.8, c(0.5, 1, 2)),
             kernel_matern(0.5, 1, 0.8), kernel_matern(1.5, 1.2, c(0.6, 1.2, 0.9)),
             kernel_matern(2.5, 0.9, 1.1), kernel_linear(0.5, c(1, 2, 0.5)),
             kernel_periodic(1, 1, 2), kernel_se(1, 1) + kernel_linear(0.5),
             kernel_se(1, c(1, 2, 3)) * kernel_periodic(1, 1, 2),
             (kernel_matern(1.5, 1, 2) + kernel_se(0.5, 0.4)) * kernel_linear(0.7))
  for (k in ks) {
    fl <- eng_ns$kernel_flatten(k)
    g <- eng_ns$.gp_kernel_grad_cpp(fl, X)
    explicit <- vapply(g$grad, function(D) sum(M * D), numeric(1))
    contracted <- eng_ns$.gp_kernel_contract_cpp(fl, X, M)
    expect_length(contracted, length(fl$theta))
    expect_equal(contracted, explicit, tolerance = 1e-10, info = format(k))
  }
  expect_error(eng_ns$.gp_kernel_contract_cpp(eng_ns$kernel_flatten(kernel_se()), X, M[-1, ]),
               "n x n")
})
