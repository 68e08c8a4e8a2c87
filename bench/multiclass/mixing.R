# Mixing of the multi-class Gibbs sampler (logistic-softmax likelihood) on iris,
# mlbench's Vehicle and MASS's fgl, at augp()'s default iterations with 4 chains.
# For each fit: split R-hat (posterior::rhat) and bulk ESS (posterior::ess_bulk) of
#   (a) the latent values f[i, k],
#   (b) the latent sum over classes sum_k f[i, k] and the centred latents
#       f[i, k] - mean_k f[i, k],
#   (c) the class probabilities at every training point (the likelihood's response),
# each as the largest / median R-hat and smallest / median bulk ESS over the
# quantities, plus the fit time and, for the augmented sampler, the median over draws
# of sum_i N_i / Z_i, Z_i = sum_k theta_k sigma(f_ik) (about the total of the
# negative-multinomial counts the augmented step would draw).
# Samplers: "augmented" (the Polya-Gamma / negative-multinomial Gibbs step alone,
# slice_steps = 0, ref_steps = 0), "slice" (the elliptical slice moves of
# logistic_softmax() with the prior as the ellipse, ref_steps = 0) and, for the default
# (non-bijective) likelihood, "reference" (the default: those moves plus generalised
# elliptical slice moves of the contrasts with the variational fit as the reference;
# see gibbs_move() in src/lik_logistic_softmax.cpp), for the default and the bijective
# likelihood (which takes no reference).
# Run from the package root with augmentedGP installed:
#   Rscript bench/multiclass/mixing.R [sets] [samplers] [settings] [seed]
# settings (optional): likelihood fields to set on every fit, "name=value,name=value"
# (e.g. "ref_df=0" for the Gaussian reference of the contrast moves); they are appended
# to the sampler's name in the table. seed (optional, default 1): augp()'s seed, which
# sets the variational fit's start and the chains' streams (appended to the name when
# not 1). With the environment variable AUGP_MIXING_SAVE set to a directory, each fit is
# saved there as <set>_<seed>.rds for later analysis.
# e.g. Rscript bench/multiclass/mixing.R "iris|fgl" ; writes bench/multiclass/results_mixing.csv
# (appending) and prints the table.
suppressMessages({
  library(augmentedGP)
  library(posterior)
})
args <- commandArgs(TRUE)
sets_re <- if (length(args) >= 1) args[1] else "iris|Vehicle|fgl"
samplers_re <- if (length(args) >= 2) args[2] else "."
settings <- if (length(args) >= 3 && nzchar(args[3])) {
  kv <- strsplit(strsplit(args[3], ",", fixed = TRUE)[[1]], "=", fixed = TRUE)
  stats::setNames(lapply(kv, function(p) as.numeric(p[2])), vapply(kv, `[`, "", 1))
} else list()
seed <- if (length(args) >= 4 && nzchar(args[4])) as.numeric(args[4]) else 1

data(Vehicle, package = "mlbench")
data(fgl, package = "MASS")
sets <- list(iris = list(Species ~ ., iris), Vehicle = list(Class ~ ., Vehicle),
             fgl = list(type ~ ., fgl))
sets <- sets[grepl(sets_re, names(sets))]
configs <- list(
  "default, augmented" = list(bijective = FALSE, slice = 0, ref = 0),
  "default, slice"     = list(bijective = FALSE, slice = NULL, ref = 0),
  "default, reference" = list(bijective = FALSE, slice = NULL, ref = NULL),
  "bijective, augmented" = list(bijective = TRUE, slice = 0),
  "bijective, slice"     = list(bijective = TRUE, slice = NULL))
configs <- configs[grepl(samplers_re, names(configs))]

diag_rows <- function(fit) {
  d <- fit$engine$draws
  q <- fit$q
  n <- dim(d)[3] / q
  cols <- function(j) (j - 1) * n + seq_len(n)
  S <- Reduce(`+`, lapply(seq_len(q), function(j) d[, , cols(j), drop = FALSE]))
  C <- d
  for (j in seq_len(q)) C[, , cols(j)] <- d[, , cols(j)] - S / q
  P <- augmentedGP:::mcmc_response_draws(d, fit$engine$lik, max_vars = Inf)
  one <- function(a, what) {
    r <- apply(a, 3, posterior::rhat)
    e <- apply(a, 3, posterior::ess_bulk)
    data.frame(quantity = what, rhat_max = max(r, na.rm = TRUE), rhat_median = median(r, na.rm = TRUE),
               ess_bulk_min = min(e, na.rm = TRUE), ess_bulk_median = median(e, na.rm = TRUE))
  }
  th <- fit$engine$lik$theta
  flat <- matrix(d, dim(d)[1] * dim(d)[2], dim(d)[3])
  load <- apply(flat, 1, function(v) {
    F <- matrix(v, n, q)
    Z <- drop(plogis(F) %*% th[seq_len(q)]) + if (q < length(th)) th[length(th)] / 2 else 0
    sum(rowSums(fit$engine$lik$Y) / Z)
  })
  out <- rbind(one(d, "latent"), one(S, "latent sum"), one(C, "centred latent"),
               one(P, "class probability"))
  out$counts_median <- stats::median(load)
  out
}

res <- list()
for (s in names(sets)) {
  for (cf in names(configs)) {
    lk <- logistic_softmax(bijective = configs[[cf]]$bijective)
    if (!is.null(configs[[cf]]$slice)) lk$slice_steps <- configs[[cf]]$slice
    if (!is.null(configs[[cf]]$ref)) lk$ref_steps <- configs[[cf]]$ref
    for (nm in names(settings)) lk[[nm]] <- settings[[nm]]
    lab <- if (length(settings)) paste0(cf, " [", args[3], "]") else cf
    if (seed != 1) lab <- paste0(lab, " seed ", seed)
    t0 <- proc.time()[["elapsed"]]
    c0 <- sum(proc.time()[c("user.self", "sys.self")])
    fit <- suppressWarnings(augp(sets[[s]][[1]], sets[[s]][[2]], likelihood = lk, method = "gibbs",
                                 seed = seed, control = augp_control(chains = 4, threads = 1)))
    tm <- proc.time()[["elapsed"]] - t0
    # CPU time of this process (1 thread): less sensitive than the elapsed time to other
    # jobs on a shared machine
    message(sprintf("%s, %s: elapsed %.1f s, CPU %.1f s", s, lab, tm,
                    sum(proc.time()[c("user.self", "sys.self")]) - c0))
    save_dir <- Sys.getenv("AUGP_MIXING_SAVE")
    if (nzchar(save_dir)) saveRDS(fit, file.path(save_dir, sprintf("%s_%s.rds", s, seed)))
    r <- diag_rows(fit)
    r <- cbind(set = s, n = fit$n, K = length(fit$levels), sampler = lab, iter = fit$control$iter,
               warmup = fit$control$warmup, time_s = round(tm, 1), r)
    print(r, digits = 4)
    res[[length(res) + 1]] <- r
    out <- file.path("bench", "multiclass", "results_mixing.csv")
    utils::write.table(r, out, sep = ",", row.names = FALSE, append = file.exists(out),
                       col.names = !file.exists(out))
  }
}
invisible(do.call(rbind, res))
