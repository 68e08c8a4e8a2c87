# The logistic-softmax likelihood stores one-class rows compactly (class and count) and
# rows with several counted classes as a dense matrix: both forms must give the same
# numbers.
scr_ns <- asNamespace("augmentedGP")

test_that("one-class rows held compactly give the numbers of the dense counts", {
  set.seed(31)
  n <- 40; K <- 3
  cls <- sample.int(K, n, replace = TRUE)
  w <- stats::runif(n, 0.5, 2)
  Y <- matrix(0, n, K)
  Y[cbind(seq_len(n), cls)] <- w
  spec <- function(Y) list(type = "logistic_softmax", Y = Y, bijective = FALSE, theta = c(1, 2, 0.5))
  m <- matrix(stats::rnorm((n + 2) * K, -1), n + 2, K)
  m[n + 2, ] <- m[n + 1, ]
  v <- matrix(stats::runif((n + 2) * K, 0.1, 1), n + 2, K)
  v[n + 2, ] <- v[n + 1, ]
  Z <- matrix(stats::rnorm(200 * K), 200, K)
  # compact: the n rows and the two one-class rows (1, 0, 0), (0, 1, 0) at one point;
  # dense: the n rows and the row (1, 1, 0), which counts two classes at that point
  Yc <- rbind(Y, c(1, 0, 0), c(0, 1, 0))
  Yd <- rbind(Y, c(1, 1, 0))
  md <- m[seq_len(n + 1), ]
  vd <- v[seq_len(n + 1), ]
  ec <- scr_ns$.lik_expected_loglik_cpp(spec(Yc), m, v, Z)
  ed <- scr_ns$.lik_expected_loglik_cpp(spec(Yd), md, vd, Z)
  expect_equal(ec[seq_len(n)], ed[seq_len(n)], tolerance = 1e-12)
  dc <- scr_ns$.lik_expected_derivs_cpp(spec(Yc), m, v, Z)
  dd <- scr_ns$.lik_expected_derivs_cpp(spec(Yd), md, vd, Z)
  for (nm in names(dc)) {
    if (is.matrix(dc[[nm]]) && nrow(dc[[nm]]) == n + 2) {
      expect_equal(dc[[nm]][seq_len(n), , drop = FALSE], dd[[nm]][seq_len(n), , drop = FALSE],
                   tolerance = 1e-12, label = nm)
      # the two-class row's gradient is the sum of its two one-class rows'
      if (grepl("^g", nm)) {
        expect_equal(colSums(dc[[nm]][n + 1:2, , drop = FALSE]), dd[[nm]][n + 1, ], tolerance = 1e-10,
                     label = nm)
      }
    }
  }
  # the class weights learned from the counts: a two-class row is two one-class rows
  lc <- scr_ns$.lik_learn_params_cpp(spec(Yc), m, v)
  ld <- scr_ns$.lik_learn_params_cpp(spec(Yd), md, vd)
  expect_equal(lc$params$theta, ld$params$theta, tolerance = 1e-10)
  expect_equal(lc$gain, ld$gain, tolerance = 1e-10)
  # bad counts are still refused in either form
  expect_error(scr_ns$.lik_expected_loglik_cpp(spec(rbind(Y, c(-1, 0, 0))), m[1:41, ], v[1:41, ], Z),
               "non-negative")
  expect_error(scr_ns$.lik_expected_loglik_cpp(spec(rbind(Y, c(NaN, 1, 0))), m[1:41, ], v[1:41, ], Z),
               "non-negative")
})
