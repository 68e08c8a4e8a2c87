# Plots: every plot type builds for every kind of fit, with the layers it promises.

plot_geoms <- function(p) vapply(p$layers, function(l) class(l$geom)[1], "")

expect_builds <- function(p) {
  expect_s3_class(p, "ggplot")
  b <- ggplot2::ggplot_build(p)
  expect_s3_class(b, "ggplot_built")
  # and draws: the gtable is where axis breaks and labels are computed
  expect_s3_class(ggplot2::ggplot_gtable(b), "gtable")
  invisible(b)
}

# Observed points: a dark outline layer under a layer coloured by the observed class.
expect_outlined_points <- function(p, n) {
  g <- plot_geoms(p)
  pts <- which(g == "GeomPoint")
  outline <- pts[vapply(p$layers[pts], function(l) identical(l$aes_params$colour, "grey10"),
                        logical(1))]
  expect_true(length(outline) >= 1L)
  coloured <- outline[1] + 1L
  expect_identical(g[coloured], "GeomPoint")
  expect_true("colour" %in% names(p$layers[[coloured]]$mapping))
  expect_false("fill" %in% names(p$layers[[coloured]]$mapping))
  if (!missing(n)) expect_equal(nrow(p$layers[[coloured]]$data), n)
}

expect_augp_theme <- function(p) expect_identical(p$theme$plot.title$face, "bold")

# The data of the inducing-point layer of a plot (NULL if there is none).
plot_inducing_layer <- function(p) {
  for (l in p$layers) {
    if (!is.null(l$data$what) && any(grepl("inducing", l$data$what))) return(l$data)
  }
  NULL
}

test_that("autoplot is re-exported: autoplot(fit) works without attaching ggplot2", {
  expect_true("autoplot" %in% getNamespaceExports("augmentedGP"))
  expect_identical(augmentedGP::autoplot, ggplot2::autoplot)
  d <- augp_toy(30)
  fit <- augp(y ~ x1, d, control = augp_quick())
  p <- eval(quote(autoplot(fit)), envir = list(fit = fit),
            enclos = new.env(parent = asNamespace("augmentedGP")))
  expect_s3_class(p, "ggplot")
})

test_that("Bernoulli fits: 1-D curve with a labelled band, 2-D surface, outlined points", {
  d <- augp_toy()
  f1 <- augp(y ~ x1, d, control = augp_quick())
  p1 <- autoplot(f1)
  expect_builds(p1)
  geoms1 <- plot_geoms(p1)
  expect_true(all(c("GeomRibbon", "GeomLine", "GeomPoint") %in% geoms1))
  curve <- p1$layers[[which(geoms1 == "GeomLine")]]$data
  expect_true(all(curve$lower <= curve$estimate & curve$estimate <= curve$upper))
  expect_true(all(curve$estimate >= 0 & curve$estimate <= 1))
  expect_equal(unique(as.character(curve$category)), "pos")
  expect_match(p1$labels$subtitle, "95% credible band")
  expect_match(autoplot(f1, level = 0.8)$labels$subtitle, "80% credible band")
  expect_identical(p1$labels$y, "P(pos)")
  expect_outlined_points(p1, 40)
  expect_augp_theme(p1)

  f2 <- augp(y ~ x1 + x2, d, control = augp_quick())
  p2 <- autoplot(f2, grid = 20)
  expect_builds(p2)
  expect_equal(nrow(p2$data), 400)
  expect_true(all(p2$data$prob >= 0 & p2$data$prob <= 1))
  expect_true(all(c("GeomRaster", "GeomContour", "GeomPoint") %in% plot_geoms(p2)))
  expect_outlined_points(p2, 40)
  # the surface is on the fill scale, the observed classes on a colour scale of their own
  expect_s3_class(p2$scales$get_scales("fill"), "ScaleContinuous")
  expect_equal(p2$scales$get_scales("colour")$get_limits(), c("neg", "pos"))
  expect_augp_theme(p2)
  expect_null(plot_inducing_layer(p2))

  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_s3_class(plot(f2, type = "elbo"), "ggplot")
})

