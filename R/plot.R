#' Plot an augmented GP fit
#'
#' `autoplot()` builds a ggplot; `plot()` draws it and returns it invisibly.
#'
#' * `"predictive"`: with one numeric input, the predicted probability
#'   against the input with a pointwise credible band and the data; with
#'   two numeric inputs, the probability surface on a grid with the 0.5
#'   contour and the data points. For several categories (logistic-softmax,
#'   stick-breaking): one probability curve with its band per category (one
#'   input), or the map of the most probable class shaded by its
#'   probability (two inputs).
#' * `"elbo"`: the ELBO trace of a variational fit.
#' * `"trace"`: trace plots of the latent function at a few observations
#'   (Gibbs fits); `which` indexes the latent values `f[i]` or, with several
#'   latent functions, `f[i,category]` in the order of `as_draws_array()`
#'   (default: four observations, or with several latent functions one panel
#'   per class or stick, at the first observation).
#' * `"latent"`: posterior mean and 95% interval of the latent function at
#'   each training point, ordered by the mean and coloured by the response.
#'
#' @param object,x A fit from [augp()] or [augp_fit()].
#' @param type Which plot; see Details.
#' @param which For `"trace"`: indices of the observations to show.
#' @param grid For `"predictive"`: number of grid points per input.
#' @param level Probability of the credible band.
#' @param ... Unused.
#' @return A `ggplot` object.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y, control = augp_control(hyper_maxit = 3))
#' p <- ggplot2::autoplot(fit, type = "elbo")
#' @importFrom ggplot2 autoplot
#' @export
autoplot.augp <- function(object, type = c("predictive", "elbo", "trace", "latent"),
                          which = NULL, grid = 60L, level = 0.95, ...) {
  type <- match.arg(type)
  switch(type,
         predictive = plot_predictive(object, grid, level),
         elbo = plot_elbo(object),
         trace = plot_trace(object, which),
         latent = plot_latent(object, level))
}

#' @rdname autoplot.augp
#' @export
plot.augp <- function(x, type = c("predictive", "elbo", "trace", "latent"), ...) {
  type <- match.arg(type)
  p <- autoplot.augp(x, type = type, ...)
  print(p)
  invisible(p)
}

#' @importFrom ggplot2 ggplot aes .data geom_line geom_point geom_ribbon geom_raster
#'   geom_contour geom_pointrange facet_wrap labs scale_fill_gradient2 theme_minimal
NULL

plot_elbo <- function(object) {
  e <- object$engine$elbo
  if (!length(e)) {
    stop(paste0("`type = \"elbo\"` needs an ELBO trace: a variational fit (method = ",
                "\"vi\") or a Gibbs fit with learn_hyper = TRUE; use type = \"trace\"."),
         call. = FALSE)
  }
  df <- data.frame(iteration = seq_along(e), elbo = as.numeric(e))
  ggplot(df, aes(x = .data$iteration, y = .data$elbo)) +
    geom_line(colour = "steelblue") + geom_point(size = 0.8, colour = "steelblue") +
    labs(x = "Iteration", y = "ELBO",
         title = if (is_svi_engine(object$engine)) {
           "ELBO trace (minibatch estimates, scaled to the full data)"
         } else if (object$method == "vi") "ELBO trace" else
           "ELBO trace (hyperparameter learning before sampling)") + theme_minimal()
}

plot_trace <- function(object, which = NULL) {
  d <- object$engine$draws
  if (object$method != "gibbs" || is.null(d)) {
    stop("`type = \"trace\"` needs a Gibbs fit (method = \"gibbs\"); use type = \"elbo\".",
         call. = FALSE)
  }
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
    labs(x = "Iteration (after warm-up)", y = "Latent f", colour = "Chain",
         title = "Trace of the latent function") + theme_minimal()
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
    geom_pointrange(size = 0.15) +
    labs(x = "Observation (ordered by posterior mean)", y = "Latent f", colour = "Response",
         title = if (q > 1) "Posterior of the latent functions" else
           "Posterior of the latent function") +
    theme_minimal()
  if (q > 1) p <- p + facet_wrap(~latent, scales = "free_y")
  p
}

# The observed response of the training rows as the plots show it.
plot_observed <- function(object) {
  observed_response(object$likelihood, object$y, object$trials, object$levels)
}

# The numeric input variables the user can vary, with their observed values.
plot_inputs <- function(object) {
  if (!is.null(object$terms)) {
    tt <- stats::delete.response(object$terms)
    vars <- all.vars(tt)
    mf <- object$model
    num <- vars[vapply(vars, function(v) is.numeric(mf[[v]]) && !is.matrix(mf[[v]]),
                       logical(1))]
    list(vars = vars, numeric = num, data = mf[vars])
  } else {
    xr <- as.data.frame(object$x_raw)
    list(vars = names(xr), numeric = names(xr), data = xr)
  }
}

plot_predictive <- function(object, grid = 60L, level = 0.95) {
  inp <- plot_inputs(object)
  if (length(inp$vars) > 2L || length(inp$numeric) != length(inp$vars)) {
    stop("`type = \"predictive\"` needs a model with one or two numeric predictors.",
         call. = FALSE)
  }
  dat <- inp$data
  if (nrow(dat) != object$n && !is.null(object$kept)) dat <- dat[object$kept, , drop = FALSE]
  plot_predictive_lik(object$likelihood, object, inp, dat, grid, level)
}

