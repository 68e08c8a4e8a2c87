test_that("VI and Gibbs agree on a small real data set", {
  skip_if_not_installed("MASS")
  d <- MASS::Pima.tr[1:60, ]
  k <- kernel_se(variance = 1)  # lengthscale: one standard deviation of each input
  ctl <- augp_control(learn_hyper = FALSE, iter = 600, warmup = 200, chains = 2,
                      threads = 2)
  fv <- augp(type ~ glu + bmi, d, kernel = k, method = "vi", control = ctl)
  fg <- augp(type ~ glu + bmi, d, kernel = k, method = "gibbs", control = ctl, seed = 4)
  nd <- MASS::Pima.te[1:40, ]
  pv <- predict(fv, nd)
  pg <- predict(fg, nd)
  # PG mean-field VI is known to be close for logistic GP classification:
  # probabilities within 0.06 on average, 0.15 at worst.
  expect_lt(mean(abs(pv - pg)), 0.06)
  expect_lt(max(abs(pv - pg)), 0.15)
  expect_gt(cor(pv, pg), 0.97)
})