test_that("fits with a factor input or more than two inputs get conditional effects", {
  d <- augp_toy()
  d$x3 <- stats::rnorm(nrow(d))
  fit <- augp(y ~ x1 + x2 + g + x3, d, control = augp_quick())
  p <- autoplot(fit, grid = 15)
  b <- expect_builds(p)
  expect_identical(p$labels$title, "Conditional effects")
  expect_match(p$labels$subtitle, "95% credible interval")
  expect_match(p$labels$caption, "g = a")
  expect_augp_theme(p)
  geoms <- plot_geoms(p)
  expect_true(all(c("GeomRibbon", "GeomLine", "GeomErrorbar", "GeomPoint", "GeomRug") %in%
                    geoms))
  curves <- p$layers[[which(geoms == "GeomLine")]]$data
  expect_equal(levels(curves$effect), c("x1", "x2", "g", "x3"))
  expect_equal(as.vector(table(curves$effect)[c("x1", "x2", "x3")]), rep(15L, 3))
  expect_equal(range(curves$x[curves$effect == "x1"]), range(d$x1))
  dots <- p$layers[[which(geoms == "GeomErrorbar")]]$data
  expect_equal(nrow(dots), 3L)
  expect_true(all(dots$lower <= dots$estimate & dots$estimate <= dots$upper))
  # the factor panel's axis shows the levels
  k <- which(levels(curves$effect) == "g")
  expect_equal(b$layout$panel_params[[k]]$x$get_labels(), c("a", "b", "c"))

  # each prediction is predict() at the reference point with one input varied
  ref <- data.frame(x1 = mean(d$x1), x2 = mean(d$x2), x3 = mean(d$x3),
                    g = factor(c("a", "b", "c"), levels = c("a", "b", "c")))
  pr <- predict(fit, ref, type = "response", interval = "credible")
  expect_equal(dots$estimate, pr$fit, tolerance = 1e-8)
  expect_equal(dots$upper, pr$upr, tolerance = 1e-8)

  # `effects` picks the panels; plot() goes the same way
  pe <- autoplot(fit, effects = c("g", "x1"), grid = 10)
  expect_builds(pe)
  expect_equal(levels(pe$layers[[which(plot_geoms(pe) == "GeomLine")]]$data$effect),
               c("g", "x1"))
  expect_error(autoplot(fit, effects = "nope"), "`effects`: 'nope'")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit, grid = 10)$labels$title, "Conditional effects")
  expect_error(autoplot(fit, grid = 1), "`grid`")
  expect_error(autoplot(fit, level = 1), "`level`")
  # one or two numeric inputs: type = "effects" asks for the panels explicitly
  f2 <- augp(y ~ x1 + x2, d, control = augp_quick())
  pf <- autoplot(f2, type = "effects", grid = 10)
  expect_identical(pf$labels$title, "Conditional effects")
  expect_builds(pf)
})

test_that("a factor with one numeric input, transformed inputs and matrix fits plot", {
  d <- augp_toy()
  fg <- augp(y ~ x1 + g, d, control = augp_quick())
  expect_builds(autoplot(fg, grid = 10))
  # a variable used through a transformation is shown on its own scale
  ft <- augp(y ~ I(x1^2) + x2 + g, d, control = augp_quick())
  pt <- autoplot(ft, grid = 10)
  expect_builds(pt)
  ct <- pt$layers[[which(plot_geoms(pt) == "GeomLine")]]$data
  expect_equal(range(ct$x[ct$effect == "x1"]), range(d$x1))
  # matrix fits predict on matrices
  X <- cbind(a = d$x1, b = d$x2, c = stats::rnorm(40))
  fm <- augp_fit(X, d$y, control = augp_quick())
  pm <- autoplot(fm, grid = 10)
  expect_builds(pm)
  expect_equal(levels(pm$layers[[which(plot_geoms(pm) == "GeomLine")]]$data$effect),
               c("a", "b", "c"))
})

