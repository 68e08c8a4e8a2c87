#' Fit an augmented GP model from a predictor matrix
#'
#' The matrix-level workhorse behind [augp()]: checks the inputs,
#' standardises the predictors, runs the inference engine and builds the
#' `augp` object. Use it when the predictors are already numeric.
#'
#' @param x A numeric matrix (or data frame of numeric columns) of
#'   predictors, one row per observation.
#' @param y The response: a two-level factor, logical or 0/1 vector
#'   (Bernoulli), or a two-column matrix `cbind(successes, failures)`
#'   (binomial).
#' @param offset `NULL` or a numeric vector with one value per row of `x`,
#'   added to the latent function (see [augp()]); [predict.augp()] then needs
#'   the `offset` of the rows of `newdata`.
#' @inheritParams augp
#' @return An object of class `augp`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(60), 30)
#' y <- factor(x[, 1] + rnorm(30, sd = 0.5) > 0, labels = c("no", "yes"))
#' fit <- augp_fit(x, y)
#' fit
#' @export
augp_fit <- function(x, y, likelihood = NULL, kernel = NULL,
                     method = c("vi", "gibbs"), inducing = "auto", weights = NULL,
                     offset = NULL, prior = NULL, control = augp_control(), seed = NULL) {
  t0 <- proc.time()[["elapsed"]]
  method <- match.arg(method)
  inducing <- check_inducing_arg(inducing)
  if (!is.character(inducing) && method != "vi") {
    stop("`inducing`: sparse GPs support method = \"vi\" only.", call. = FALSE)
  }
  control <- as_augp_control(control)
  prior <- check_prior(prior)
  if (control$sample_hyper && method != "gibbs") {
    stop(paste0("`control`: sample_hyper = TRUE samples the kernel hyperparameters in a ",
                "Gibbs fit; use method = \"gibbs\" (variational fits learn them by the ELBO)."),
         call. = FALSE)
  }
  if (isTRUE(control$integrate_hyper) && method != "vi") {
    stop(paste0("`control`: integrate_hyper = TRUE averages a variational fit over its ",
                "hyperparameters; a Gibbs fit samples them with sample_hyper = TRUE."),
         call. = FALSE)
  }
  if (!is.null(kernel) && !inherits(kernel, "augp_kernel")) {
    stop("`kernel` must be NULL or a kernel object such as kernel_se().", call. = FALSE)
  }
  seed <- check_seed(seed)
  x <- as_design_matrix(x)
  x_names <- design_names(x)
  n_y <- if (is.matrix(y) || is.data.frame(y)) nrow(y) else length(y)
  if (n_y != nrow(x)) {
    stop(sprintf("`y` has %d observations but `x` has %d rows.", n_y, nrow(x)),
         call. = FALSE)
  }
  check_design(x, "x", x_names)
  offset <- check_offset(offset, nrow(x))
  likelihood <- check_likelihood(likelihood, y)
  # kernel = NULL: the likelihood's default kernel (print() and summary() name it)
  kernel_default <- is.null(kernel)
  if (kernel_default) kernel <- lik_default_kernel(likelihood)
  kernel <- kernel_resolve_dims(kernel, x_names, ncol(x))
  if (is.null(control$hyper_objective)) control$hyper_objective <- lik_hyper_objective(likelihood)
  if (!is.null(offset) && !lik_accepts_offset(likelihood)) {
    stop(sprintf(paste0("`offset`: the %s likelihood takes no offset (its latent functions ",
                        "are not one linear predictor); leave `offset` out or use a ",
                        "covariate instead."), likelihood$name), call. = FALSE)
  }
  resp <- encode_response(likelihood, y, weights)
  # (NULL without weights: every row weighs 1; weights() makes the 1s when asked)
  prior_weights <- if (!is.null(weights)) as.numeric(weights)
  all_kept <- all(resp$keep)
  # (seq_len() is a compact sequence: no vector of length n when every row is kept)
  kept <- if (all_kept) seq_len(length(resp$keep)) else which(resp$keep)
  if (!all_kept) {
    x <- x[resp$keep, , drop = FALSE]
    resp <- subset_response(likelihood, resp, which(resp$keep))
    if (nrow(x) < 2L) {
      stop("Fewer than 2 observations left after dropping rows with zero weight or trials.",
           call. = FALSE)
    }
  }
  if (!all_kept) {
    if (!is.null(prior_weights)) prior_weights <- prior_weights[kept]
    if (!is.null(offset)) offset <- offset[kept]
  } else {
    resp$keep <- NULL  # (every row kept: the likelihoods read NULL as all TRUE)
  }

  std <- standardise_design(x, control$standardise, x_names)
  col_scales <- lik_column_scales(likelihood, resp)
  # a kernel (data units) on the standardised inputs (one per latent column with column
  # scales)
  std_kernel <- function(k) {
    if (is.null(col_scales)) {
      fit_kernel_std(k, std, x_names, lik_latent_scale(likelihood, resp))
    } else {
      new_kernel_list(lapply(col_scales, function(s) fit_kernel_std(k, std, x_names, s)))
    }
  }
  kernel_std <- std_kernel(kernel)
  if (isTRUE(control$standardise) && !kernel_has_level(kernel) && !lik_prior_mean_is_level(likelihood)) {
    message(paste0("`kernel`: kernel_linear() on the standardised (centred) inputs has no constant ",
                   "component, so the latent function's level at the centre of the inputs stays at ",
                   "the likelihood's prior mean (the pooled rate), not the intercept a GLM would ",
                   "fit; add kernel_constant() to learn it (see ?kernels)."))
  }
  # the starting values of a likelihood with a log-linear mean read the offset (exposure)
  resp_start <- resp
  resp_start$offset <- offset
  mean0 <- lik_prior_mean(likelihood, resp_start)
  spec <- engine_lik_spec(likelihood, resp_start)
  eng_mean0 <- offset_prior_mean(mean0, offset, nrow(x), spec$q)
  choice <- choose_inference(inducing, nrow(x), spec$q, method, likelihood, kernel, control,
                             per_latent_kernels = !is.null(col_scales))
  inducing <- choice$inducing
  refine <- if (method == "vi") refine_plan(spec, nrow(x), inducing, control)
  # exact GPs take the standardised design as a matrix; sparse ones read it in place
  if (is.null(inducing)) std$x <- as.matrix(std$x)
  if (!is.null(col_scales) && !is.null(inducing)) {
    stop(sprintf(paste0("`inducing`: sparse GPs share one kernel among the latent functions, but ",
                        "the %s likelihood has one kernel per latent function; fit it without ",
                        "`inducing` (exact GP)."), likelihood$name), call. = FALSE)
  }
  inducing_info <- NULL
  if (!is.null(inducing)) {
    inducing_info <- list(placement = if (is.matrix(inducing) || is.data.frame(inducing)) "user"
                          else control$inducing_method, learned = control$learn_inducing)
    inducing <- sparse_front_inducing(inducing, std, x_names)
  }
  learn_params <- lik_learns_params(likelihood)
  if (!is.null(prior) || control$sample_hyper) {
    prior <- structure(if (is.null(prior)) augp_prior() else prior,
                       latent_scale = if (is.null(col_scales)) lik_latent_scale(likelihood, resp) else col_scales,
                       lik_prior = if (control$sample_hyper) lik_prior_table(likelihood, resp, prior))
  }
  # Large data: release the front end's temporaries (copies of the response, checks)
  # before the engine allocates its own, so that they do not add to the peak memory.
  if (as.numeric(nrow(x)) * ncol(x) >= LARGE_DESIGN) invisible(gc(verbose = FALSE))
  exact_marginal <- is.null(inducing) && lik_exact_marginal(likelihood) &&
    (learn_params || (control$learn_hyper && control$hyper_maxit > 0))
  # integrate_hyper: the Gaussian exact fit (exact_marginal), or any variational fit on
  # the exact GP whose kernel is learned
  learn_kernel <- isTRUE(control$learn_hyper) && control$hyper_maxit > 0
  can_integrate <- method == "vi" && is.null(inducing) && (exact_marginal || learn_kernel)
  if (identical(control$integrate_hyper, "auto")) {
    control$integrate_hyper <- can_integrate &&
      nrow(x) * spec$q <= lik_integrate_auto_n(likelihood)
  } else if (control$integrate_hyper && !can_integrate) {
    stop(paste0("`control`: integrate_hyper = TRUE needs a fit on the exact GP (inducing = ",
                "\"exact\") with hyperparameters to learn; method = \"gibbs\" with ",
                "sample_hyper = TRUE averages over the hyperparameters of other fits."),
         call. = FALSE)
  }
  # The exact GP's jitter is relative to the squared latent scale of the likelihood (the
  # smallest, with one per latent column): a regression's f is in the units of the
  # response, where an absolute 1e-6 would be a per-point prior variance as large as the
  # noise of a response on the scale of 1e-3 (sparse fits scale theirs by the prior
  # variance at the inducing points).
  ctl_eng <- control
  if (is.null(inducing)) {
    ctl_eng$jitter <- control$jitter *
      min(if (is.null(col_scales)) lik_latent_scale(likelihood, resp) else col_scales)^2
  }
  # the engine fit with kernel `k_std` (on the standardised inputs; `k`: in data units)
  fit_engine <- function(k, k_std, method) {
    if (learn_params && !is.null(inducing)) {
      # sparse: the parameters are learned inside the sparse engine (R/sparse.R)
      e <- run_engine(std$x, spec, k_std, method, control, seed, eng_mean0, inducing,
                      check = FALSE, learn_lik = list(passes = lik_hyper_passes(likelihood)))
      e$param_label <- lik_params_label(likelihood)
      engine_check_convergence(e)
    } else if (exact_marginal) {
      engine_fit_gaussian_exact(std$x, spec, likelihood, k_std, method, ctl_eng, seed, eng_mean0,
                                prior, ard = gaussian_ard_leaves(k))
    } else if (learn_params) {
      engine_fit_lik_params(std$x, spec, likelihood, k_std, method, ctl_eng, seed, eng_mean0,
                            prior)
    } else {
      run_engine(std$x, spec, k_std, method, ctl_eng, seed, eng_mean0, inducing, prior = prior)
    }
  }
  # kernel_search: the kernel chosen among candidates fitted variationally (R/kernel_search.R);
  # a Gibbs fit then samples at the chosen kernel, which its own variational fit learns
  # again as the candidate's did
  search <- kernel_search_use(control$kernel_search, likelihood, kernel_default,
                              sparse = !is.null(inducing), learn_kernel = learn_kernel,
                              exact_marginal = exact_marginal,
                              sample_hyper = control$sample_hyper, nq = nrow(x) * spec$q)
  ks <- NULL
  if (search) {
    cands <- kernel_search_candidates(kernel, ncol(x), x_names, ard = ncol(std$x) > 1L)
    ks <- kernel_search_fit(cands, function(k) {
      k_std <- std_kernel(k)
      list(engine = fit_engine(k, k_std, "vi"), kernel_std = k_std)
    }, verbose = control$verbose)
    kernel_default <- which(ks$table$chosen) == 1L
    kernel <- ks$kernel
    kernel_std <- ks$kernel_std
  }
  eng <- if (!is.null(ks) && method == "vi") ks$engine else fit_engine(kernel, kernel_std, method)
  if (!is.null(refine)) eng <- engine_refine_planned(eng, refine, ctl_eng)
  # (the Gaussian exact fit builds its mixture itself, from the exact marginal likelihood)
  if (isTRUE(control$integrate_hyper) && is.null(eng$mixture)) {
    eng <- engine_integrate_hyper(eng, ctl_eng, seed)
  }
  # (a sparse fit's jitter is relative to the prior variance: its engine says whether it rose)
  if (isTRUE(eng$jitter_increased) ||
      (!inherits(eng, "augp_sparse_engine") && isTRUE(eng$jitter > ctl_eng$jitter * (1 + 1e-8)))) {
    warning(sprintf(paste0("The kernel matrix was nearly singular (duplicate or very close ",
                           "inputs?): jitter raised to %.3g."), eng$jitter), call. = FALSE)
  }
  release_large(nrow(x), ncol(x))
  fit <- new_augp_fit(
    call = match.call(), method = method,
    likelihood = lik_fitted(likelihood, eng$lik, resp$levels),
    kernel = kernel_in_sd_units(if (!is.null(eng$kernel)) eng$kernel else kernel_std),
    kernel_init = kernel,
    engine = eng, y = response_data(likelihood, resp), trials = resp$trials,
    levels = resp$levels, q = spec$q, x = std$x, x_raw = x, x_names = x_names, centre = std$centre,
    scale = std$scale, dropped = std$dropped, mean0 = mean0, control = control,
    seed = seed, weighted = !is.null(weights), kept = kept,
    time = proc.time()[["elapsed"]] - t0
  )
  # the objective that learned the likelihood's parameters, for print(): the exact log
  # marginal likelihood of a conjugate Gaussian fit, else the ELBO
  if (isTRUE(eng$exact_gaussian)) fit$likelihood$learned_by <- "the exact log marginal likelihood"
  fit$kernel_default <- kernel_default
  # the candidates of the kernel search, when it ran (kernel_search_table())
  fit$kernel_search <- ks$table
  # the likelihood parameters a full-Bayes Gibbs fit sampled (their values: medians)
  if (!is.null(eng$lik_draws)) fit$likelihood$sampled <- unique(eng$lik_prior$name)
  fit$prior_weights <- prior_weights
  fit$offset <- offset
  fit$offset_centre <- if (!is.null(offset)) mean(offset)
  fit$inducing_info <- inducing_info
  fit$inference <- choice$info
  fit
}

