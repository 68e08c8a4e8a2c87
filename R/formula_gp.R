# gp() terms in augp() formulas: additive GPs written as in brms or mgcv. A formula with
# gp() terms is rewritten into a plain one (each gp() replaced by its variables) and a
# kernel: one kernel per gp() term on its variables, plus a linear kernel on each other
# term (its dummy columns for a factor).

#' Additive Gaussian-process terms in a model formula
#'
#' In an [augp()] formula, `gp(x1, x2, ...)` is one smooth function of the
#' variables it names, and the terms outside `gp()` are linear effects.
#' `augp(y ~ gp(age) + gp(lat, lon) + treatment, data)` fits
#' \deqn{f(x) = g_1(\mathrm{age}) + g_2(\mathrm{lat}, \mathrm{lon}) +
#' \beta' x_{\mathrm{treatment}},}{f(x) = g1(age) + g2(lat, lon) + beta' treatment,}
#' with independent GP priors on the functions \eqn{g_j} and a Gaussian prior on
#' the coefficients \eqn{\beta} whose variance is learned (a linear kernel on
#' the term's columns; on a factor's dummy columns it is close to a random
#' intercept per level). It is the same model as the kernel
#' `kernel_se(dims = "age") + kernel_se(dims = c("lat", "lon")) + kernel_linear(dims = "treatment")`
#' (see Active inputs in [kernels]), written as in brms's `gp()` terms and
#' mgcv's `s()` terms.
#'
#' A formula without `gp()` terms keeps the default: one kernel on all
#' inputs, in which every input can interact with every other.
#'
#' @param ... The variables of the term: names of the data's columns, or
#'   expressions of them such as `log(dose)`.
#' @param kernel The term's kernel, with `dims` left out (it is set to the
#'   term's variables); `NULL` (the default) is the likelihood's default
#'   kernel (the Matern 5/2 for [gaussian_noise()], the squared exponential
#'   otherwise). Its lengthscales are in the units of the variables; a
#'   default lengthscale on several variables is learned one per variable for
#'   [gaussian_noise()] when that predicts better (see `ard` in
#'   [augp_control()]).
#' @return `gp()` is only meaningful inside an [augp()] formula; called
#'   directly it stops with an error.
#' @seealso [kernels] for kernels on some of the inputs.
#' @examples
#' fit <- augp(Ozone ~ gp(Temp) + gp(Wind) + Solar.R, data = airquality,
#'             likelihood = gaussian_noise(), seed = 1)
#' coef(fit)
#' @export
gp <- function(..., kernel = NULL) {
  stop("`gp()` marks a Gaussian-process term in an augp() formula; it is not a function to call.",
       call. = FALSE)
}

# The gp() terms of `formula` (`data`: the data frame that a `.` stands for, or NULL;
# `env`: where to evaluate the terms' `kernel` arguments): NULL when there are none, else
# list(formula: the formula with each gp() term replaced by its variables, offsets kept;
# terms: one list(vars, kernel) per gp() term, vars the variables' labels; linear: the
# labels of the other terms).
formula_gp_terms <- function(formula, data = NULL, env = environment(formula)) {
  tt <- stats::terms(formula, specials = "gp", data = data)
  idx <- attr(tt, "specials")$gp
  if (is.null(idx)) return(NULL)
  vars <- as.list(attr(tt, "variables"))[-1L]
  fac <- attr(tt, "factors")
  labels <- attr(tt, "term.labels")
  gp_labels <- character(0)
  terms <- lapply(idx, function(i) {
    call <- vars[[i]]
    lab <- deparse1(call)
    used_in <- colnames(fac)[fac[lab, ] > 0]
    if (!identical(used_in, lab)) {
      stop(sprintf(paste0("`formula`: the gp() term %s appears in an interaction (%s); a gp() ",
                          "term on several variables, gp(x1, x2), models their joint effect."),
                   lab, paste(setdiff(used_in, lab), collapse = ", ")), call. = FALSE)
    }
    gp_labels <<- c(gp_labels, lab)
    args <- as.list(call)[-1L]
    nm <- names(args)
    if (is.null(nm)) nm <- rep("", length(args))
    bad <- setdiff(nm[nzchar(nm)], "kernel")
    if (length(bad)) {
      stop(sprintf("`formula`: gp() takes variables and `kernel`, not `%s` (in %s).",
                   bad[1], lab), call. = FALSE)
    }
    v <- args[!nzchar(nm)]
    if (!length(v)) stop(sprintf("`formula`: %s names no variable.", lab), call. = FALSE)
    k <- if ("kernel" %in% nm) eval(args[[which(nm == "kernel")]], env) else NULL
    if (!is.null(k) && !is_kernel(k)) {
      stop(sprintf("`formula`: the kernel of %s must be a kernel such as kernel_se().", lab),
           call. = FALSE)
    }
    if (!is.null(k) && kernel_has_dims(k)) {
      stop(sprintf("`formula`: the kernel of %s sets `dims`; gp() sets them to its variables.",
                   lab), call. = FALSE)
    }
    list(vars = unique(vapply(v, deparse1, "")), kernel = k)
  })
  linear <- setdiff(labels, gp_labels)
  offsets <- vapply(vars[attr(tt, "offset")], deparse1, "")
  rhs <- c(linear, unique(unlist(lapply(terms, `[[`, "vars"))), offsets)
  lhs <- if (attr(tt, "response") > 0) vars[[attr(tt, "response")]]
  f <- stats::reformulate(rhs, response = lhs, intercept = attr(tt, "intercept") > 0)
  environment(f) <- environment(formula)
  list(formula = f, terms = terms, linear = linear)
}

# Does any leaf of a kernel set its inputs?
kernel_has_dims <- function(k) {
  if (k$type %in% c("sum", "prod")) return(kernel_has_dims(k$k1) || kernel_has_dims(k$k2))
  !is.null(k$dims)
}

# Every leaf of k on the inputs `dims`.
kernel_set_dims <- function(k, dims) {
  dims <- kernel_check_dims_arg(dims)
  kernel_map_leaves(k, function(leaf) {
    leaf$dims <- dims
    leaf
  })
}

# The kernel of a formula's gp() terms (formula_gp_terms()): the gp() terms' kernels (the
# likelihood's default kernel where none is given) on their variables, plus a linear
# kernel on each other term.
formula_gp_kernel <- function(gpt, likelihood) {
  ks <- lapply(gpt$terms, function(t) {
    kernel_set_dims(if (is.null(t$kernel)) lik_default_kernel(likelihood) else t$kernel, t$vars)
  })
  ks <- c(ks, lapply(gpt$linear, function(v) kernel_linear(dims = v)))
  Reduce(`+`, ks)
}
