#' Predict from an augmented GP model
#'
#' @param object A fit from [augp()] or [augp_fit()].
#' @param newdata A data frame (formula fits) or matrix (matrix fits) of new
#'   inputs; missing means the training inputs. Every predictor used in the
#'   fit must be present and factor levels must have been seen in training.
#'   Rows with missing predictors give `NA`; a `newdata` with no rows gives
#'   an empty result of the same type.
#' @param type `"response"`: the probability of the second class (the
#'   "success"); `"link"`: the latent function \eqn{f} (log-odds);
#'   `"class"`: the more probable class, as a factor. For likelihoods with
#'   several latent functions (logistic-softmax, stick-breaking),
#'   `"response"` gives a matrix of category probabilities (one column per
#'   level), `"link"` a matrix of latent posterior means (one column per
#'   latent function) and `"class"` the most probable category. `"noise"`:
#'   the standard deviation of the observation noise at the inputs, for
#'   regression likelihoods, with `se.fit` and credible intervals: constant
#'   over the inputs for [gaussian_noise()] (\eqn{\sigma}), [student_t()] (its
#'   scale \eqn{\sigma}) and [laplace()] (\eqn{\sqrt{2} b}), summarised over
#'   the posterior draws of a full-Bayes fit or the hyperparameter points of an
#'   averaged fit (`integrate_hyper`), and a single value with standard error
#'   0 otherwise; input-dependent for [heteroscedastic_gaussian()].
#' @param se.fit Also return posterior standard deviations of the latent
#'   function (for `type = "link"`) or of the probability (`"response"`).
#' @param interval `"none"`, `"credible"`: pointwise credible intervals for
#'   the latent function or the response mean (the probability), at probability
#'   `level`; or `"prediction"` (`type = "response"`): pointwise intervals for
#'   one new observation, including the observation noise (for [gaussian_noise()]
#'   the quantiles of \eqn{N(m, v + \sigma^2)}; otherwise quantiles of responses
#'   simulated from the posterior predictive distribution, one trial each).
#' @param level Probability of the credible interval, strictly between 0 and 1.
#' @param offset Offsets for the rows of `newdata`, for fits with an offset
#'   (see [augp()]). Formula fits evaluate their `offset()` terms and `offset`
#'   argument on `newdata`, as [stats::predict.glm()] does, and take no
#'   `offset` here; fits from [augp_fit()] with an offset need one value per
#'   row of `newdata`.
#' @param ... Unused.
#' @details For variational fits the probability is
#'   \eqn{E_q[\sigma(f)]}, computed by Gauss-Hermite quadrature under the
#'   Gaussian approximation \eqn{q(f)}; for Gibbs fits it is the average of
#'   \eqn{\sigma(f)} over the posterior draws. With several latent functions
#'   the category probabilities are averaged over `control$pred_draws` Monte
#'   Carlo draws from the marginals of \eqn{q(f)} (seeded from the fit's
#'   `seed`, so repeated calls agree) or over the posterior draws of a Gibbs
#'   fit; intervals are pointwise quantiles of the same draws.
#'
#'   Without `newdata`, the predictions are those at the training rows
#'   (equal to [fitted.augp()]); with `na.action = na.exclude` in [augp()]
#'   they are padded with `NA` for the rows with missing values, as
#'   [stats::predict.glm()] does. Rows dropped for zero weight (or zero
#'   trials) are then `NA` too.
#' @return A vector (factor for `"class"`), or, with `se.fit = TRUE` or an
#'   interval, a data frame with columns `fit`, `se.fit`, `lwr`, `upr` as
#'   requested. With several latent functions: a matrix (factor for
#'   `"class"`), or a list of matrices `fit`, `se.fit`, `lwr`, `upr`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y)
#' predict(fit, matrix(c(-1, 1, 0, 0), 2), type = "class")
#' @export
predict.augp <- function(object, newdata, type = c("response", "link", "class", "noise"),
                         se.fit = FALSE, interval = c("none", "credible", "prediction"),
                         level = 0.95, offset = NULL, ...) {
  type <- match.arg(type)
  interval <- match.arg(interval)
  if (!is.logical(se.fit) || length(se.fit) != 1 || is.na(se.fit)) {
    stop("`se.fit` must be TRUE or FALSE.", call. = FALSE)
  }
  level <- check_level(level)
  nd <- if (missing(newdata)) NULL else newdata
  if (!is.null(offset) && is.null(nd)) {
    stop("`offset` applies to `newdata` only: the training rows use the fit's own offset.",
         call. = FALSE)
  }
  if (type == "noise" && interval == "prediction") {
    stop("`interval = \"prediction\"` needs `type = \"response\"`.", call. = FALSE)
  }
  if (interval == "prediction" && type != "response") {
    stop("`interval = \"prediction\"` needs `type = \"response\"`.", call. = FALSE)
  }
  lik <- object$likelihood
  if (type == "class") {
    fit <- predict_parts(object, nd, "response", FALSE, FALSE, level, offset)$fit
    out <- predicted_class(lik, fit, object$levels)
    names(out) <- rownames(fit)
    return(out)
  }
  present_response(lik, predict_parts(object, nd, type, se.fit, interval != "none", level,
                                      offset, predictive = interval == "prediction"))
}

