#' Plot an augmented GP fit
#'
#' `autoplot()` builds a ggplot; `plot()` draws it and returns it invisibly.
#' Every fit has a predictive plot, whatever its inputs and likelihood.
#'
#' * `"predictive"` (the default): with one numeric input, the posterior mean
#'   of the response probability against the input with a pointwise
#'   credible band and the data; with two numeric inputs, the probability
#'   surface on a grid (Bernoulli and binomial: the success probability with
#'   its 0.5 contour; several categories: the most probable class shaded by
#'   its probability) with the data. With more inputs, a factor input, or
#'   `effects` given, the conditional-effects view of `"effects"`. Sparse
#'   fits show their inducing points on the one- and two-input plots.
#' * `"effects"`: conditional effects (partial dependence at a reference
#'   point), one panel per input: the response probability along a grid of
#'   that input (numeric inputs, with a credible band and a rug of the
#'   observed values) or at each of its levels (factors, point and
#'   interval), the other inputs held at their mean (numeric) or reference
#'   level (factors: the first level). Bernoulli and binomial fits show the
#'   probability of the success level; with several categories, one line
#'   (or point) per category.
#' * `"elbo"`: the ELBO trace of a variational fit. For minibatch (SVI)
#'   fits the noisy minibatch estimates are shown faintly with their running
#'   mean over one epoch, epoch boundaries, and the full-data ELBO at the end.
#'   For Gibbs fits with learned hyperparameters, the trace of the
#'   hyperparameter search run before sampling.
#' * `"trace"`: trace plots of the latent function at a few observations
#'   (Gibbs fits; with sampled hyperparameters, `augp_control(sample_hyper =
#'   TRUE)`, the default shows the hyperparameters instead); `which` indexes the latent values `f[i]` or, with several
#'   latent functions, `f[i,category]` in the order of `as_draws_array()`
#'   (default: four observations, or with several latent functions one panel
#'   per class or stick, at the first observation).
#' * `"latent"`: posterior mean and credible interval of the latent function
#'   at each training point, ordered by the mean and coloured by the response.
#' * `"noise"`: regression fits over one numeric input: the standard deviation
#'   of the observation noise along the input (`predict(type = "noise")`), with
#'   its credible band for input-dependent noise ([heteroscedastic_gaussian()]),
#'   and the absolute residuals of the posterior mean as points.
#'
#' Formula fits are evaluated on data frames (factor levels as in the data),
#' matrix fits on matrices, through [predict.augp()] with
#' `interval = "credible"`.
#'
#' @param object,x A fit from [augp()] or [augp_fit()].
#' @param type Which plot; see Details.
#' @param effects For `"predictive"` and `"effects"`: names of the inputs to
#'   show, one panel each (default: every input that varies). Inputs are the
#'   variables of the formula (for matrix fits, the columns of `x`).
#' @param which For `"trace"`: indices of the latent values to show.
#' @param grid Number of grid points per numeric input.
#' @param level Probability of the credible bands and intervals.
#' @param ... For `plot()`: arguments of `autoplot()`; otherwise unused.
#' @return A `ggplot` object (`plot()` returns it invisibly).
#' @seealso [predict.augp()]
#' @examples
#' set.seed(1)
#' d <- data.frame(x1 = rnorm(40), x2 = rnorm(40), x3 = rnorm(40),
#'                 g = factor(sample(c("a", "b"), 40, replace = TRUE)))
#' d$y <- factor(d$x1 + (d$g == "b") + rnorm(40, sd = 0.5) > 0.5,
#'               labels = c("no", "yes"))
#' fit <- augp(y ~ ., data = d)
#' p <- autoplot(fit)                       # conditional effects of x1, x2, x3, g
#' p <- autoplot(fit, effects = c("x1", "g"))
#' p <- autoplot(fit, type = "elbo")
#' fit1 <- augp(y ~ x1, data = d)
#' p <- autoplot(fit1)                      # curve with its credible band
#' @importFrom ggplot2 autoplot
#' @export
autoplot.augp <- function(object, type = c("predictive", "effects", "elbo", "trace", "latent", "noise"),
                          effects = NULL, which = NULL, grid = 60L, level = 0.95, ...) {
  type <- check_choice(type, "type", c("predictive", "effects", "elbo", "trace", "latent", "noise"))
  grid <- check_count(grid, "grid", min = 2)
  check_number(level, "level", min = 0, max = 1, min_open = TRUE)
  if (level >= 1) stop("`level` must be strictly between 0 and 1.", call. = FALSE)
  switch(type,
         predictive = plot_predictive(object, effects, grid, level),
         effects = plot_effects(object, effects, grid, level),
         elbo = plot_elbo(object),
         trace = plot_trace(object, which),
         latent = plot_latent(object, level),
         noise = plot_noise(object, grid, level))
}

#' @rdname autoplot.augp
#' @export
plot.augp <- function(x, type = c("predictive", "effects", "elbo", "trace", "latent", "noise"), ...) {
  p <- autoplot.augp(x, type = type, ...)
  print(p)
  invisible(p)
}

#' @importFrom ggplot2 autoplot
#' @export
ggplot2::autoplot

#' @importFrom ggplot2 ggplot aes .data geom_line geom_point geom_ribbon geom_raster
#'   geom_contour geom_pointrange geom_errorbar geom_rug geom_blank geom_hline geom_vline
#'   facet_wrap labs scale_fill_gradient2 scale_colour_manual scale_fill_manual
#'   scale_shape_manual theme_minimal theme element_text element_blank
NULL

