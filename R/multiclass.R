# The front end for likelihoods with several latent functions (q > 1):
# logistic-softmax (K or K - 1 latents) and stick-breaking (K - 1 sticks). The
# likelihood supplies lik_prob() (latents -> category probabilities); this file
# turns the engine's latent posterior into probabilities, predictions, summaries
# and plot data, the same way for every such likelihood.

# Names of the latent columns: the category each belongs to.
latent_names <- function(object) {
  q <- object$q
  lev <- object$levels
  if (q == length(lev)) return(lev)
  if (q == length(lev) - 1L) return(lev[-length(lev)])
  paste0("f", seq_len(q))
}

# Variable names of the latent draws: f[i] (one latent) or f[i,category].
latent_var_names <- function(object, n = object$n) {
  if (!isTRUE(object$multi)) return(sprintf("f[%d]", seq_len(n)))
  nm <- latent_names(object)
  sprintf("f[%d,%s]", rep(seq_len(n), length(nm)), rep(nm, each = n))
}

# Evaluate expr with R's RNG seeded from `seed`, leaving the user's stream as it was.
with_local_seed <- function(seed, expr) {
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE) else NULL
  on.exit(if (had) assign(".Random.seed", old, envir = genv) else
    rm(".Random.seed", envir = genv), add = TRUE)
  set.seed(seed)
  expr
}

# Seed of the Monte Carlo draws behind predictions: the fit's seed, so repeated
# predictions agree and the user's random number stream is left alone.
pred_seed <- function(object) if (is.null(object$seed)) 1L else object$seed

# Category probabilities from the latent posterior, averaged over draws.
#   pr: list(mean, var) of n x q matrices (Gaussian marginals, variational fits);
#   draws: posterior latent draws, either the engine's [iter, chains, n * q] array
#          or an S x n x q array (Gibbs fits). When given, draws are used.
# Returns list(mean, sd, lwr, upr) of n x K matrices (lwr/upr when level is set).
multi_prob_summary <- function(object, pr, draws = NULL, level = NULL, chunk = 200L) {
  q <- object$q
  lev <- object$levels
  K <- length(lev)
  if (!is.null(draws)) {
    d <- dim(draws)
    if (length(d) == 3L && d[3] != q) {
      S <- d[1] * d[2]
      n <- d[3] / q
    } else {
      S <- d[1]
      n <- d[2]
    }
    arr <- array(draws, c(S, n, q))
    get_chunk <- function(idx) arr[, idx, , drop = FALSE]
  } else {
    m <- matrix(pr$mean, ncol = q)
    s <- sqrt(pmax(matrix(pr$var, ncol = q), 0))
    n <- nrow(m)
    S <- object$control$pred_draws
    if (is.null(S)) S <- 1000L
    Z <- with_local_seed(pred_seed(object), array(stats::rnorm(S * q), c(S, 1L, q)))
    if (is.null(level)) {
      # mean and sd only: the likelihood's Monte Carlo summary in C++
      r <- .lik_response_cpp(object$engine$lik, m, s * s, matrix(Z, S, q), 0,
                             resolve_threads(object$control$threads))
      dimnames(r$mean) <- dimnames(r$sd) <- list(NULL, lev)
      return(list(mean = r$mean, sd = r$sd, lwr = NULL, upr = NULL))
    }
    get_chunk <- function(idx) {
      nc <- length(idx)
      out <- array(0, c(S, nc, q))
      for (j in seq_len(q)) {
        out[, , j] <- outer(Z[, 1L, j], s[idx, j]) + rep(m[idx, j], each = S)
      }
      out
    }
  }
  mean <- sdv <- matrix(NA_real_, n, K, dimnames = list(NULL, lev))
  lwr <- upr <- if (is.null(level)) NULL else mean
  a <- if (is.null(level)) NULL else (1 - level) / 2
  for (start in seq(1L, n, by = chunk)) {
    idx <- start:min(n, start + chunk - 1L)
    Fc <- get_chunk(idx)
    nc <- length(idx)
    P <- lik_prob(object$likelihood, matrix(Fc, S * nc, q))
    P <- array(P, c(S, nc, K))
    mu <- colMeans(P)  # nc x K
    mean[idx, ] <- mu
    if (S > 1) {
      D <- P - rep(mu, each = S)  # two-pass variance, vectorised over rows and classes
      sdv[idx, ] <- sqrt(colSums(D * D) / (S - 1))
    } else {
      sdv[idx, ] <- 0
    }
    if (!is.null(level)) {
      lwr[idx, ] <- apply(P, c(2, 3), stats::quantile, probs = a, names = FALSE)
      upr[idx, ] <- apply(P, c(2, 3), stats::quantile, probs = 1 - a, names = FALSE)
    }
  }
  list(mean = mean, sd = sdv, lwr = lwr, upr = upr)
}

