# Benchmark: negative-binomial GP regression (augmentedGP::negative_binomial()) against
# mgcv::gam(family = nb()) (smooth terms for the numeric inputs) and MASS::glm.nb() on
# public count data that ship with R packages, in one run so that times are comparable.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/counts/bench_nb.R [threads] [splits]
# Writes bench/counts/results_nb.csv; bench/counts/results_nb.md records a run.
#
# Metric on held-out data (random 80/20 splits, fixed seeds): mean log predictive
# density per test point (LPD, nats; higher is better), log mean over draws of
# p(y | f) for augp (log_lik() on the test rows: posterior draws for Gibbs, draws from
# q(f) for VI) and the plug-in NB density at the fitted mean and dispersion for the
# peers. Fit time in seconds (elapsed). Ratios are augp / peer. augp_fb (full Bayes):
# Gibbs that samples the kernel hyperparameters and r too (augp_control(sample_hyper =
# TRUE), 4 chains x 2000 iterations, 1000 warm-up; LPD over all 4000 draws). augp_ih: VI
# averaged over the kernel hyperparameters (augp_control(integrate_hyper = TRUE)); augp_vi
# is the type-II fit (integrate_hyper = FALSE).
# Environment: AUGP_BENCH_FB=0 skips the full-Bayes and Gibbs fits; AUGP_BENCH_CSV names
# the output file (default results_nb.csv); AUGP_BENCH_BRMS=0 skips brms.
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
n_splits <- if (length(args) >= 2) as.integer(args[2]) else 5L

stopifnot(requireNamespace("MASS", quietly = TRUE), requireNamespace("mgcv", quietly = TRUE))
suppressPackageStartupMessages(library(augmentedGP))
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "counts")
with_fb <- !identical(Sys.getenv("AUGP_BENCH_FB"), "0")
out_csv <- Sys.getenv("AUGP_BENCH_CSV", "results_nb.csv")

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, time = proc.time()[["elapsed"]] - t0)
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
log_mean_exp <- function(x) max(x) + log(mean(exp(x - max(x))))

# ---- data sets: a data frame, the response, and one formula per method ----
source(file.path("bench", "counts", "count_data.R"))  # nb_sets, nb_ins, nb_epil
ins <- nb_ins
epil <- nb_epil
sets <- nb_sets

# ---- methods: fit on train, return the per-point held-out log predictive density ----
# method "fb": full Bayes, Gibbs with the kernel hyperparameters and r sampled under their
# default priors (augp_control(sample_hyper = TRUE)); r is then the posterior mean of its
# draws, rhat / ess the largest split R-hat and smallest bulk ESS over the sampled
# parameters (hyper_draws()).
fit_augp <- function(s, train, test, method = "vi") {
  ctl <- switch(method,
    vi = augp_control(threads = threads, integrate_hyper = FALSE),
    ih = augp_control(threads = threads, integrate_hyper = TRUE),
    gibbs = augp_control(threads = threads, iter = 600, warmup = 200, chains = 2),
    fb = augp_control(threads = threads, sample_hyper = TRUE, iter = 2000, warmup = 1000, chains = 4))
  f <- elapsed(quiet(augp(s$augp, train, likelihood = negative_binomial(),
                          method = switch(method, fb = , gibbs = "gibbs", "vi"), seed = 1,
                          control = ctl)))
  ll <- log_lik(f$value, newdata = test, ndraws = if (method %in% c("vi", "ih")) 1000, seed = 1)
  out <- list(lpd = apply(ll, 2, log_mean_exp), time = f$time, r = f$value$r)
  if (method == "fb") {
    h <- hyper_draws(f$value, "standardised")
    dg <- posterior::summarise_draws(h, "rhat", "ess_bulk")
    out$r <- mean(h[, , "r"])
    out$rhat <- max(dg$rhat, na.rm = TRUE)
    out$ess <- min(dg$ess_bulk, na.rm = TRUE)
  }
  out
}

fit_gam <- function(s, train, test) {
  f <- elapsed(quiet(mgcv::gam(s$gam, data = train, family = mgcv::nb(), method = "REML")))
  mu <- stats::predict(f$value, test, type = "response")
  theta <- f$value$family$getTheta(TRUE)
  list(lpd = stats::dnbinom(test[[s$y]], size = theta, mu = mu, log = TRUE), time = f$time, r = theta)
}

fit_glm <- function(s, train, test) {
  f <- elapsed(quiet(MASS::glm.nb(s$glm, data = train)))
  mu <- stats::predict(f$value, test, type = "response")
  list(lpd = stats::dnbinom(test[[s$y]], size = f$value$theta, mu = mu, log = TRUE), time = f$time,
       r = f$value$theta)
}

# Factor levels seen in training only: a split is redrawn until every level of every
# factor appears in the training rows.
make_split <- function(d, seed) {
  set.seed(seed)
  fac <- names(d)[vapply(d, is.factor, TRUE)]
  for (k in 1:50) {
    tr <- sort(sample.int(nrow(d), round(0.8 * nrow(d))))
    if (all(vapply(fac, function(v) all(levels(d[[v]]) %in% d[[v]][tr]), TRUE))) return(tr)
  }
  stop("no split keeps every factor level in training")
}