# ---- Shared look ------------------------------------------------------------------

# The theme of every plot of the package.
theme_augp <- function(base_size = 11) {
  theme_minimal(base_size = base_size) +
    theme(plot.title = element_text(face = "bold"),
          plot.subtitle = element_text(colour = "grey30", size = ggplot2::rel(0.85)),
          plot.caption = element_text(colour = "grey40", size = ggplot2::rel(0.8)),
          strip.text = element_text(face = "bold"),
          panel.grid.minor = element_blank(),
          legend.position = "bottom")
}

# Colours of K categories: the Okabe-Ito palette (colour-blind safe) for up to eight,
# else K hues evenly spaced around the colour wheel.
augp_palette <- function(levels) {
  oi <- c("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
          "#999999")
  k <- length(levels)
  col <- if (k <= length(oi)) oi[seq_len(k)] else hue_hex((seq_len(k) - 1) / k, 0.7, 0.75)
  stats::setNames(col, levels)
}

# "#RRGGBB" of the HSV colours (h, s, v), all in [0, 1].
hue_hex <- function(h, s, v) {
  f <- function(n) {
    k <- (n + 6 * h) %% 6
    v - v * s * pmax(0, pmin(k, 4 - k, 1))
  }
  sprintf("#%02X%02X%02X", round(255 * f(5)), round(255 * f(3)), round(255 * f(1)))
}

# Colour of a single curve (one response column) and of its band.
AUGP_LINE <- "grey15"
AUGP_BAND <- "grey70"

# Observed data points: a dark outline (a slightly larger dark point underneath)
# around a point coloured by the observed class. The class colour is on the
# `colour` scale, so it never shares a scale with a filled surface or class map.
# Points shrink and fade as their number grows.
geom_observed <- function(data, mapping, size = NULL) {
  n <- nrow(data)
  if (is.null(size)) size <- if (n <= 300) 1.7 else if (n <= 1000) 1.2 else 0.7
  alpha <- if (n <= 1000) 0.85 else 0.5
  list(geom_point(data = data, mapping = mapping[setdiff(names(mapping), "colour")],
                  inherit.aes = FALSE, colour = "grey10", size = size + if (n <= 1000) 0.9 else 0.4,
                  alpha = alpha),
       geom_point(data = data, mapping = mapping, inherit.aes = FALSE, size = size,
                  alpha = alpha))
}

# The colour scale of observed classes (the levels of `observed` present, coloured
# as in augp_palette(levels)) with legend keys drawn as outlined points.
scale_observed <- function(levels, observed, name) {
  pal <- augp_palette(levels)
  shown <- levels[levels %in% as.character(observed)]
  scale_colour_manual(values = pal, limits = shown, name = name,
                      guide = ggplot2::guide_legend(
                        override.aes = list(shape = 21, fill = unname(pal[shown]),
                                            colour = "grey10", size = 2.6, alpha = 1,
                                            linetype = 0)))
}

band_label <- function(level) sprintf("%g%% credible", 100 * level)

# ---- Inputs of the fit ------------------------------------------------------------

# The inputs the plots can vary: for formula fits, the variables of the formula's
# right-hand side with their values at the training rows (as in the data, before
# transformations such as log(x)); for matrix fits, the columns of x. `kind` is
# "numeric", "factor" (factors, characters, logicals) or "matrix" (matrix-valued
# variables: held at their column means, never varied); `levels` the levels of the
# factor inputs. `vars` are the inputs a plot shows (all of them until a plot picks
# some), `all` every input.
plot_inputs <- function(object) {
  if (is.null(object$terms)) {
    xr <- stats::setNames(as.data.frame(object$x_raw), object$x_names)
    vars <- object$x_names
    kind <- stats::setNames(rep("numeric", length(vars)), vars)
    return(list(vars = vars, all = vars, kind = kind, levels = list(), data = xr))
  }
  vars <- all.vars(stats::delete.response(object$terms))
  mf <- object$model
  vals <- lapply(vars, function(v) input_values(object, mf, v))
  names(vals) <- vars
  dat <- as.data.frame(lapply(vals, function(v) if (is.matrix(v)) I(v) else v),
                       stringsAsFactors = FALSE, col.names = vars, check.names = FALSE)
  if (nrow(dat) != object$n && !is.null(object$kept)) dat <- dat[object$kept, , drop = FALSE]
  kind <- vapply(vals, function(v) {
    if (is.matrix(v)) "matrix" else if (is.numeric(v)) "numeric" else "factor"
  }, "")
  lev <- lapply(vars[kind == "factor"], function(v) {
    if (!is.null(object$xlevels[[v]])) return(object$xlevels[[v]])
    x <- dat[[v]]
    if (is.factor(x)) levels(droplevels(x)) else sort(unique(as.character(x)))
  })
  names(lev) <- vars[kind == "factor"]
  list(vars = vars, all = vars, kind = kind, levels = lev, data = dat)
}

# The values of variable v at the rows of the model frame: the model frame's column
# when the formula uses v as it is, else v evaluated in the fit's data (rows matched
# by name).
input_values <- function(object, mf, v) {
  if (v %in% names(mf)) return(mf[[v]])
  env <- environment(object$terms)
  if (is.null(env)) env <- parent.frame()
  src <- tryCatch(eval(object$call$data, env), error = function(e) NULL)
  x <- tryCatch(eval(as.name(v), src, env), error = function(e) NULL)
  n <- nrow(mf)
  if (!is.null(x) && is.data.frame(src) && NROW(x) == nrow(src) &&
      all(rownames(mf) %in% rownames(src))) {
    i <- match(rownames(mf), rownames(src))
    return(if (is.matrix(x)) x[i, , drop = FALSE] else x[i])
  }
  if (!is.null(x) && NROW(x) == n) return(x)
  stop(sprintf(paste0("Cannot find the values of input '%s': the formula uses it through a ",
                      "transformation, so the plot reads it from the fit's `data` (%s), which ",
                      "is no longer available."), v, deparse(object$call$data)[1]), call. = FALSE)
}