# The summaries predict() presents, as a named list of matrices (one row per row of
# newdata or per training row, NA for incomplete inputs; one column per latent column
# for type "link", per response column for "response"): fit, and as asked se.fit,
# lwr, upr (with `predictive`, the interval of one new response: prediction_interval()).
predict_parts <- function(object, newdata, type, se.fit, want_int, level, offset = NULL,
                          predictive = FALSE) {
  lik <- object$likelihood
  level <- check_level(level)
  lp <- latent_posterior(object, newdata, offset)
  alpha <- (1 - level) / 2
  if (!any(lp$ok)) {
    # no rows to predict (a newdata with no rows): empty matrices of the right columns
    cols <- if (type == "link") latent_names(lik, object$levels, object$q) else
      if (type == "noise") "noise_sd" else response_names(lik, object$levels)
    E <- matrix(NA_real_, length(lp$ok), length(cols), dimnames = list(lp$rownames, cols))
    return(c(list(fit = E), if (se.fit) list(se.fit = E), if (want_int) list(lwr = E, upr = E)))
  }
  if (type == "link") {
    cols <- latent_names(lik, object$levels, object$q)
    parts <- list(fit = lp$mean)
    if (se.fit) parts$se.fit <- sqrt(lp$var)
    if (want_int) {
      if (!is.null(lp$draws)) {
        q7 <- function(p) apply(lp$draws, c(2, 3), stats::quantile, probs = p, names = FALSE)
        parts$lwr <- q7(alpha)
        parts$upr <- q7(1 - alpha)
      } else {
        z <- stats::qnorm(1 - alpha)
        parts$lwr <- lp$mean - z * sqrt(lp$var)
        parts$upr <- lp$mean + z * sqrt(lp$var)
      }
    }
  } else if (type == "noise") {
    cols <- "noise_sd"
    ns <- lik_noise_summary(lik, object, lp, if (want_int) level else 0)
    parts <- list(fit = ns$mean)
    if (se.fit) parts$se.fit <- ns$sd
    if (want_int) {
      parts$lwr <- ns$lwr
      parts$upr <- ns$upr
    }
  } else {
    cols <- response_names(lik, object$levels)
    rs <- response_summary(object, lp, if (want_int) level else 0)
    parts <- list(fit = rs$mean)
    if (se.fit) parts$se.fit <- rs$sd
    if (want_int && predictive) {
      pint <- prediction_interval(object, lp, level)
      parts$lwr <- pint$lwr
      parts$upr <- pint$upr
    } else if (want_int) {
      parts$lwr <- rs$lwr
      parts$upr <- rs$upr
    }
  }
  lapply(parts, function(M) {
    out <- matrix(NA_real_, length(lp$ok), ncol(M), dimnames = list(lp$rownames, cols))
    out[lp$ok, ] <- M
    if (is.null(newdata)) out <- pad_excluded(object, out)
    out
  })
}