rows <- list()
for (nm in names(sets)) {
  s <- sets[[nm]]
  d <- s$data
  for (sp in seq_len(n_splits)) {
    tr <- make_split(d, 1000 + sp)
    train <- d[tr, , drop = FALSE]
    test <- d[-tr, , drop = FALSE]
    res <- list(augp_vi = fit_augp(s, train, test), augp_ih = fit_augp(s, train, test, "ih"),
                gam_nb = fit_gam(s, train, test), glm_nb = fit_glm(s, train, test))
    if (with_fb) res$augp_fb <- fit_augp(s, train, test, "fb")
    if (with_fb && nm == "quine") res$augp_gibbs <- fit_augp(s, train, test, "gibbs")
    for (m in names(res)) {
      rows[[length(rows) + 1]] <- data.frame(data = nm, n = nrow(d), split = sp, method = m,
                                             lpd = mean(res[[m]]$lpd), time = res[[m]]$time,
                                             r = res[[m]]$r,
                                             rhat = if (is.null(res[[m]]$rhat)) NA else res[[m]]$rhat,
                                             ess = if (is.null(res[[m]]$ess)) NA else res[[m]]$ess)
    }
    cat(sprintf("%-10s split %d: %s\n", nm, sp,
                paste(sprintf("%s %.3f (%.2fs)", names(res),
                              vapply(res, function(z) mean(z$lpd), 0),
                              vapply(res, `[[`, 0, "time")), collapse = "; ")))
  }
}
tab <- do.call(rbind, rows)

# ---- optional: brms gp() negbinomial on the smallest set (one split; compiles Stan) ----
if (requireNamespace("brms", quietly = TRUE) && !identical(Sys.getenv("AUGP_BENCH_BRMS"), "0")) {
  s <- sets$insurance
  d <- s$data
  tr <- make_split(d, 1001)
  train <- d[tr, ]
  test <- d[-tr, ]
  b <- try(elapsed(quiet(brms::brm(
    Claims ~ District + gp(Group, Age) + offset(log(Holders)), data = train,
    family = brms::negbinomial(), chains = 2, cores = min(2L, threads), iter = 1000, seed = 1,
    refresh = 0, silent = 2))), silent = TRUE)
  if (!inherits(b, "try-error")) {
    ll <- brms::log_lik(b$value, newdata = test)
    tab <- rbind(tab, data.frame(data = "insurance", n = nrow(d), split = 1L, method = "brms_gp",
                                 lpd = mean(apply(ll, 2, log_mean_exp)), time = b$time,
                                 r = mean(as.matrix(b$value, variable = "shape")), rhat = NA,
                                 ess = NA))
    cat(sprintf("insurance split 1: brms_gp %.3f (%.1fs, compile + sampling)\n",
                tail(tab$lpd, 1), tail(tab$time, 1)))
  } else {
    cat("brms fit failed:", conditionMessage(attr(b, "condition")), "\n")
  }
}

utils::write.csv(tab, file.path(out_dir, out_csv), row.names = FALSE)

# ---- summary: mean LPD (sd over splits) and time per set and method; ratios ----
agg <- stats::aggregate(cbind(lpd, time, r) ~ data + method, tab, mean)
agg$lpd_sd <- stats::aggregate(lpd ~ data + method, tab, stats::sd)$lpd
print(agg[order(agg$data, agg$method), ], digits = 4, row.names = FALSE)
for (am in intersect(c("augp_vi", "augp_ih", "augp_fb"), tab$method)) {
cat(sprintf("\nPer split, %s minus peer (LPD, nats per test point), and time ratios %s / peer:\n",
            am, am))
for (nm in names(sets)) {
  a <- tab[tab$data == nm & tab$method == am, ]
  for (peer in c("gam_nb", "glm_nb")) {
    p <- tab[tab$data == nm & tab$method == peer, ]
    dl <- a$lpd - p$lpd
    cat(sprintf("%-10s vs %-6s: dLPD %+.3f (se %.3f; %d of %d splits better), time ratio %.2f\n",
                nm, peer, mean(dl), stats::sd(dl) / sqrt(length(dl)), sum(dl > 0), length(dl),
                mean(a$time) / mean(p$time)))
  }
}
}
cat("\nLPD minus the best peer's per split (mean, se, splits at least as good), mean time:\n")
for (am in intersect(c("augp_vi", "augp_ih", "augp_fb"), tab$method)) for (nm in names(sets)) {
  a <- tab[tab$data == nm & tab$method == am, ]
  best <- pmax(tab$lpd[tab$data == nm & tab$method == "gam_nb"],
               tab$lpd[tab$data == nm & tab$method == "glm_nb"])
  dl <- a$lpd - best
  cat(sprintf("%-8s %-10s LPD %.3f, dLPD %+.3f (se %.3f; %d of %d), time %.2f s\n", am, nm,
              mean(a$lpd), mean(dl), stats::sd(dl) / sqrt(length(dl)), sum(dl >= 0), length(dl),
              mean(a$time)))
}
if (with_fb) {
cat("\nFull Bayes: LPD minus the best peer's per split (mean, se, splits at least as good),",
    "largest R-hat and smallest bulk ESS over the sampled parameters (worst split):\n")
for (nm in names(sets)) {
  a <- tab[tab$data == nm & tab$method == "augp_fb", ]
  best <- pmax(tab$lpd[tab$data == nm & tab$method == "gam_nb"],
               tab$lpd[tab$data == nm & tab$method == "glm_nb"])
  dl <- a$lpd - best
  cat(sprintf("%-10s dLPD %+.3f (se %.3f; %d of %d), R-hat %.3f, ESS %.0f, time %.1f s\n", nm,
              mean(dl), stats::sd(dl) / sqrt(length(dl)), sum(dl >= 0), length(dl), max(a$rhat),
              min(a$ess), mean(a$time)))
}
}