# Inputs that can be shown: every numeric or factor input that varies, or the
# user's `effects` (checked).
plot_effect_vars <- function(inp, effects) {
  varies <- vapply(inp$vars, function(v) {
    if (inp$kind[[v]] == "matrix") return(FALSE)
    x <- inp$data[[v]]
    length(unique(x[!is.na(x)])) > 1L
  }, logical(1))
  if (is.null(effects)) {
    out <- inp$vars[varies]
    if (!length(out)) stop("No input of the fit varies: nothing to plot.", call. = FALSE)
    return(out)
  }
  if (!is.character(effects) || !length(effects) || anyNA(effects)) {
    stop("`effects` must be a character vector of input names.", call. = FALSE)
  }
  bad <- setdiff(effects, inp$vars)
  if (length(bad)) {
    stop(sprintf("`effects`: %s not among the inputs of the fit (%s).",
                 paste(sQuote(bad, FALSE), collapse = ", "),
                 paste(inp$vars, collapse = ", ")), call. = FALSE)
  }
  mat <- effects[inp$kind[effects] == "matrix"]
  if (length(mat)) {
    stop(sprintf("`effects`: matrix-valued input(s) %s cannot be plotted one by one.",
                 paste(sQuote(mat, FALSE), collapse = ", ")), call. = FALSE)
  }
  unique(effects)
}

# The reference point of the conditional effects: numeric inputs at their mean,
# factors at their first level (in their own type), matrix inputs at column means.
# One row, as a list of columns.
plot_reference <- function(inp) {
  ref <- lapply(inp$all, function(v) {
    x <- inp$data[[v]]
    switch(inp$kind[[v]],
           numeric = mean(x, na.rm = TRUE),
           matrix = I(matrix(colMeans(x, na.rm = TRUE), 1L, dimnames = list(NULL, colnames(x)))),
           factor = input_level(x, inp$levels[[v]], inp$levels[[v]][1]))
  })
  names(ref) <- inp$all
  ref
}

# Levels `value` of a factor-like input, in the input's own type.
input_level <- function(x, levels, value) {
  if (is.factor(x)) return(factor(value, levels = levels))
  if (is.logical(x)) return(as.logical(value))
  as.character(value)
}

# New inputs as predict() wants them: a data frame for formula fits, a matrix for
# matrix fits; `cols` is a list of equal-length columns.
plot_newdata <- function(object, cols) {
  if (is.null(object$terms)) return(as.matrix(as.data.frame(cols, check.names = FALSE)))
  nd <- as.data.frame(lapply(cols, function(v) if (is.matrix(v)) I(v) else v),
                      stringsAsFactors = FALSE, check.names = FALSE)
  names(nd) <- names(cols)
  nd
}

# The response probabilities with credible bands at new inputs, as a long data frame
# (.row, category, estimate, lower, upper).
plot_predictions <- function(object, newdata, level) {
  pr <- predict(object, newdata, type = "response", interval = "credible", level = level)
  plot_response_frame(object$likelihood, pr, object$levels)
}

# ---- Predictive view: one or two numeric inputs --------------------------------------

plot_predictive <- function(object, effects = NULL, grid = 60L, level = 0.95) {
  inp <- plot_inputs(object)
  simple <- is.null(effects) && length(inp$vars) <= 2L && all(inp$kind == "numeric")
  if (!simple) return(plot_effects(object, effects, grid, level))
  inp$vars <- plot_effect_vars(inp, NULL)
  plot_predictive_lik(object$likelihood, object, inp, inp$data, grid, level)
}

# The noise sd of a regression fit along its one numeric input, with its credible band
# and the absolute residuals of the posterior mean.
plot_noise <- function(object, grid = 60L, level = 0.95) {
  inp <- plot_inputs(object)
  vars <- plot_effect_vars(inp, NULL)
  if (length(vars) != 1L || inp$kind[match(vars, inp$vars)] != "numeric") {
    stop("`type = \"noise\"` plots fits over one numeric input.", call. = FALSE)
  }
  inp$vars <- vars
  g <- predictive_grid(inp, inp$data, grid)
  nd <- grid_newdata(object, g, inp)
  ns <- predict(object, nd, type = "noise", interval = "credible", level = level)
  curve <- data.frame(x = g[[vars]], fit = ns$fit, lwr = ns$lwr, upr = ns$upr)
  pts <- data.frame(x = inp$data[[vars]], r = abs(object$y - object$fitted[, 1]))
  band <- sprintf("%s interval", band_label(level))
  ggplot(curve, aes(x = .data$x)) +
    geom_point(data = pts, aes(x = .data$x, y = .data$r), inherit.aes = FALSE, shape = 21,
               fill = "white", colour = "grey45", size = 1.3) +
    ggplot2::geom_ribbon(aes(ymin = .data$lwr, ymax = .data$upr, fill = band), alpha = 0.5) +
    geom_line(aes(y = .data$fit), colour = "#08306b", linewidth = 0.8) +
    scale_fill_manual(values = stats::setNames("#9ecae1", band), name = NULL) +
    labs(x = vars, y = "noise sd", title = sprintf("Noise standard deviation (%s)", object$likelihood$name),
         subtitle = "Line: posterior mean of the noise sd; points: |y - posterior mean|") +
    theme_augp()
}