# The latent posterior at the training inputs (newdata NULL) or at new inputs:
# list(mean, var: r x q for the r rows with complete inputs; draws: S x r x q
# posterior draws for Gibbs fits, NULL for variational fits; ok: which rows have
# complete inputs; rownames: those of newdata's rows, NULL at the training inputs, so
# that predictions there match fitted()). At new inputs the draws of Gibbs fits are
# drawn with R's generator seeded from the fit (withr::with_seed()). `offset`: the
# offsets of newdata's rows for fits from augp_fit() with an offset. Fits averaged over
# their hyperparameters (engine$mixture) add draws from the mixture, their ids and the
# points' marginals (mixture_latent_posterior()).
latent_posterior <- function(object, newdata = NULL, offset = NULL) {
  q <- object$q
  gibbs <- object$method == "gibbs"
  X <- NULL
  if (is.null(newdata)) {
    ok <- rep(TRUE, object$n)
    rn <- NULL
    pr <- object$engine
  } else {
    X <- new_design(object, newdata, offset)
    ok <- attr(X, "ok")
    rn <- rownames(X)
  }
  if (!is.null(object$engine$mixture) && any(ok)) {
    return(mixture_latent_posterior(object, X, ok, rn))
  }
  if (!is.null(newdata)) {
    pr <- if (any(ok)) {
      withr::with_seed(pred_seed(object), engine_predict_new(object, X, ok, draws = gibbs))
    } else {
      list(mean = numeric(0), var = numeric(0), draws = numeric(0))
    }
  }
  r <- sum(ok)
  # an r x q view of the engine's values: `dim<-` on a shared double vector wraps it
  # without copying (the training marginals of a large fit are not duplicated)
  as_rq <- function(a) {
    if (!is.double(a)) a <- as.double(a)
    if (!identical(dim(a), c(r, q))) dim(a) <- c(r, q)
    a
  }
  v <- as_rq(pr$var)
  # (min() allocates nothing: no logical vector of length r for a large fit)
  if (length(v) && isTRUE(min(v, na.rm = TRUE) < 0)) v <- pmax(v, 0)
  list(mean = as_rq(pr$mean), var = v,
       draws = if (gibbs && r > 0) latent_draw_array(pr$draws, r, q), ok = ok, rownames = rn)
}

# The engine's predictive distribution at the rows `ok` of a new design X (from
# new_design()), with the prior mean of those rows (the fit's constant prior mean plus
# their centred offsets, when the fit has an offset). Gibbs fits: from the stored draws
# `ids` only (NULL: all).
engine_predict_new <- function(object, X, ok, draws = FALSE, ids = NULL) {
  Xo <- X[ok, , drop = FALSE]
  mean0 <- NULL
  if (!is.null(object$offset_centre)) {
    off <- attr(X, "offset")[ok]
    m0 <- engine_mean0_new(list(q = object$q, mean0 = object$mean0), length(off), NULL)
    mean0 <- m0 + (off - object$offset_centre)
    if (object$q == 1L) mean0 <- as.numeric(mean0)
  }
  augp_engine_predict(object$engine, Xo, draws = draws, mean0 = mean0, ids = ids)
}

# The engine likelihood list `lik` (default: the fit's) with the per-draw values of the
# likelihood parameters that a full-Bayes Gibbs fit sampled (element param_draws, which
# the C++ response methods apply draw by draw), at the stored draws `ids` (draw
# s = iteration + iterations * (chain - 1); NULL: all, in that order). Unchanged for fits
# without such draws. Fits averaged over their hyperparameters (engine$mixture): the
# likelihood parameters of the points the draws `ids` (1, 2, ...) belong to.
lik_with_draws <- function(eng, ids = NULL, lik = eng$lik) {
  mx <- eng$mixture
  if (!is.null(mx)) {
    if (is.null(ids)) stop("internal: draws of a mixture need their ids.", call. = FALSE)
    if (!length(mx$lik_names)) return(lik)
    lik$param_draws <- list(names = mx$lik_names, index = as.integer(mx$lik_index),
                            values = mx$lik_values[mixture_component(ids, mx$J), , drop = FALSE])
    return(lik)
  }
  if (is.null(eng$lik_draws)) return(lik)
  d <- dim(eng$lik_draws)
  vals <- matrix(eng$lik_draws, d[1] * d[2], d[3])
  if (!is.null(ids)) vals <- vals[ids, , drop = FALSE]
  lik$param_draws <- list(names = eng$lik_prior$name, index = as.integer(eng$lik_prior$index),
                          values = vals)
  lik
}

