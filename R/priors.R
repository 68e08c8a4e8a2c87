# Priors on the kernel hyperparameters, for full-Bayes Gibbs fits
# (augp_control(sample_hyper = TRUE)). The sampler itself is C++ (src/hyper_sampler.*);
# here: the prior families users write, their defaults from the data, and the table of
# one prior per log parameter that the sampler takes.

# Family codes shared with HyperPrior::Family in src/hyper_sampler.h.
# student_t and normal are priors on the real line (LikParamPrior in src/param_sampler.h),
# for likelihood parameters that are not positive (cut points).
PRIOR_CODES <- c(fixed = 0L, inv_gamma = 1L, half_t = 2L, lognormal = 3L, gamma = 4L,
                 half_normal = 5L, student_t = 10L, normal = 11L)

new_prior_dist <- function(family, a = 0, b = 1) {
  structure(list(family = family, a = a, b = b), class = "augp_prior_dist")
}

#' Priors on kernel hyperparameters and likelihood parameters
#'
#' Full-Bayes Gibbs fits (`method = "gibbs"` with
#' `augp_control(sample_hyper = TRUE)`) sample the kernel's hyperparameters
#' with the latent functions. `augp_prior()` sets their priors, by role:
#' every lengthscale, the standard deviation \eqn{\sqrt{v}} of every kernel
#' variance \eqn{v}, and every period. Each prior is one of the
#' distributions below (all on positive values); [augp()] takes the result as
#' its `prior` argument.
#'
#' Such fits also sample the likelihood's own parameters that the fit would
#' otherwise learn (those not fixed in the likelihood's constructor), such as
#' the noise scale `sigma` of [gaussian_noise()], `sigma` and `nu` of
#' [student_t()] and the `scale` of [laplace()]: each moves by a slice-sampling
#' step from its conditional given the latent values, under the likelihood's
#' default prior (see the likelihood's help page) or the one given in
#' `likelihood`, a named list by parameter name, for example
#' `augp_prior(likelihood = list(sigma = prior_half_normal(1)))`. Priors of
#' positive parameters are the families above; real-valued parameters take
#' `prior_normal()` or `prior_student_t()`. Their draws appear in
#' [hyper_draws()], `as_draws_*()` and `summary()`, and predictions use each
#' draw's values.
#' Positive ones also move jointly with the kernel's overall variance and,
#' with one latent function, its mean level, the whitened latent values held
#' fixed: a move along their trade-offs, such as a larger GP variance with a
#' smaller maximal rate of [poisson_logistic()].
#'
#' @section Defaults: The defaults follow those of `brms::gp()`, so that the
#'   same model can be fitted with both:
#' * lengthscale: an inverse-gamma distribution with 1% of its mass below the
#'   smallest and 1% above the largest distance between two training inputs
#'   (standardised, over all inputs, for every lengthscale of an ARD kernel
#'   too: along one input the smallest spacing of n points shrinks like
#'   1 / n^2, so a prior tuned to it would put most of its mass on
#'   lengthscales that turn the kernel matrix into a multiple of the identity);
#' * sd: a half Student-t with 3 degrees of freedom and scale 2.5 latent
#'   units (2.5 on the log-odds scale for binary and multi-class likelihoods;
#'   2.5 standard deviations of the response for regression);
#' * period: a log-normal centred on the starting period with `sdlog` 0.5.
#'
#' The variances of the second and later factors of a product kernel are held
#' fixed (only the product's overall variance is identified), and so are the
#' lengthscales of linear kernels (they only rescale the variance).
#'
#' @section Units: Lengthscale and period priors are on the standardised
#'   inputs (1 = one standard deviation of the input; see [augp_control()]'s
#'   `standardise`), as `coef(fit, units = "standardised")` reports them. The
#'   `sd` prior is in latent units. With one input, a prior
#'   `prior_inv_gamma(a, b)` on the lengthscale in data units is
#'   `prior_inv_gamma(a, b / s)` in standardised units, for the input's
#'   standard deviation `s`.
#'
#' @param lengthscale,sd,period A prior distribution (from the `prior_*()`
#'   functions) for every parameter of that role, or `NULL` for the default
#'   (see Defaults).
#' @param likelihood `NULL` (the likelihood's default priors) or a named list
#'   of prior distributions for the likelihood's parameters, by name (every
#'   element of a vector parameter gets the same prior).
#' @param shape,scale,rate,df,meanlog,sdlog,mean The distribution's parameters:
#'   inverse-gamma density \eqn{b^a / \Gamma(a) x^{-a-1} e^{-b/x}} (shape a,
#'   scale b); half Student-t (`df`, `scale`: twice the density of a scaled
#'   t on \eqn{x > 0}); log-normal (`meanlog`, `sdlog`); gamma (`shape`,
#'   `rate`); half-normal (`scale`); on the whole real line, normal (`mean`,
#'   `sd`) and Student-t centred at 0 (`df`, `scale`).
#' @return `augp_prior()`: an object of class `augp_prior`; the `prior_*()`
#'   functions: a prior distribution (class `augp_prior_dist`).
#' @seealso [augp_control()] (`sample_hyper`), [hyper_draws()].
#' @examples
#' augp_prior(lengthscale = prior_inv_gamma(5, 5), sd = prior_half_normal(2))
#' set.seed(1)
#' x <- matrix(rnorm(40), 20)
#' y <- factor(x[, 1] > 0)
#' fit <- augp_fit(x, y, method = "gibbs",
#'                 prior = augp_prior(lengthscale = prior_inv_gamma(4, 4)),
#'                 control = augp_control(sample_hyper = TRUE, iter = 200, chains = 1,
#'                                        threads = 1))
#' summary(fit)
#' @name priors
NULL

