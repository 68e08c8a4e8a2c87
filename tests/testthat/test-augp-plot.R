test_that("plots are ggplot objects with the right layers and data", {
  d <- augp_toy()
  fit <- augp(y ~ x1 + x2, d, control = augp_quick())
  p <- ggplot2::autoplot(fit, type = "predictive", grid = 20)
  expect_s3_class(p, "ggplot")
  expect_equal(nrow(p$data), 400)
  expect_true(all(p$data$prob >= 0 & p$data$prob <= 1))
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  expect_true(all(c("GeomRaster", "GeomContour", "GeomPoint") %in% geoms))
  expect_equal(nrow(p$layers[[which(geoms == "GeomPoint")]]$data), 40)

  e <- ggplot2::autoplot(fit, type = "elbo")
  expect_equal(nrow(e$data), length(fit$engine$elbo))
  l <- ggplot2::autoplot(fit, type = "latent")
  expect_equal(nrow(l$data), 40)
  expect_error(ggplot2::autoplot(fit, type = "trace"), "Gibbs")

  f1 <- augp(y ~ x1, d, control = augp_quick())
  p1 <- ggplot2::autoplot(f1)
  geoms1 <- vapply(p1$layers, function(l) class(l$geom)[1], "")
  expect_true(all(c("GeomRibbon", "GeomLine", "GeomPoint") %in% geoms1))
  expect_true(all(p1$data$lwr <= p1$data$prob & p1$data$prob <= p1$data$upr))

  fg <- augp(y ~ x1 + g, d, control = augp_quick())
  expect_error(ggplot2::autoplot(fg), "one or two numeric predictors")

  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_s3_class(plot(fit, type = "elbo"), "ggplot")
})

test_that("trace plot for Gibbs fits", {
  d <- augp_toy(25)
  fit <- suppressWarnings(augp(y ~ x1, d, method = "gibbs", seed = 2,
                               control = augp_control(iter = 60, warmup = 30, chains = 2,
                                                      threads = 1, learn_hyper = FALSE)),
                          classes = "augp_convergence_warning")
  p <- ggplot2::autoplot(fit, type = "trace", which = c(1, 5))
  expect_s3_class(p, "ggplot")
  expect_equal(nrow(p$data), 2 * 30 * 2)
  expect_error(ggplot2::autoplot(fit, type = "elbo"), "variational")
  expect_error(ggplot2::autoplot(fit, type = "trace", which = 99), "`which`")
})