# New inputs over the observed range of the plotted inputs: at least 100 points for
# one input, a grid x grid lattice for two.
predictive_grid <- function(inp, dat, grid) {
  axis <- function(v, len) {
    r <- range(dat[[v]], na.rm = TRUE)
    seq(r[1], r[2], length.out = len)
  }
  g <- if (length(inp$vars) == 1L) {
    data.frame(axis(inp$vars, max(grid, 100L)))
  } else {
    expand.grid(axis(inp$vars[1], grid), axis(inp$vars[2], grid))
  }
  names(g) <- inp$vars
  g
}

# The grid as predict() wants it (a data frame for formula fits, a matrix otherwise),
# with the inputs that are not plotted (constant ones) at their reference values.
grid_newdata <- function(object, g, inp) {
  ref <- plot_reference(inp)
  cols <- lapply(inp$all, function(v) {
    if (v %in% names(g)) return(g[[v]])
    r <- ref[[v]]
    if (is.matrix(r)) r[rep(1L, nrow(g)), , drop = FALSE] else rep(r, nrow(g))
  })
  names(cols) <- inp$all
  plot_newdata(object, cols)
}

# Inducing points of a sparse fit in the units of the plotted inputs (a data frame
# with one column per input), or NULL: exact fits, and inputs that are not columns
# of the design as they are (transformed in the formula).
plot_inducing <- function(object, vars) {
  Z <- object$engine$Z
  if (!inherits(object$engine, "augp_sparse_engine") || is.null(Z)) return(NULL)
  cols <- colnames(object$x)
  if (!all(vars %in% cols)) return(NULL)
  j <- match(vars, cols)
  Zd <- sweep(sweep(Z[, j, drop = FALSE], 2, object$scale[cols[j]], "*"), 2,
              object$centre[cols[j]], "+")
  Zd <- as.data.frame(Zd)
  names(Zd) <- vars
  Zd
}

# The legend label of m inducing points (short: it shares a bottom legend row).
inducing_label <- function(m) sprintf("inducing (m = %d)", m)

# Inducing points: white triangles with a black outline, labelled with their number.
inducing_layer <- function(Zd, mapping) {
  lab <- inducing_label(nrow(Zd))
  list(geom_point(data = Zd, mapping = mapping, inherit.aes = FALSE,
                  colour = "black", fill = "white", size = 2.4, stroke = 0.8),
       scale_shape_manual(values = stats::setNames(24, lab), name = NULL,
                          guide = ggplot2::guide_legend(override.aes = list(
                            fill = "white", colour = "black", size = 2.6))))
}

# The observed points of the one-input plot for the rows of the fit.
plot_points_1d <- function(object, dat, v) {
  pts <- plot_observed_frame(object$likelihood, object$y, object$trials, object$levels)
  pts$x <- dat[[v]][pts$.row]
  pts
}

# Curves of the response probabilities along one numeric input: a credible band and
# the posterior mean per category (one neutral curve when there is one response
# column), for the one-input plot and the numeric panels of the effects view.
curve_layers <- function(curves, single) {
  if (single) {
    list(geom_ribbon(data = curves, aes(x = .data$x, ymin = .data$lower, ymax = .data$upper),
                     inherit.aes = FALSE, fill = AUGP_BAND, alpha = 0.6),
         geom_line(data = curves, aes(x = .data$x, y = .data$estimate), inherit.aes = FALSE,
                   colour = AUGP_LINE, linewidth = 0.9))
  } else {
    list(geom_ribbon(data = curves, aes(x = .data$x, ymin = .data$lower, ymax = .data$upper,
                                        fill = .data$category, group = .data$category),
                     inherit.aes = FALSE, alpha = 0.18),
         geom_line(data = curves, aes(x = .data$x, y = .data$estimate,
                                      colour = .data$category, group = .data$category),
                   inherit.aes = FALSE, linewidth = 0.9))
  }
}

# The one-input predictive plot for any likelihood: response probabilities with
# credible bands and the observed data (proportions of each category per row).
plot_predictive_1d <- function(object, inp, dat, grid, level) {
  v <- inp$vars
  g <- predictive_grid(inp, dat, grid)
  curves <- plot_predictions(object, grid_newdata(object, g, inp), level)
  curves$x <- g[[v]][curves$.row]
  single <- nlevels(droplevels(curves$category)) == 1L
  pts <- plot_points_1d(object, dat, v)
  lev <- object$levels
  p <- ggplot() + curve_layers(curves, single) +
    geom_observed(pts, aes(x = .data$x, y = .data$proportion, colour = .data$observed)) +
    scale_observed(lev, pts$observed, "Observed") +
    scale_fill_manual(values = augp_palette(lev), limits = lev, guide = "none") +
    ggplot2::scale_y_continuous(limits = c(if (is.null(plot_inducing(object, v))) 0 else -0.06, 1),
                                breaks = seq(0, 1, 0.25)) +
    labs(x = v, y = plot_response_label(object$likelihood, lev),
         title = "Predictive probability",
         subtitle = sprintf("Line: posterior mean; band: %s band%s", band_label(level),
                            if (single) "" else "s (one colour per category)"))
  add_inducing_1d(p, object, v)
}

add_inducing_1d <- function(p, object, v) {
  Zd <- plot_inducing(object, v)
  if (is.null(Zd)) return(p)
  Zd$y <- -0.04
  Zd$what <- inducing_label(nrow(Zd))
  p + inducing_layer(Zd, aes(x = .data[[v]], y = .data$y, shape = .data$what))
}