# The user's kernel (data units) on the standardised inputs of the fit, checked to lie
# in the range the fit can work with. One value for several inputs of different scales
# has no exact conversion: it is read in units of each input's standard deviation, with
# a message.
fit_kernel_std <- function(kernel, std, xnames, latent_scale = 1) {
  conv <- kernel_to_std(kernel, std$scale, keep = !(xnames %in% std$dropped),
                        latent_scale = latent_scale)
  if (length(conv$inexact)) {
    message(sprintf(paste0("`kernel`: one %s for %d inputs with different standard deviations ",
                           "is read in units of each input's standard deviation (the kernel is ",
                           "isotropic on the standardised inputs); give one value per input ",
                           "(ARD) to set it in data units."),
                    paste(conv$inexact, collapse = " and one "), length(std$scale)))
  }
  kernel_check_range(conv$kernel, latent_scale = latent_scale)
}

# NULL, or one finite number per observation.
check_offset <- function(offset, n) {
  if (is.null(offset)) return(NULL)
  if (!is.numeric(offset) || !is.null(dim(offset)) && NCOL(offset) != 1L) {
    stop("`offset` must be NULL or a numeric vector.", call. = FALSE)
  }
  offset <- as.numeric(offset)
  if (length(offset) != n) {
    stop(sprintf("`offset` has %d value(s) but there are %d observations.", length(offset), n),
         call. = FALSE)
  }
  if (any(!is.finite(offset))) {
    stop("`offset` must be finite (no NA, NaN or Inf after `na.action`).", call. = FALSE)
  }
  offset
}