#' @rdname priors
#' @export
augp_prior <- function(lengthscale = NULL, sd = NULL, period = NULL, likelihood = NULL) {
  args <- list(lengthscale = lengthscale, sd = sd, period = period)
  for (nm in names(args)) {
    if (!is.null(args[[nm]]) && (!inherits(args[[nm]], "augp_prior_dist") ||
                                 !prior_is_positive(args[[nm]]))) {
      stop(sprintf("`%s` must be NULL or a prior on positive values such as prior_inv_gamma(5, 5).",
                   nm), call. = FALSE)
    }
  }
  if (!is.null(likelihood)) {
    ok <- is.list(likelihood) && !inherits(likelihood, "augp_prior_dist") &&
      length(likelihood) > 0 && !is.null(names(likelihood)) && all(nzchar(names(likelihood))) &&
      !anyDuplicated(names(likelihood)) &&
      all(vapply(likelihood, inherits, logical(1), "augp_prior_dist"))
    if (!ok) {
      stop(paste0("`likelihood` must be NULL or a named list of priors by parameter name, ",
                  "such as list(sigma = prior_half_normal(1))."), call. = FALSE)
    }
  }
  args["likelihood"] <- list(likelihood)
  structure(args, class = "augp_prior")
}

# Whether a prior is on positive values (sampled on the log scale).
prior_is_positive <- function(p) PRIOR_CODES[[p$family]] < PRIOR_CODES[["student_t"]]