# predict() for q > 1 fits; see predict.augp for the arguments.
predict_multi <- function(object, newdata, type, se.fit, interval, level) {
  gibbs <- object$method == "gibbs"
  if (is.null(newdata)) {
    ok <- rep(TRUE, object$n)
    rn <- NULL
    pr <- list(mean = object$engine$mean, var = object$engine$var)
    draws <- if (gibbs) object$engine$draws else NULL
  } else {
    X <- new_design(object, newdata)
    ok <- stats::complete.cases(X)
    rn <- rownames(X)
    pr <- with_local_seed(pred_seed(object),
                          augp_engine_predict(object$engine, X[ok, , drop = FALSE], draws = gibbs))
    draws <- if (gibbs) pr$draws else NULL
  }
  nn <- length(ok)
  fill <- function(M, names) {
    out <- matrix(NA_real_, nn, length(names), dimnames = list(rn, names))
    out[ok, ] <- M
    out
  }
  alpha <- (1 - level) / 2
  want_int <- interval != "none"
  if (type == "link") {
    nm <- latent_names(object)
    m <- matrix(pr$mean, ncol = object$q)
    se <- sqrt(pmax(matrix(pr$var, ncol = object$q), 0))
    fit <- fill(m, nm)
    if (!se.fit && !want_int) return(fit)
    out <- list(fit = fit)
    if (se.fit) out$se.fit <- fill(se, nm)
    if (want_int) {
      if (!is.null(draws)) {
        arr <- if (is.null(newdata)) {
          d <- dim(draws)
          array(draws, c(d[1] * d[2], object$n, object$q))
        } else draws
        out$lwr <- fill(apply(arr, c(2, 3), stats::quantile, probs = alpha, names = FALSE), nm)
        out$upr <- fill(apply(arr, c(2, 3), stats::quantile, probs = 1 - alpha,
                              names = FALSE), nm)
      } else {
        z <- stats::qnorm(1 - alpha)
        out$lwr <- fill(m - z * se, nm)
        out$upr <- fill(m + z * se, nm)
      }
    }
    return(out)
  }
  ps <- multi_prob_summary(object, pr, draws = draws, level = if (want_int) level else NULL)
  lev <- object$levels
  if (type == "class") {
    cls <- rep(NA_integer_, nn)
    cls[ok] <- max.col(ps$mean, ties.method = "first")
    out <- factor(lev[cls], levels = lev)
    names(out) <- rn
    return(out)
  }
  fit <- fill(ps$mean, lev)
  if (!se.fit && !want_int) return(fit)
  out <- list(fit = fit)
  if (se.fit) out$se.fit <- fill(ps$sd, lev)
  if (want_int) {
    out$lwr <- fill(ps$lwr, lev)
    out$upr <- fill(ps$upr, lev)
  }
  out
}