# New inputs over the observed range of the plotted inputs: at least 100 points for
# one input, a grid x grid lattice for two.
predictive_grid <- function(inp, dat, grid) {
  axis <- function(v, len) {
    r <- range(dat[[v]])
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

# The grid as predict() wants it: a data frame for formula fits, a matrix otherwise.
grid_newdata <- function(object, g) if (is.null(object$terms)) as.matrix(g) else g

# The predictive plot for one response column (the success probability): its curve
# with a credible band against one input, or its surface over two inputs, with the
# data.
plot_predictive_probability <- function(object, inp, dat, grid = 60L, level = 0.95) {
  lik <- object$likelihood
  Y <- observed_counts(lik, object$y, object$trials, object$levels)
  obs <- Y[, 2] / rowSums(Y)
  response <- plot_observed(object)
  ylab <- sprintf("P(%s)", response_names(lik, object$levels))
  g <- predictive_grid(inp, dat, grid)
  if (length(inp$vars) == 1L) {
    v <- inp$vars
    pr <- predict(object, grid_newdata(object, g), type = "response", interval = "credible",
                  level = level)
    g$prob <- pr$fit
    g$lwr <- pr$lwr
    g$upr <- pr$upr
    pts <- data.frame(x = dat[[v]], y = obs, response = response)
    ggplot(g, aes(x = .data[[v]])) +
      geom_ribbon(aes(ymin = .data$lwr, ymax = .data$upr), fill = "grey80") +
      geom_line(aes(y = .data$prob), colour = "steelblue", linewidth = 0.8) +
      geom_point(data = pts, aes(x = .data$x, y = .data$y, colour = .data$response),
                 alpha = 0.6) +
      labs(y = ylab, colour = "Response",
           title = "Predictive probability") + theme_minimal()
  } else {
    v1 <- inp$vars[1]
    v2 <- inp$vars[2]
    g$prob <- predict(object, grid_newdata(object, g[c(v1, v2)]), type = "response")
    pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], response = response)
    ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
      geom_raster(aes(fill = .data$prob), interpolate = TRUE) +
      geom_contour(aes(z = .data$prob), breaks = 0.5, colour = "black") +
      scale_fill_gradient2(low = "#2166ac", mid = "white", high = "#b2182b",
                           midpoint = 0.5, limits = c(0, 1),
                           name = ylab) +
      geom_point(data = pts, aes(x = .data$x1, y = .data$x2, shape = .data$response),
                 inherit.aes = FALSE, size = 1.6) +
      labs(shape = "Response", title = "Predictive probability surface") +
      theme_minimal()
  }
}

# The predictive plot for category probabilities: one curve with its band per
# category against one input, or the map of the most probable category over two.
plot_predictive_categories <- function(object, inp, dat, grid = 60L, level = 0.95) {
  lev <- object$levels
  g <- predictive_grid(inp, dat, grid)
  if (length(inp$vars) == 1L) {
    v <- inp$vars
    pr <- predict(object, grid_newdata(object, g), type = "response", interval = "credible",
                  level = level)
    df <- data.frame(x = rep(g[[v]], length(lev)),
                     category = factor(rep(lev, each = nrow(g)), levels = lev),
                     prob = as.numeric(pr$fit), lwr = as.numeric(pr$lwr),
                     upr = as.numeric(pr$upr))
    Y <- observed_counts(object$likelihood, object$y, object$trials, lev)
    tot <- rowSums(Y)
    pts <- data.frame(x = rep(dat[[v]], length(lev)),
                      category = factor(rep(lev, each = nrow(Y)), levels = lev),
                      prop = as.numeric(Y / ifelse(tot > 0, tot, NA)),
                      weight = rep(tot, length(lev)))
    ggplot(df, aes(x = .data$x, colour = .data$category, fill = .data$category)) +
      geom_ribbon(aes(ymin = .data$lwr, ymax = .data$upr), alpha = 0.2, colour = NA) +
      geom_line(aes(y = .data$prob), linewidth = 0.8) +
      geom_point(data = pts, aes(x = .data$x, y = .data$prop, colour = .data$category),
                 inherit.aes = FALSE, alpha = 0.4, size = 1) +
      labs(x = v, y = "Probability", colour = "Category", fill = "Category",
           title = sprintf("Predictive category probabilities (%g%% bands)", 100 * level)) +
      theme_minimal()
  } else {
    v1 <- inp$vars[1]
    v2 <- inp$vars[2]
    P <- predict(object, grid_newdata(object, g[c(v1, v2)]), type = "response")
    g$class <- factor(lev[max.col(P, ties.method = "first")], levels = lev)
    g$confidence <- apply(P, 1, max)
    pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], response = plot_observed(object))
    ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
      geom_raster(aes(fill = .data$class, alpha = .data$confidence)) +
      ggplot2::scale_alpha(range = c(0.15, 0.6), name = "P(class)") +
      geom_point(data = pts, aes(x = .data$x1, y = .data$x2, colour = .data$response),
                 inherit.aes = FALSE, size = 1.4) +
      labs(fill = "Predicted class", colour = "Observed",
           title = "Predictive class map") + theme_minimal()
  }
}