test_that("multi-class fits: 1-D curves per category, 2-D class map, effects per category", {
  set.seed(4)
  d <- iris[sample(150, 45), ]
  ctl <- augp_control(hyper_maxit = 20, maxit = 40, threads = 1, pred_draws = 100)
  f1 <- augp(Species ~ Petal.Length, d, control = ctl)
  p1 <- autoplot(f1)
  expect_builds(p1)
  curve <- p1$layers[[which(plot_geoms(p1) == "GeomLine")]]$data
  expect_equal(levels(curve$category), levels(iris$Species))
  expect_equal(nrow(curve), 3L * 100L)
  expect_outlined_points(p1, 45)  # one trial per row: each row on its own class's curve
  expect_match(p1$labels$subtitle, "95% credible bands")

  f2 <- augp(Species ~ Petal.Length + Petal.Width, d, control = ctl)
  p2 <- autoplot(f2, grid = 12)
  expect_builds(p2)
  expect_outlined_points(p2, 45)
  expect_identical(p2$scales$get_scales("fill")$name, "Most probable class")
  expect_identical(p2$scales$get_scales("colour")$name, "Observed class (points)")

  fa <- augp(Species ~ ., d, control = ctl)
  pa <- autoplot(fa, grid = 10)
  expect_builds(pa)
  ca <- pa$layers[[which(plot_geoms(pa) == "GeomLine")]]$data
  expect_equal(nrow(ca), 4L * 10L * 3L)
  expect_identical(pa$scales$get_scales("colour")$get_limits(), levels(iris$Species))
  expect_builds(autoplot(fa, type = "latent"))
})

test_that("stick-breaking and binomial count fits plot proportions", {
  set.seed(5)
  d <- data.frame(x = seq(0, 1, length.out = 25), z = stats::rnorm(25))
  d$Y <- t(sapply(d$x, function(x) stats::rmultinom(1, 6, c(x, 1 - x, 0.5))))
  ctl <- augp_control(hyper_maxit = 20, maxit = 40, threads = 1, pred_draws = 100)
  sb <- augp(Y ~ x, d, control = ctl)
  p <- autoplot(sb)
  expect_builds(p)
  expect_outlined_points(p, 25 * 3)
  pts <- p$layers[[which(plot_geoms(p) == "GeomPoint")[2]]]$data
  expect_equal(pts$proportion[pts$category == sb$levels[1]], d$Y[, 1] / 6)
  expect_builds(autoplot(augp(Y ~ x + z, d, control = ctl), grid = 10))

  d$s <- d$Y[, 1]
  bi <- augp(cbind(s, 6 - s) ~ x, d, control = augp_quick())
  pb <- autoplot(bi)
  expect_builds(pb)
  # proportions, not classes: the legend shows the success level only
  expect_equal(pb$scales$get_scales("colour")$get_limits(), bi$levels[2])
})

test_that("sparse fits show their inducing points in data units", {
  d <- augp_toy()
  ctl <- augp_quick()
  s1 <- augp(y ~ x1, d, inducing = 6, control = ctl, seed = 1)
  p1 <- autoplot(s1)
  expect_builds(p1)
  z1 <- plot_inducing_layer(p1)
  expect_equal(nrow(z1), 6L)
  Z <- s1$engine$Z
  expect_equal(sort(z1$x1), sort(Z[, 1] * s1$scale[["x1"]] + s1$centre[["x1"]]))
  expect_true(all(z1$x1 >= min(d$x1) - 1e-8 & z1$x1 <= max(d$x1) + 1e-8))

  s2 <- augp(y ~ x1 + x2, d, inducing = 7, control = ctl, seed = 1)
  p2 <- autoplot(s2, grid = 15)
  expect_builds(p2)
  z2 <- plot_inducing_layer(p2)
  expect_equal(nrow(z2), 7L)
  expect_equal(as.matrix(z2[c("x1", "x2")]),
               sweep(sweep(s2$engine$Z, 2, s2$scale, "*"), 2, s2$centre, "+"),
               ignore_attr = TRUE)
  # exact fits have none
  expect_null(plot_inducing_layer(autoplot(augp(y ~ x1, d, control = ctl))))
})