# Latent draws at r points as an S x r x q array. The engine gives draws with the
# draw index varying fastest: the fit's [iterations, chains, r * q] array, or from
# augp_engine_predict() an S x r matrix (q = 1) or S x r x q array.
latent_draw_array <- function(draws, r, q) {
  array(draws, c(length(draws) / (r * q), r, q))
}

# Summary of the response mean (list of r x R matrices mean, sd (0 x R with sd = FALSE,
# variational fits), and for level > 0 lwr, upr) from the latent posterior `lp` of
# latent_posterior(): over the posterior
# draws of a Gibbs fit, or under the Gaussian marginals of a variational fit, with the
# likelihood's rule (exact quadrature, or an average over control$pred_draws standard
# normal draws seeded from the fit so that repeated calls agree).
response_summary <- function(object, lp, level = 0, sd = TRUE) {
  lik <- object$engine$lik
  if (!is.null(lp$parts)) return(mixture_response_summary(object, lp, level, sd))
  if (!is.null(lp$draws)) return(.lik_response_draws_cpp(lik_with_draws(object$engine), lp$draws, level))
  Z <- pred_normals(object)
  # the summary reads the likelihood's parameters, not its data: one row of it is passed
  # (so that a large fit's response is not converted again)
  .lik_response_cpp(sparse_lik_subset(lik, 1L), lp$mean, lp$var, Z, level,
                    resolve_threads(object$control$threads), sd)
}

# The central interval of probability `level` of one new response (one trial) per row
# of the latent posterior `lp`: list(lwr, upr), r x R. Gibbs fits: type-7 quantiles of
# one response simulated per posterior draw; variational fits: the likelihood's
# predictive_interval() under the Gaussian marginals (exact or Monte Carlo). Seeded
# from the fit so that repeated calls agree.
prediction_interval <- function(object, lp, level) {
  lik <- object$engine$lik
  seed <- c(pred_seed(object), 4242)
  if (is.null(lp$draws)) return(.lik_predictive_interval_cpp(lik, lp$mean, lp$var, level, seed))
  r <- dim(lp$draws)[2]
  sims <- .lik_simulate_cpp(lik_with_draws(object$engine, lp$ids), lp$draws, rep(1, r), seed)
  q7 <- function(p) matrix(apply(sims, c(2, 3), stats::quantile, probs = p, names = FALSE), r)
  list(lwr = q7((1 - level) / 2), upr = q7(1 - (1 - level) / 2))
}

# Seed of the Monte Carlo draws behind predictions: the fit's seed, so repeated
# predictions agree and the user's random number stream is left alone.
pred_seed <- function(object) if (is.null(object$seed)) 1L else object$seed

# The number of Monte Carlo draws behind predictions (control$pred_draws, 1000 by default).
pred_draw_count <- function(object) {
  S <- object$control$pred_draws
  if (is.null(S)) 1000L else S
}

# The pred_draw_count() x q standard normals of the likelihood's Monte Carlo rule for the
# response summary, seeded from the fit.
pred_normals <- function(object) {
  S <- pred_draw_count(object)
  withr::with_seed(pred_seed(object), matrix(stats::rnorm(S * object$q), S, object$q))
}