# The prior mean the engine takes: the likelihood's constant prior mean `mean0`, plus
# the offset centred at its mean over the fit's rows in every latent column (n x q; a
# vector when q = 1). The constant prior mean plays the role of glm's intercept, which
# absorbs the offset's mean: a constant offset changes nothing, as in glm().
offset_prior_mean <- function(mean0, offset, n, q) {
  if (is.null(offset)) return(mean0)
  M <- engine_mean0_matrix(mean0, n, q) + (offset - mean(offset))
  if (q == 1L) as.numeric(M) else M
}

#' The augp fit object
#'
#' `new_augp_fit()` builds a fit (class `augp`) from its parts and computes the
#' fitted values; `validate_augp_fit()` checks its structure. The fields:
#'
#' * `call`: the call of augp_fit() (augp() replaces it by its own).
#' * `method`: `"vi"` or `"gibbs"`.
#' * `likelihood`: the likelihood object (`augp_likelihood`) with its parameters as
#'   fitted (the class weights `theta` of logistic_softmax(), fixed or learned).
#' * `kernel`: the kernel as fitted, on the standardised inputs, its lengthscales and
#'   periods marked as in standard deviations of the inputs (kernel_in_sd_units()) so
#'   that `kernel = fit$kernel` in another fit reuses them as they are (a list of
#'   kernels, one per latent column, with `shared_hyper = FALSE`); `kernel_init`: the kernel as
#'   given, in data units (kernel_to_std() converts, kernel_to_data() reports).
#' * `engine`: the engine fit (augp_engine() or augp_sparse_engine()): latent
#'   posterior (`mean`, `var`; `draws` [iterations, chains, n * q] for Gibbs), the
#'   engine likelihood list `lik` (engine_lik_spec(), with learned parameters), ELBO
#'   trace, kernel, ...
#' * `y`: the observed response as encoded (successes for Bernoulli/binomial, an
#'   n x K count matrix otherwise, the numeric y of a regression; see
#'   response_data()); `trials`: trials per row (frequency weights of a regression);
#'   `levels`: the K categories (failure and success for Bernoulli/binomial;
#'   character(0) for a continuous response).
#' * `q`: the number of latent columns.
#' * `n`: the number of observations used (rows of `x`).
#' * `x`: the standardised design (n x p); `x_raw`: the design before
#'   standardising; `x_names`: the predictor names given; `centre`, `scale`: the
#'   standardisation; `dropped`: predictors dropped for zero variance.
#' * `mean0`: the constant prior mean of the latent functions (lik_prior_mean()); the
#'   engine's prior mean adds the centred offset (offset_prior_mean()).
#' * `control`: the augp_control() settings; `seed`: the seed given (or NULL).
#' * `weighted`: whether weights were given; `kept`: the rows of the data used.
#' * `fitted`: the response mean at the training inputs (n x R matrix, one column
#'   per response column); fitted() presents it.
#' * `time`: the fitting time in seconds.
#' * the likelihood's parameters by name (lik_param_values(); e.g. `theta`, the
#'   class weights of logistic_softmax()), copied from `likelihood`.
#'
#' augp_fit() adds `prior_weights` (the frequency weights of the rows used; NULL without
#' weights, when every row weighs 1), `offset` (per row used, or NULL) and `offset_centre` (its mean, NULL
#' without offset), and `inducing_info` (sparse fits: list(placement = "kmeans",
#' "random" or "user", learned = whether the locations were learned); NULL otherwise),
#' `inference` (how the GP was chosen, choose_inference() in R/inference.R: choice "auto"
#' or "given", engine "exact" or "sparse", m, n, q and, for "auto", the reason),
#' `kernel_default` (whether the kernel is the likelihood's default) and `kernel_search`
#' (when augp_control(kernel_search =) chose the kernel: a data frame of the candidates,
#' kernel_search_table() in R/kernel_search.R; NULL otherwise).
#' augp() adds the formula parts `formula`, `terms`, `xlevels`, `contrasts`,
#' `na.action` and `model`.
#' @noRd
new_augp_fit <- function(call, method, likelihood, kernel, kernel_init, engine, y, trials,
                         levels, q, x, x_raw, x_names = colnames(x_raw), centre, scale, dropped,
                         mean0, control, seed, weighted, kept, time) {
  fit <- structure(list(
    call = call, method = method, likelihood = likelihood, kernel = kernel,
    kernel_init = kernel_init, engine = engine, y = y, trials = as.numeric(trials),
    levels = levels, q = as.integer(q), n = nrow(x), x = x, x_raw = x_raw,
    x_names = x_names, centre = centre, scale = scale, dropped = dropped,
    mean0 = mean0, control = control, seed = seed, weighted = weighted, kept = kept,
    time = time
  ), class = "augp")
  for (nm in names(pv <- lik_param_values(likelihood))) fit[[nm]] <- pv[[nm]]
  lp <- latent_posterior(fit)
  fitted <- response_summary(fit, lp, sd = FALSE)$mean
  rm(lp)
  # named before it is stored, so that naming it does not copy it
  dimnames(fitted) <- list(NULL, response_names(likelihood, levels))
  fit$fitted <- fitted
  validate_augp_fit(fit)
}