test_that("the SVI ELBO plot smooths the minibatch estimates and marks the full-data ELBO", {
  set.seed(8)
  n <- 300
  d <- data.frame(x1 = stats::rnorm(n), x2 = stats::rnorm(n))
  d$y <- factor(stats::rbinom(n, 1, stats::plogis(2 * d$x1)), labels = c("a", "b"))
  fit <- augp(y ~ x1 + x2, d, inducing = 8, seed = 1,
              control = augp_control(hyper_maxit = 20, threads = 1, batch_size = 50,
                                     svi_epochs = 3))
  e <- autoplot(fit, type = "elbo")
  expect_builds(e)
  expect_match(e$labels$title, "minibatch")
  geoms <- plot_geoms(e)
  expect_equal(sum(geoms == "GeomLine"), 2L)
  expect_true(all(c("GeomHline", "GeomVline") %in% geoms))
  tr <- fit$engine$elbo
  expect_equal(nrow(e$data), length(tr))
  expect_equal(e$data$elbo, tr)
  # running mean over one epoch (6 minibatches of 50)
  w <- round(fit$engine$sparse$iterations / fit$engine$sparse$epochs)
  expect_equal(w, 6)
  i <- length(tr)
  expect_equal(e$data$smooth[i], mean(tr[(i - w + 1):i]))
  expect_equal(e$data$smooth[1], tr[1])
  b <- ggplot2::ggplot_build(e)
  h <- b$data[[which(geoms == "GeomHline")]]
  expect_equal(unique(h$yintercept), fit$engine$elbo_full)
  expect_true(any(grepl("full-data ELBO", e$scales$get_scales("colour")$breaks)))
  expect_equal(b$data[[which(geoms == "GeomVline")]]$xintercept, seq(w, i, by = w))
  # full-batch sparse and exact fits: the plain trace, titled by what it holds
  ex <- autoplot(augp(y ~ x1, d[1:60, ], control = augp_quick()), type = "elbo")
  expect_builds(ex)
  expect_match(ex$labels$subtitle, "Hyperparameter search, then CAVI")
  expect_equal(sum(plot_geoms(ex) == "GeomLine"), 1L)
})

test_that("latent, trace and ELBO plots for Gibbs fits", {
  d <- augp_toy(25)
  fit <- short_gibbs(augp(y ~ x1, d, method = "gibbs", seed = 2,
              control = augp_control(iter = 60, warmup = 30, chains = 2, threads = 1,
                                     learn_hyper = FALSE)))
  p <- autoplot(fit, type = "trace", which = c(1, 5))
  expect_builds(p)
  expect_equal(nrow(p$data), 2 * 30 * 2)
  expect_augp_theme(p)
  expect_builds(autoplot(fit))
  l <- autoplot(fit, type = "latent")
  expect_builds(l)
  expect_equal(nrow(l$data), 25)
  expect_error(autoplot(fit, type = "elbo"), "variational")
  expect_error(autoplot(fit, type = "trace", which = 99), "`which`")
  fv <- augp(y ~ x1, d, control = augp_quick())
  expect_error(autoplot(fv, type = "trace"), "Gibbs")
  g2 <- short_gibbs(augp(y ~ x1, d, method = "gibbs", seed = 2,
             control = augp_control(iter = 40, warmup = 20, chains = 1, threads = 1,
                                    hyper_maxit = 20)))
  eg <- autoplot(g2, type = "elbo")
  expect_builds(eg)
  expect_match(eg$labels$subtitle, "before sampling")
})