# Rebuild the standardised design for new data exactly as in training. Attributes:
# "ok", the rows with complete inputs (and offsets), and for fits with an offset
# "offset", the offsets of the rows (from newdata for formula fits, as predict.glm()
# evaluates them, else the `offset` given).
new_design <- function(object, newdata, offset = NULL) {
  has_off <- !is.null(object$offset_centre)
  if (!is.null(offset) && !has_off) {
    stop("`offset`: the fit has no offset, so predictions take none.", call. = FALSE)
  }
  if (!is.null(offset) && !is.null(object$terms)) {
    stop(paste0("`offset`: a formula fit evaluates its offsets on `newdata` (give the offset ",
                "variables as columns of `newdata`)."), call. = FALSE)
  }
  off <- NULL
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) {
      if (is.list(newdata)) {
        newdata <- as.data.frame(newdata)
      } else {
        stop("`newdata` must be a data frame for a model fitted with a formula.",
             call. = FALSE)
      }
    }
    tt <- stats::delete.response(object$terms)
    vars <- all.vars(tt)
    miss <- setdiff(vars, names(newdata))
    if (length(miss)) {
      stop(sprintf("`newdata` is missing column(s) used in the fit: %s.",
                   paste(sQuote(miss, FALSE), collapse = ", ")), call. = FALSE)
    }
    for (v in names(object$xlevels)) {
      if (!v %in% names(newdata)) next
      val <- as.character(newdata[[v]])
      unseen <- setdiff(unique(val[!is.na(val)]), object$xlevels[[v]])
      if (length(unseen)) {
        stop(sprintf("`newdata` has level(s) %s of factor '%s' not seen in training.",
                     paste(sQuote(unseen, FALSE), collapse = ", "), v), call. = FALSE)
      }
    }
    mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                             xlev = object$xlevels)
    X <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    if (has_off) {
      off <- stats::model.offset(mf)
      if (is.null(off)) off <- rep(0, nrow(X))
      if (!is.null(object$call$offset)) {
        off <- off + tryCatch(
          eval(object$call$offset, newdata, environment(object$terms)),
          error = function(e) {
            stop(sprintf("`newdata`: the fit's `offset` (%s) cannot be evaluated on it: %s",
                         paste(deparse(object$call$offset), collapse = " "),
                         conditionMessage(e)), call. = FALSE)
          })
      }
      if (!is.numeric(off) || length(off) != nrow(X)) {
        stop("`newdata`: the offset evaluated on it does not give one number per row.",
             call. = FALSE)
      }
    }
  } else {
    if (is.data.frame(newdata)) newdata <- as.matrix(newdata)
    if (is.vector(newdata) && is.numeric(newdata) && length(object$x_names) == 1L) {
      newdata <- matrix(newdata, ncol = 1L)
    }
    if (!is.matrix(newdata) || !is.numeric(newdata)) {
      stop("`newdata` must be a numeric matrix for a model fitted with augp_fit().",
           call. = FALSE)
    }
    if (!is.null(colnames(newdata)) && all(object$x_names %in% colnames(newdata))) {
      X <- newdata[, object$x_names, drop = FALSE]
    } else if (!is.null(colnames(newdata)) && any(colnames(newdata) %in% object$x_names)) {
      miss <- setdiff(object$x_names, colnames(newdata))
      stop(sprintf("`newdata` is missing column(s) used in the fit: %s.",
                   paste(sQuote(miss, FALSE), collapse = ", ")), call. = FALSE)
    } else if (ncol(newdata) == length(object$x_names)) {
      X <- newdata
      colnames(X) <- object$x_names
    } else {
      stop(sprintf("`newdata` has %d column(s); the fit used %d.", ncol(newdata),
                   length(object$x_names)), call. = FALSE)
    }
    if (has_off) {
      if (is.null(offset)) {
        stop(paste0("`offset`: the fit has an offset, so predictions at `newdata` need ",
                    "`offset`, one value per row of `newdata`."), call. = FALSE)
      }
      if (!is.numeric(offset) || length(offset) != nrow(X)) {
        stop(sprintf("`offset` must be numeric with one value per row of `newdata` (%d).",
                     nrow(X)), call. = FALSE)
      }
      off <- as.numeric(offset)
    }
  }
  keep <- setdiff(colnames(X), object$dropped)
  X <- X[, keep, drop = FALSE]
  if (any(is.infinite(X))) {
    stop("`newdata` contains Inf in the predictors.", call. = FALSE)
  }
  if (has_off && any(is.infinite(off))) {
    stop("`offset` (for `newdata`) contains Inf.", call. = FALSE)
  }
  ok <- stats::complete.cases(X) & (if (has_off) !is.na(off) else TRUE)
  if (nrow(X) > 0 && !any(ok)) {
    # rows with NA give NA predictions, but there must be something to predict
    stop("`newdata` has no complete row: every row has NA in a predictor (or offset).",
         call. = FALSE)
  }
  X <- sweep(sweep(X, 2, object$centre[keep], "-"), 2, object$scale[keep], "/")
  storage.mode(X) <- "double"
  attr(X, "ok") <- ok
  if (has_off) attr(X, "offset") <- as.numeric(off)
  X
}