add_inducing_2d <- function(p, object, vars) {
  Zd <- plot_inducing(object, vars)
  if (is.null(Zd)) return(p)
  Zd$what <- inducing_label(nrow(Zd))
  p + inducing_layer(Zd, aes(x = .data[[vars[1]]], y = .data[[vars[2]]], shape = .data$what))
}

# The predictive plot for one response column (the success probability): its curve
# with a credible band against one input, or its surface over two inputs, with the
# data.
plot_predictive_probability <- function(object, inp, dat, grid = 60L, level = 0.95) {
  if (length(inp$vars) == 1L) {
    return(plot_predictive_1d(object, inp, dat, grid, level) + theme_augp())
  }
  lik <- object$likelihood
  lev <- object$levels
  v1 <- inp$vars[1]
  v2 <- inp$vars[2]
  g <- predictive_grid(inp, dat, grid)
  g$prob <- predict(object, grid_newdata(object, g[c(v1, v2)], inp), type = "response")
  pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], observed = plot_observed(object))
  pal <- augp_palette(lev)
  ylab <- plot_response_label(lik, lev)
  p <- ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
    geom_raster(aes(fill = .data$prob), interpolate = TRUE) +
    geom_contour(aes(z = .data$prob), breaks = 0.5, colour = "black", linewidth = 0.5) +
    scale_fill_gradient2(low = pal[[1]], mid = "white", high = pal[[2]], midpoint = 0.5,
                         limits = c(0, 1), name = ylab) +
    labs(x = v1, y = v2, title = "Predictive probability surface",
         subtitle = sprintf("Shading: posterior mean of %s; black line: %s = 0.5", ylab, ylab))
  if (is.factor(pts$observed)) {
    p <- p + geom_observed(pts, aes(x = .data$x1, y = .data$x2, colour = .data$observed)) +
      scale_observed(lev, pts$observed, "Observed")
  } else {
    p <- p + geom_point(data = pts, aes(x = .data$x1, y = .data$x2), inherit.aes = FALSE,
                        shape = 21, fill = "white", colour = "grey10", size = 1.6)
  }
  add_inducing_2d(p, object, c(v1, v2)) + ggplot2::coord_cartesian(expand = FALSE) +
    theme_augp()
}

# The predictive plot for category probabilities: one curve with its band per
# category against one input, or the map of the most probable category over two.
plot_predictive_categories <- function(object, inp, dat, grid = 60L, level = 0.95) {
  if (length(inp$vars) == 1L) {
    return(plot_predictive_1d(object, inp, dat, grid, level) + theme_augp())
  }
  lev <- object$levels
  v1 <- inp$vars[1]
  v2 <- inp$vars[2]
  g <- predictive_grid(inp, dat, grid)
  P <- predict(object, grid_newdata(object, g[c(v1, v2)], inp), type = "response")
  g$class <- factor(lev[max.col(P, ties.method = "first")], levels = lev)
  g$confidence <- apply(P, 1, max)
  pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], observed = plot_observed(object))
  pal <- augp_palette(lev)
  p <- ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
    geom_raster(aes(fill = .data$class, alpha = .data$confidence)) +
    ggplot2::scale_alpha(range = c(0.1, 0.55), limits = c(1 / length(lev), 1),
                         name = "P(most probable class)") +
    scale_fill_manual(values = pal, limits = lev, name = "Most probable class", drop = FALSE) +
    geom_observed(pts, aes(x = .data$x1, y = .data$x2, colour = .data$observed)) +
    labs(x = v1, y = v2, title = "Predictive class map",
         subtitle = "Shading: most probable class, stronger where it is more probable") +
    ggplot2::guides(fill = ggplot2::guide_legend(order = 1, override.aes = list(alpha = 0.5)),
                    alpha = "none") +
    scale_observed(lev, pts$observed, "Observed class (points)")
  add_inducing_2d(p, object, c(v1, v2)) + ggplot2::coord_cartesian(expand = FALSE) +
    theme_augp() + theme(legend.box = "vertical")
}

# ---- Conditional effects -------------------------------------------------------------

# Positions of factor levels on the shared continuous x axis of the effects view:
# factor j's levels sit at FACTOR_AXIS_BASE * j + 1, 2, ..., far from any data, so that
# numeric and factor panels can share one faceted plot with free x scales; the axis
# labels put the level names back.
FACTOR_AXIS_BASE <- 1e12