validate_augp_fit <- function(fit) {
  stopifnot(
    inherits(fit, "augp"),
    fit$method %in% c("vi", "gibbs"),
    inherits(fit$likelihood, "augp_likelihood"),
    is.list(fit$engine), is.list(fit$engine$lik),
    is.integer(fit$q), length(fit$q) == 1L, fit$q >= 1L,
    identical(as.integer(fit$engine$lik$q), fit$q),
    is.matrix(fit$x) || inherits(fit$x, "augp_design"), nrow(fit$x) == fit$n,
    NROW(fit$y) == fit$n, length(fit$trials) == fit$n,
    is.character(fit$levels),
    length(latent_names(fit$likelihood, fit$levels, fit$q)) == fit$q,
    is.matrix(fit$fitted), nrow(fit$fitted) == fit$n,
    ncol(fit$fitted) == length(response_names(fit$likelihood, fit$levels)),
    length(fit$kept) == fit$n
  )
  fit
}

as_design_matrix <- function(x) {
  if (is.data.frame(x)) {
    ok <- vapply(x, is.numeric, logical(1))
    if (!all(ok)) {
      stop(sprintf(paste0("`x` column(s) %s are not numeric: use augp() with a formula ",
                          "for factor predictors."),
                   paste(sQuote(names(x)[!ok], FALSE), collapse = ", ")), call. = FALSE)
    }
    x <- as.matrix(x)
  }
  if (is.vector(x) && is.numeric(x)) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x)) {
    stop("`x` must be a numeric matrix or a data frame of numeric columns.", call. = FALSE)
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# Designs with at least this many values (n x p) count as large for memory: the fit
# collects the garbage between its stages (R would only when its heap trigger is hit,
# which lets garbage of the size of the design accumulate) and, after the engine, hands
# the C++ heap's freed memory back to the system (.release_memory_cpp()).
LARGE_DESIGN <- 5e7

# Between the stages of a fit on a large n x p design: R's garbage collected and the C++
# heap's free memory returned to the system.
release_large <- function(n, p) {
  if (as.numeric(n) * p < LARGE_DESIGN) return(invisible())
  invisible(gc(verbose = FALSE))
  .release_memory_cpp()
}

# The predictor names of a design: its column names, or x1, x2, ... without them (kept
# apart from the matrix: naming the caller's matrix would copy it).
design_names <- function(x) {
  if (is.null(colnames(x))) paste0("x", seq_len(ncol(x))) else colnames(x)
}

# Centre and scale; zero-variance columns are dropped with a warning. `names`: the
# predictor names (the columns of x may have none). The statistics come from C++ in one
# pass per column (.design_col_stats_cpp()); the standardised design is returned as an
# augp_design (std_design()), which copies nothing: as.matrix() makes the standardised
# copy where a matrix is needed (exact GPs), the sparse engine reads it in place.
standardise_design <- function(x, standardise = TRUE, names = design_names(x)) {
  if (!is.double(x)) storage.mode(x) <- "double"
  st <- .design_col_stats_cpp(x)
  sds <- stats::setNames(st$sd, names)
  flat <- !is.finite(sds) | sds < 1e-12 * pmax(1, abs(st$mean))
  dropped <- names[flat]
  if (length(dropped)) {
    if (all(flat)) {
      stop("`x`/`data`: every predictor is constant; nothing to learn from.", call. = FALSE)
    }
    warning(sprintf("Predictor(s) %s have zero variance and were dropped.",
                    paste(sQuote(dropped, FALSE), collapse = ", ")), call. = FALSE)
  }
  keep <- which(!flat)
  if (standardise) {
    centre <- stats::setNames(st$mean[keep], names[keep])
    scale <- sds[keep]
  } else {
    centre <- stats::setNames(rep(0, length(keep)), names[keep])
    scale <- stats::setNames(rep(1, length(keep)), names[keep])
  }
  list(x = std_design(x, keep, unname(centre), unname(scale), names[keep]),
       centre = centre, scale = scale, dropped = dropped)
}

# A standardised design kept as the raw matrix x and its standardisation: input j is
# (x[, cols[j]] - centre[j]) / scale[j]. nrow(), ncol() and colnames() describe the
# standardised design; `[` and as.matrix() return standardised copies (of the rows
# asked for); the sparse engine's C++ reads it in place, standardising each block of
# rows as it reads them, so that a large design is not copied.
std_design <- function(x, cols, centre, scale, names) {
  structure(list(x = x, cols = as.integer(cols), centre = as.numeric(centre),
                 scale = as.numeric(scale), names = names), class = "augp_design")
}

#' @export
dim.augp_design <- function(x) c(nrow(x$x), length(x$cols))

#' @export
dimnames.augp_design <- function(x) list(NULL, x$names)

#' @export
as.matrix.augp_design <- function(x, ...) {
  out <- .design_standardise_cpp(x$x, x$cols, x$centre, x$scale)
  colnames(out) <- x$names
  out
}

#' @export
`[.augp_design` <- function(x, i, j, drop = FALSE) {
  rows <- if (missing(i)) x$x else x$x[i, , drop = FALSE]
  out <- .design_standardise_cpp(rows, x$cols, x$centre, x$scale)
  colnames(out) <- x$names
  if (!missing(j)) out <- out[, j, drop = FALSE]
  if (drop) drop(out) else out
}

# A design as a plain matrix (augp_design: its standardised copy).
design_matrix <- function(X) if (inherits(X, "augp_design")) as.matrix(X) else X

# Call the engine with the augp_control object. With control$verbose, the fit reports
# its progress (R/progress.R: a header, then a cli progress bar in interactive
# sessions or a few plain lines otherwise, all as messages). check = TRUE: the
# convergence warnings of the fit (engine_check_convergence(), R/diagnostics.R) once
# the engine is done; callers that go on fitting (engine_fit_lik_params()) check
# their final fit instead.
run_engine <- function(X, lik, kernel, method, control, seed, mean0, inducing = NULL,
                       check = TRUE, prior = NULL, learn_lik = NULL) {
  args <- list(X = X, kernel = kernel, method = method, control = control, seed = seed,
               mean0 = mean0, lik = lik, prior = prior)
  engine <- augp_engine
  if (!is.null(inducing)) {
    args$prior <- NULL
    engine <- augp_sparse_engine
    args$method <- NULL
    args$inducing <- inducing
    args$learn_lik <- learn_lik
  }
  own <- progress_begin(control$verbose, progress_header(method, X, inducing))
  if (own) on.exit(progress_close(), add = TRUE)
  eng <- do.call(engine, args)
  if (own) progress_finish()
  if (check) eng <- engine_check_convergence(eng)
  eng
}
