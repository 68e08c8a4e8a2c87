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
    q <- if (is.null(object$q)) 1L else object$q
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

plot_latent <- function(object, level = 0.95) {
  if (isTRUE(object$multi)) return(plot_latent_multi(object, level))
  m <- as.numeric(object$engine$mean)
  s <- sqrt(pmax(as.numeric(object$engine$var), 0))
  z <- stats::qnorm(1 - (1 - level) / 2)
  obs <- object$y / object$trials
  df <- data.frame(rank = rank(m, ties.method = "first"), mean = m, lwr = m - z * s,
                   upr = m + z * s,
                   response = if (all(object$trials == 1)) {
                     factor(object$levels[obs + 1], levels = object$levels)
                   } else obs)
  ggplot(df, aes(x = .data$rank, y = .data$mean, ymin = .data$lwr, ymax = .data$upr,
                 colour = .data$response)) +
    geom_pointrange(size = 0.15) +
    labs(x = "Observation (ordered by posterior mean)", y = "Latent f",
         colour = "Response", title = "Posterior of the latent function") +
    theme_minimal()
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
  if (isTRUE(object$multi)) return(plot_predictive_multi(object, inp, dat, grid, level))
  obs <- object$y / object$trials
  binary <- all(object$trials == 1)
  response <- if (binary) factor(object$levels[obs + 1], levels = object$levels) else obs
  mk_new <- function(g) {
    if (is.null(object$terms)) as.matrix(g) else g
  }
  rng <- lapply(inp$vars, function(v) range(dat[[v]]))
  names(rng) <- inp$vars
  if (length(inp$vars) == 1L) {
    v <- inp$vars
    g <- data.frame(seq(rng[[v]][1], rng[[v]][2], length.out = max(grid, 100L)))
    names(g) <- v
    pr <- predict(object, mk_new(g), type = "response", interval = "credible",
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
      labs(y = sprintf("P(%s)", object$levels[2]), colour = "Response",
           title = "Predictive probability") + theme_minimal()
  } else {
    v1 <- inp$vars[1]
    v2 <- inp$vars[2]
    g <- expand.grid(seq(rng[[v1]][1], rng[[v1]][2], length.out = grid),
                     seq(rng[[v2]][1], rng[[v2]][2], length.out = grid))
    names(g) <- c(v1, v2)
    g$prob <- predict(object, mk_new(g[c(v1, v2)]), type = "response")
    pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], response = response)
    ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
      geom_raster(aes(fill = .data$prob), interpolate = TRUE) +
      geom_contour(aes(z = .data$prob), breaks = 0.5, colour = "black") +
      scale_fill_gradient2(low = "#2166ac", mid = "white", high = "#b2182b",
                           midpoint = 0.5, limits = c(0, 1),
                           name = sprintf("P(%s)", object$levels[2])) +
      geom_point(data = pts, aes(x = .data$x1, y = .data$x2, shape = .data$response),
                 inherit.aes = FALSE, size = 1.6) +
      labs(shape = "Response", title = "Predictive probability surface") +
      theme_minimal()
  }
}