plot_effects <- function(object, effects = NULL, grid = 60L, level = 0.95) {
  inp <- plot_inputs(object)
  vars <- plot_effect_vars(inp, effects)
  ref <- plot_reference(inp)
  lev <- object$levels
  # One block of new inputs per panel: the reference row repeated, the panel's input
  # varied over a grid (numeric) or its levels (factor).
  blocks <- lapply(seq_along(vars), function(j) {
    v <- vars[j]
    x <- inp$data[[v]]
    if (inp$kind[[v]] == "numeric") {
      r <- range(x, na.rm = TRUE)
      vals <- seq(r[1], r[2], length.out = grid)
      pos <- vals
      lab <- NULL
    } else {
      L <- inp$levels[[v]]
      vals <- input_level(x, L, L)
      pos <- FACTOR_AXIS_BASE * j + seq_along(L)
      lab <- data.frame(pos = pos, label = L)
    }
    cols <- lapply(ref, function(r) if (is.matrix(r)) r[rep(1L, length(vals)), , drop = FALSE]
                   else rep(r, length(vals)))
    cols[[v]] <- vals
    list(cols = cols, pos = pos, lab = lab, kind = inp$kind[[v]])
  })
  cols <- lapply(inp$vars, function(v) {
    parts <- lapply(blocks, function(b) b$cols[[v]])
    if (is.matrix(parts[[1]])) do.call(rbind, parts) else do.call(c, parts)
  })
  names(cols) <- inp$vars
  pred <- plot_predictions(object, plot_newdata(object, cols), level)
  nb <- vapply(blocks, function(b) length(b$pos), 1L)
  panel <- rep(seq_along(vars), nb)
  pred$effect <- factor(vars[panel[pred$.row]], levels = vars)
  pred$x <- unlist(lapply(blocks, `[[`, "pos"))[pred$.row]
  numeric_panel <- inp$kind[as.character(pred$effect)] == "numeric"
  curves <- pred[numeric_panel, , drop = FALSE]
  dots <- pred[!numeric_panel, , drop = FALSE]
  single <- nlevels(droplevels(pred$category)) == 1L
  labels <- do.call(rbind, lapply(blocks, `[[`, "lab"))
  num_vars <- vars[inp$kind[vars] == "numeric"]
  rug <- do.call(rbind, lapply(num_vars, function(v) {
    data.frame(effect = factor(v, levels = vars), x = inp$data[[v]])
  }))
  # Room around the outer factor levels.
  pad <- if (!is.null(labels)) {
    fac <- vars[inp$kind[vars] == "factor"]
    do.call(rbind, lapply(fac, function(v) {
      pos <- blocks[[match(v, vars)]]$pos
      data.frame(effect = factor(v, levels = vars), x = c(min(pos) - 0.6, max(pos) + 0.6),
                 y = 0.5)
    }))
  }
  pal <- augp_palette(lev)
  dodge <- ggplot2::position_dodge(width = if (single) 0 else 0.5)
  p <- ggplot() +
    ggplot2::facet_wrap(~effect, scales = "free_x") +
    ggplot2::scale_x_continuous(breaks = effects_breaks(labels), labels = effects_labels(labels),
                                name = NULL) +
    plot_response_scale(object$likelihood)
  if (nrow(curves)) p <- p + curve_layers(curves, single)
  if (!is.null(rug) && nrow(rug)) {
    p <- p + geom_rug(data = rug, aes(x = .data$x), inherit.aes = FALSE, sides = "b",
                      alpha = 0.25, length = ggplot2::unit(0.03, "npc"))
  }
  if (nrow(dots)) {
    if (single) {
      p <- p + geom_errorbar(data = dots, aes(x = .data$x, ymin = .data$lower, ymax = .data$upper),
                             inherit.aes = FALSE, width = 0.15, colour = AUGP_LINE) +
        geom_point(data = dots, aes(x = .data$x, y = .data$estimate), inherit.aes = FALSE,
                   shape = 21, fill = AUGP_BAND, colour = AUGP_LINE, size = 2.6, stroke = 0.8)
    } else {
      p <- p + geom_errorbar(data = dots, aes(x = .data$x, ymin = .data$lower,
                                              ymax = .data$upper, colour = .data$category,
                                              group = .data$category),
                             inherit.aes = FALSE, width = 0.15, position = dodge) +
        geom_point(data = dots, aes(x = .data$x, y = .data$estimate, fill = .data$category,
                                    group = .data$category),
                   inherit.aes = FALSE, shape = 21, colour = "grey10", size = 2.4,
                   position = dodge)
    }
  }
  if (!is.null(pad)) {
    p <- p + geom_blank(data = pad, aes(x = .data$x, y = .data$y), inherit.aes = FALSE)
  }
  if (!single) {
    p <- p + scale_colour_manual(values = pal, limits = lev, name = "Category") +
      scale_fill_manual(values = pal, limits = lev, name = "Category")
  }
  p + labs(y = plot_response_label(object$likelihood, lev), title = "Conditional effects",
           subtitle = paste0(
             if (length(inp$vars) > 1L)
               "Each panel varies one input, the others held at the reference point below\n",
             sprintf("Line/point: posterior mean; band/bar: %s interval", band_label(level)),
             if (!single) " (one colour per category)" else ""),
           caption = reference_caption(inp, ref)) +
    theme_augp()
}

# "Reference: x1 = 0.12, g = a, ..." (numeric inputs at their mean, factors at their
# first level), wrapped.
reference_caption <- function(inp, ref) {
  if (length(inp$vars) == 1L) return(NULL)
  keep <- inp$vars[inp$kind[inp$vars] != "matrix"]
  val <- vapply(keep, function(v) {
    r <- ref[[v]]
    if (is.numeric(r)) format(signif(r, 3)) else as.character(r)
  }, "")
  txt <- paste0("Reference: ", paste(keep, val, sep = " = ", collapse = ", "))
  paste(strwrap(txt, width = 110), collapse = "\n")
}

# Axis breaks and labels of the effects view: factor panels get their levels (see
# FACTOR_AXIS_BASE), numeric panels ordinary breaks.
effects_breaks <- function(labels) {
  function(lim) {
    if (!is.null(labels)) {
      hit <- labels$pos[labels$pos >= lim[1] - 0.5 & labels$pos <= lim[2] + 0.5]
      if (length(hit)) return(hit)
    }
    b <- pretty(lim, n = 4)
    b[b >= lim[1] & b <= lim[2]]
  }
}