# Training accuracy (share of counts in the most probable category) and log loss
# per count, for q > 1 fits.
multi_fit_stats <- function(object) {
  P <- pmax(object$fitted, 1e-12)
  Y <- object$y
  top <- max.col(P, ties.method = "first")
  acc <- sum(Y[cbind(seq_len(nrow(Y)), top)]) / sum(Y)
  list(accuracy = acc, logloss = -sum(Y * log(P)) / sum(Y))
}

# The observed category of each row (the most frequent one) as a factor.
multi_observed_class <- function(object) {
  factor(object$levels[max.col(object$y, ties.method = "first")], levels = object$levels)
}

plot_latent_multi <- function(object, level = 0.95) {
  m <- matrix(object$engine$mean, ncol = object$q)
  s <- sqrt(pmax(matrix(object$engine$var, ncol = object$q), 0))
  z <- stats::qnorm(1 - (1 - level) / 2)
  nm <- latent_names(object)
  obs <- multi_observed_class(object)
  df <- do.call(rbind, lapply(seq_len(object$q), function(j) {
    data.frame(rank = rank(m[, j], ties.method = "first"), mean = m[, j],
               lwr = m[, j] - z * s[, j], upr = m[, j] + z * s[, j], response = obs,
               latent = nm[j])
  }))
  df$latent <- factor(df$latent, levels = nm)
  ggplot(df, aes(x = .data$rank, y = .data$mean, ymin = .data$lwr, ymax = .data$upr,
                 colour = .data$response)) +
    geom_pointrange(size = 0.15) + facet_wrap(~latent, scales = "free_y") +
    labs(x = "Observation (ordered by posterior mean)", y = "Latent f",
         colour = "Observed", title = "Posterior of the latent functions") +
    theme_minimal()
}

plot_predictive_multi <- function(object, inp, dat, grid = 60L, level = 0.95) {
  mk_new <- function(g) if (is.null(object$terms)) as.matrix(g) else g
  lev <- object$levels
  rng <- lapply(inp$vars, function(v) range(dat[[v]]))
  names(rng) <- inp$vars
  if (length(inp$vars) == 1L) {
    v <- inp$vars
    g <- data.frame(seq(rng[[v]][1], rng[[v]][2], length.out = max(grid, 100L)))
    names(g) <- v
    pr <- predict(object, mk_new(g), type = "response", interval = "credible", level = level)
    df <- data.frame(x = rep(g[[v]], length(lev)),
                     category = factor(rep(lev, each = nrow(g)), levels = lev),
                     prob = as.numeric(pr$fit), lwr = as.numeric(pr$lwr),
                     upr = as.numeric(pr$upr))
    tot <- rowSums(object$y)
    pts <- data.frame(x = rep(dat[[v]], length(lev)),
                      category = factor(rep(lev, each = nrow(object$y)), levels = lev),
                      prop = as.numeric(object$y / ifelse(tot > 0, tot, NA)),
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
    g <- expand.grid(seq(rng[[v1]][1], rng[[v1]][2], length.out = grid),
                     seq(rng[[v2]][1], rng[[v2]][2], length.out = grid))
    names(g) <- c(v1, v2)
    P <- predict(object, mk_new(g[c(v1, v2)]), type = "response")
    g$class <- factor(lev[max.col(P, ties.method = "first")], levels = lev)
    g$confidence <- apply(P, 1, max)
    pts <- data.frame(x1 = dat[[v1]], x2 = dat[[v2]], response = multi_observed_class(object))
    ggplot(g, aes(x = .data[[v1]], y = .data[[v2]])) +
      geom_raster(aes(fill = .data$class, alpha = .data$confidence)) +
      ggplot2::scale_alpha(range = c(0.15, 0.6), name = "P(class)") +
      geom_point(data = pts, aes(x = .data$x1, y = .data$x2, colour = .data$response),
                 inherit.aes = FALSE, size = 1.4) +
      labs(fill = "Predicted class", colour = "Observed",
           title = "Predictive class map") + theme_minimal()
  }
}