#' @rdname priors
#' @export
prior_inv_gamma <- function(shape, scale) {
  new_prior_dist("inv_gamma", check_number(shape, "shape", min = 0, min_open = TRUE),
                 check_number(scale, "scale", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_half_t <- function(df = 3, scale = 2.5) {
  new_prior_dist("half_t", check_number(df, "df", min = 0, min_open = TRUE),
                 check_number(scale, "scale", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_lognormal <- function(meanlog = 0, sdlog = 1) {
  new_prior_dist("lognormal", check_number(meanlog, "meanlog"),
                 check_number(sdlog, "sdlog", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_gamma <- function(shape, rate) {
  new_prior_dist("gamma", check_number(shape, "shape", min = 0, min_open = TRUE),
                 check_number(rate, "rate", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_half_normal <- function(scale = 1) {
  new_prior_dist("half_normal", 0, check_number(scale, "scale", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_normal <- function(mean = 0, sd = 1) {
  new_prior_dist("normal", check_number(mean, "mean"),
                 check_number(sd, "sd", min = 0, min_open = TRUE))
}

#' @rdname priors
#' @export
prior_student_t <- function(df = 3, scale = 2.5) {
  new_prior_dist("student_t", check_number(df, "df", min = 0, min_open = TRUE),
                 check_number(scale, "scale", min = 0, min_open = TRUE))
}

#' @export
format.augp_prior_dist <- function(x, digits = 3, ...) {
  f <- function(v) format(signif(v, digits))
  switch(x$family,
         fixed = "fixed",
         inv_gamma = sprintf("inv_gamma(%s, %s)", f(x$a), f(x$b)),
         half_t = sprintf("half_t(%s, %s)", f(x$a), f(x$b)),
         lognormal = sprintf("lognormal(%s, %s)", f(x$a), f(x$b)),
         gamma = sprintf("gamma(%s, %s)", f(x$a), f(x$b)),
         half_normal = sprintf("half_normal(%s)", f(x$b)),
         normal = sprintf("normal(%s, %s)", f(x$a), f(x$b)),
         student_t = sprintf("student_t(%s, 0, %s)", f(x$a), f(x$b)))
}

#' @export
print.augp_prior_dist <- function(x, ...) {
  cat("<prior>", format(x), "\n")
  invisible(x)
}

#' @export
print.augp_prior <- function(x, ...) {
  cat("<augp_prior>\n")
  for (nm in c("lengthscale", "sd", "period")) {
    cat(sprintf("  %-11s %s\n", nm, if (is.null(x[[nm]])) "default" else format(x[[nm]])))
  }
  for (nm in names(x$likelihood)) cat(sprintf("  %-11s %s\n", nm, format(x$likelihood[[nm]])))
  invisible(x)
}

# NULL, or an augp_prior; anything else is an error naming `prior`.
check_prior <- function(prior) {
  if (is.null(prior) || inherits(prior, "augp_prior")) return(prior)
  stop("`prior` must be NULL or made by augp_prior().", call. = FALSE)
}

# The inverse-gamma distribution with 1% of its mass below lo and 1% above hi (lo < hi):
# 1 / l is gamma(a, rate b), so qgamma(0.99, a) / qgamma(0.01, a) = hi / lo fixes a
# (the ratio falls as a grows) and then b = lo * qgamma(0.99, a, rate = 1).
prior_inv_gamma_tuned <- function(lo, hi) {
  ratio <- function(la) {
    a <- exp(la)
    log(stats::qgamma(0.99, a)) - log(stats::qgamma(0.01, a)) - log(hi / lo)
  }
  la <- if (ratio(log(1e4)) > 0) log(1e4) else if (ratio(log(1e-2)) < 0) log(1e-2) else
    stats::uniroot(ratio, c(log(1e-2), log(1e4)), tol = 1e-10)$root
  a <- exp(la)
  new_prior_dist("inv_gamma", a, lo * stats::qgamma(0.99, a))
}

# Smallest positive and largest distance between rows of X (at most 1000 evenly spaced
# rows, so the cost stays bounded).
input_distance_range <- function(X) {
  X <- as.matrix(X)
  if (nrow(X) > 1000L) X <- X[unique(round(seq(1, nrow(X), length.out = 1000))), , drop = FALSE]
  d <- as.numeric(stats::dist(X))
  d <- d[d > 1e-10 * max(1, max(d))]
  if (!length(d)) return(c(1, 1))
  range(d)
}

# Default lengthscale prior for the inputs `cols` of X.
default_lengthscale_prior <- function(X, cols) {
  r <- input_distance_range(X[, cols, drop = FALSE])
  if (!(r[2] > r[1] * 1.01)) r <- c(r[1] / 10, r[2] * 10)
  prior_inv_gamma_tuned(r[1], r[2])
}

# The role of every log parameter of a kernel (kernel_flatten() order): "variance",
# "lengthscale", "period", whether it is held fixed (variances of later factors of a
# product; lengthscales of linear kernels), and its leaf's active inputs (`cols`, a
# list column: integer(0) for all of them).
kernel_param_roles <- function(k, later_factor = FALSE) {
  if (k$type %in% c("sum", "prod")) {
    a <- kernel_param_roles(k$k1, later_factor)
    b <- kernel_param_roles(k$k2, later_factor || k$type == "prod")
    return(rbind(a, b))
  }
  nl <- length(k$lengthscale)
  per <- k$type == "periodic"
  np <- 1L + nl + per
  out <- data.frame(type = rep(k$type, np),
                    role = c("variance", rep("lengthscale", nl), if (per) "period"),
                    fixed = c(later_factor, rep(k$type == "linear", nl), if (per) FALSE),
                    start = c(k$variance, k$lengthscale, if (per) k$period),
                    stringsAsFactors = FALSE)
  out$cols <- rep(list(kernel_leaf_idx(k)), np)
  out
}

# One prior per log parameter of `kernel` (one kernel, or per-column kernels, on the
# standardised inputs X): a data frame with the parameter names of engine_get_params(),
# role, the prior (a list column of augp_prior_dist) and the sampler's codes (code, a, b,
# on_sd). `prior`: an augp_prior or NULL; latent_scale: the unit of the sd prior (one
# per kernel of a kernel list when the latent functions have different scales).
hyper_prior_table <- function(kernel, prior, X, latent_scale = 1) {
  if (is.null(prior)) prior <- augp_prior()
  one <- function(k, ls = latent_scale[1]) {
    roles <- kernel_param_roles(k)
    pr <- lapply(seq_len(nrow(roles)), function(i) {
      if (roles$fixed[i]) return(new_prior_dist("fixed"))
      switch(roles$role[i],
             variance = if (!is.null(prior$sd)) prior$sd else
               new_prior_dist("half_t", 3, 2.5 * ls),
             lengthscale = if (!is.null(prior$lengthscale)) prior$lengthscale else
               default_lengthscale_prior(X, if (length(roles$cols[[i]])) roles$cols[[i]] else
                                           seq_len(ncol(X))),
             period = if (!is.null(prior$period)) prior$period else
               new_prior_dist("lognormal", log(roles$start[i]), 0.5))
    })
    roles$prior <- pr
    roles
  }
  tab <- if (is_kernel_list(kernel)) {
    do.call(rbind, lapply(seq_along(kernel), function(j) {
      one(kernel[[j]], latent_scale[min(j, length(latent_scale))])
    }))
  } else {
    one(kernel)
  }
  tab$name <- names(engine_get_params(kernel))
  tab$code <- unname(PRIOR_CODES[vapply(tab$prior, `[[`, "", "family")])
  tab$a <- vapply(tab$prior, `[[`, 0, "a")
  tab$b <- vapply(tab$prior, `[[`, 0, "b")
  tab$on_sd <- as.numeric(tab$role == "variance")
  rownames(tab) <- NULL
  tab
}

# The matrix the C++ sampler takes: code, a, b, on_sd per log parameter.
hyper_prior_matrix <- function(tab) {
  m <- cbind(tab$code, tab$a, tab$b, tab$on_sd)
  storage.mode(m) <- "double"
  m
}

# The priors of the likelihood parameters that a full-Bayes Gibbs fit samples: a data
# frame with one row per sampled element (name and 1-based index of the element in
# Likelihood::params(), label as in the draws, the prior (list column) and the sampler's
# code, a, b, and location: whether the element shifts with the latent level,
# lik_location_params()), from the likelihood's defaults (lik_param_priors()) and the user's
# `prior$likelihood` by name. An error names a prior given for a parameter the fit does
# not sample, and a prior of the wrong kind (positive vs real).
lik_prior_table <- function(likelihood, resp, prior) {
  def <- lik_param_priors(likelihood, resp)
  user <- if (!is.null(prior)) prior$likelihood
  extra <- setdiff(names(user), names(def))
  if (length(extra)) {
    stop(sprintf(paste0("`prior`: the likelihood has no parameter %s to sample (it samples %s)."),
                 paste0("`", extra, "`", collapse = ", "),
                 if (length(def)) paste0("`", names(def), "`", collapse = ", ") else "none"),
         call. = FALSE)
  }
  rows <- lapply(names(def), function(nm) {
    d <- def[[nm]]
    p <- if (!is.null(user[[nm]])) user[[nm]] else d$prior
    if (prior_is_positive(p) != d$positive) {
      stop(sprintf("`prior`: `%s` needs a prior on %s.", nm,
                   if (d$positive) "positive values (such as prior_half_t())" else
                     "the real line (prior_normal() or prior_student_t())"), call. = FALSE)
    }
    k <- seq_len(d$n)
    data.frame(name = nm, index = k, label = if (d$n == 1L) nm else sprintf("%s[%d]", nm, k),
               prior = I(rep(list(p), d$n)), code = PRIOR_CODES[[p$family]], a = p$a, b = p$b,
               location = nm %in% lik_location_params(likelihood), stringsAsFactors = FALSE)
  })
  if (!length(rows)) return(NULL)
  tab <- do.call(rbind, rows)
  rownames(tab) <- NULL
  tab
}