effects_labels <- function(labels) {
  function(b) {
    i <- if (is.null(labels)) rep(NA_integer_, length(b)) else match(b, labels$pos)
    out <- format(b, trim = TRUE, drop0trailing = TRUE, scientific = FALSE)
    out[!is.na(i)] <- labels$label[i[!is.na(i)]]
    out
  }
}

# ---- ELBO, traces, latent --------------------------------------------------------

plot_elbo <- function(object) {
  e <- object$engine$elbo
  if (!length(e)) {
    stop(paste0("`type = \"elbo\"` needs an ELBO trace: a variational fit (method = ",
                "\"vi\") or a Gibbs fit with learn_hyper = TRUE; use type = \"trace\"."),
         call. = FALSE)
  }
  if (is_svi_engine(object$engine)) return(plot_elbo_svi(object))
  df <- data.frame(iteration = seq_along(e), elbo = as.numeric(e))
  searched <- isTRUE(object$control$learn_hyper) && isTRUE(object$control$hyper_maxit > 0)
  steps <- if (object$method != "vi") {
    "Hyperparameter search before sampling"
  } else if (searched) {
    "Hyperparameter search, then CAVI sweeps"
  } else "CAVI sweeps"
  rf <- object$engine$refine
  if (object$method == "vi" && length(rf$direct)) return(plot_elbo_refined(df, rf, steps))
  # (a short title: the plot is often one panel of several)
  ggplot(df, aes(x = .data$iteration, y = .data$elbo)) +
    geom_line(colour = AUGP_LINE) + geom_point(size = 1, colour = AUGP_LINE) +
    labs(x = "Step", y = "ELBO", title = "ELBO trace",
         subtitle = sprintf("%s\nFinal ELBO: %s", steps, format(e[length(e)], digits = 6))) +
    theme_augp()
}

# A refined fit (augp_control(refine = )): the augmented bound along the fit's steps, then
# the direct ELBO from the coordinate-ascent q(f) (its first value, at the last step)
# through the refinement rounds; the two bounds in two colours. df: the augmented trace
# (iteration, elbo); rf: the engine's refinement record.
plot_elbo_refined <- function(df, rf, steps) {
  last <- nrow(df)
  d <- as.numeric(rf$direct)
  df$bound <- "augmented"
  dd <- data.frame(iteration = last + seq_along(d) - 1L, elbo = d, bound = "direct (refinement)")
  all <- rbind(df, dd)
  all$bound <- factor(all$bound, levels = c("augmented", "direct (refinement)"))
  ggplot(all, aes(x = .data$iteration, y = .data$elbo, colour = .data$bound)) +
    geom_line() + geom_point(size = 1) +
    scale_colour_manual(values = c(augmented = AUGP_LINE, "direct (refinement)" = "#D55E00"),
                        name = NULL) +
    labs(x = "Step", y = "ELBO", title = "ELBO trace",
         subtitle = sprintf("%s, then %d refinement round(s) of q(f)\nFinal direct ELBO: %s", steps,
                            as.integer(rf$rounds), format(d[length(d)], digits = 6))) +
    theme_augp() + theme(legend.position = "bottom")
}

# Minibatch (SVI) trace: each estimate is the ELBO of one minibatch scaled to the full
# data, so it is noisy; its running mean over one epoch shows the trend, the dashed
# line the ELBO of the final q(u) on the full data. A fit with direct-ELBO epochs
# (sparse_svi_direct()) shows their estimates after the augmented ones, in their own
# colour: the two bounds differ, so their running means are taken apart.
plot_elbo_svi <- function(object) {
  eng <- object$engine
  e <- as.numeric(eng$elbo)
  ed <- if (is.null(eng$svi_direct)) numeric(0) else as.numeric(eng$svi_direct$trace)
  two <- length(ed) > 0
  ipe <- max(1L, as.integer(round(eng$sparse$iterations / eng$sparse$epochs)))
  running <- function(v) {
    w <- min(ipe, length(v))
    cs <- cumsum(c(0, v))
    i <- seq_along(v)
    lo <- pmax(0L, i - w)
    (cs[i + 1] - cs[lo + 1]) / (i - lo)
  }
  bound_label <- function(b, what) if (two) sprintf("%s: %s", b, what) else what
  part <- function(v, b, from) {
    data.frame(iteration = from + seq_along(v), elbo = v, smooth = running(v), bound = b,
               raw = bound_label(b, "minibatch estimate"),
               run = bound_label(b, if (two) "running mean (one epoch)" else "running mean over one epoch"))
  }
  df <- rbind(part(e, "augmented", 0L), if (two) part(ed, "direct", length(e)))
  n_it <- nrow(df)
  full <- eng$elbo_full
  fin <- sprintf("full-data %sELBO at the end: %s", if (two) "direct " else "", format(full, digits = 6))
  vals <- c(stats::setNames(c("grey40", "#0072B2"), c(df$raw[1], df$run[1])),
            if (two) stats::setNames(c("grey65", "#009E73"), c(df$raw[n_it], df$run[n_it])),
            stats::setNames("#D55E00", fin))
  p <- ggplot(df, aes(x = .data$iteration)) +
    geom_vline(xintercept = seq(ipe, n_it, by = ipe), colour = "grey75", linetype = "dotted") +
    geom_line(aes(y = .data$elbo, colour = .data$raw, group = .data$bound), alpha = 0.35) +
    geom_line(aes(y = .data$smooth, colour = .data$run, group = .data$bound), linewidth = 1) +
    ggplot2::scale_x_continuous(sec.axis = ggplot2::sec_axis(~ . / ipe, name = "Epoch",
                                                             breaks = function(l) pretty(l))) +
    scale_colour_manual(values = vals, breaks = names(vals)[names(vals) != fin | is.finite(full)],
                        name = NULL, guide = ggplot2::guide_legend(nrow = if (two) 3 else 2, byrow = TRUE))
  if (is.finite(full)) {
    p <- p + geom_hline(aes(yintercept = full, colour = fin), linetype = "dashed") +
      ggplot2::annotate("point", x = n_it, y = full, colour = "#D55E00", size = 2.5)
  }
  p + labs(x = "Iteration (minibatch)", y = "ELBO",
           title = "ELBO trace (minibatch estimates)",
           subtitle = sprintf("Scaled to the full data; dotted lines: epochs\n%s", vi_status(eng))) +
    theme_augp()
}

plot_trace <- function(object, which = NULL) {
  d <- object$engine$draws
  if (object$method != "gibbs" || is.null(d)) {
    stop("`type = \"trace\"` needs a Gibbs fit (method = \"gibbs\"); use type = \"elbo\".",
         call. = FALSE)
  }
  h <- hyper_draws_raw(object, "data")
  if (is.null(which) && !is.null(h) && dim(h)[3] > 0) return(plot_trace_hyper(h))
  n <- dim(d)[3]
  vn <- latent_var_names(object, object$n)
  if (is.null(which)) {
    q <- object$q
    which <- if (q > 1) {
      # one panel per class (or stick): the first observation's latent value in each
      # latent column (column j of point i is at i + n (j - 1)), at most 8 columns
      1 + object$n * (seq_len(min(q, 8L)) - 1)
    } else {
      unique(round(seq(1, n, length.out = min(4L, n))))
    }
  }
  if (!is.numeric(which) || any(which < 1 | which > n)) {
    stop(sprintf("`which` must hold indices of latent values between 1 and %d.", n),
         call. = FALSE)
  }
  df <- do.call(rbind, lapply(which, function(j) {
    data.frame(iteration = rep(seq_len(dim(d)[1]), dim(d)[2]),
               chain = factor(rep(seq_len(dim(d)[2]), each = dim(d)[1])),
               value = as.numeric(d[, , j]),
               variable = vn[j])
  }))
  df$variable <- factor(df$variable, levels = vn[which])
  ggplot(df, aes(x = .data$iteration, y = .data$value, colour = .data$chain)) +
    geom_line(linewidth = 0.3) + facet_wrap(~variable, scales = "free_y") +
    scale_colour_manual(values = unname(augp_palette(levels(df$chain)))) +
    labs(x = "Iteration (after warm-up)", y = "Latent f", colour = "Chain",
         title = "Trace of the latent function") + theme_augp()
}

# Trace of the sampled kernel hyperparameters (data units, log axis), one panel each.
plot_trace_hyper <- function(h) {
  d <- dim(h)
  df <- do.call(rbind, lapply(seq_len(d[3]), function(k) {
    data.frame(iteration = rep(seq_len(d[1]), d[2]),
               chain = factor(rep(seq_len(d[2]), each = d[1])),
               value = as.numeric(h[, , k]), variable = dimnames(h)[[3]][k])
  }))
  df$variable <- factor(df$variable, levels = dimnames(h)[[3]])
  ggplot(df, aes(x = .data$iteration, y = .data$value, colour = .data$chain)) +
    geom_line(linewidth = 0.3) + facet_wrap(~variable, scales = "free_y") +
    ggplot2::scale_y_log10() +
    scale_colour_manual(values = unname(augp_palette(levels(df$chain)))) +
    labs(x = "Iteration (after warm-up)", y = "Value (data units, log scale)", colour = "Chain",
         title = "Trace of the sampled kernel hyperparameters",
         subtitle = "type = \"trace\", which = <indices> shows latent values instead") +
    theme_augp()
}

# Posterior mean and interval of the latent values at the training points, one
# panel per latent column when there are several.
plot_latent <- function(object, level = 0.95) {
  q <- object$q
  m <- matrix(object$engine$mean, ncol = q)
  s <- sqrt(pmax(matrix(object$engine$var, ncol = q), 0))
  z <- stats::qnorm(1 - (1 - level) / 2)
  nm <- latent_names(object$likelihood, object$levels, q)
  obs <- plot_observed(object)
  df <- do.call(rbind, lapply(seq_len(q), function(j) {
    data.frame(rank = rank(m[, j], ties.method = "first"), mean = m[, j],
               lwr = m[, j] - z * s[, j], upr = m[, j] + z * s[, j], response = obs,
               latent = nm[j])
  }))
  df$latent <- factor(df$latent, levels = nm)
  p <- ggplot(df, aes(x = .data$rank, y = .data$mean, ymin = .data$lwr, ymax = .data$upr,
                      colour = .data$response)) +
    geom_pointrange(size = 0.15, linewidth = 0.3) +
    labs(x = "Observation (ordered by posterior mean)", y = "Latent f", colour = "Observed",
         title = if (q > 1) "Posterior of the latent functions" else
           "Posterior of the latent function",
         subtitle = sprintf("Points: posterior mean; bars: mean +/- %.2f sd (%g%%)",
                            z, 100 * level)) +
    theme_augp()
  if (is.factor(obs)) p <- p + scale_colour_manual(values = augp_palette(levels(obs)))
  if (q > 1) p <- p + facet_wrap(~latent, scales = "free_y")
  p
}

# The observed response of the training rows as the plots show it.
plot_observed <- function(object) {
  observed_response(object$likelihood, object$y, object$trials, object$levels)
}
