# Benchmark: additive GP kernels (kernel_*(dims = ...) summed, one smooth function per
# input) against the default kernel (one kernel on all inputs) and mgcv::gam with the
# same additive structure, on the count sets where gam's additive model leads
# (bench/counts/results_nb.md, results_poisson.md). Everything in one run.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/counts/bench_additive.R [threads] [splits]
# Writes bench/counts/results_additive.csv; results_additive.md records a run.
#
# Splits are those of bench_nb.R for every set: 80/20 splits redrawn until every factor
# level (on epil: every patient) is in training, seeds 1000 + split (bench_poisson.R's
# 2:1 splits would leave some patients out of training, which a patient effect cannot
# predict). LPD: mean held-out log predictive
# density per point (nats; higher is better); augp from log_lik() on the test rows (1000
# draws of the variational posterior, averaged over the hyperparameters where the default
# does so), the peers' plug-in density at their fitted mean (and dispersion). On epil the
# splits are of rows, so a patient's other periods are in the training data: gam_re adds a
# patient random effect (s(subject, bs = "re")) to gam, which the GP models are not given.
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
n_splits <- if (length(args) >= 2) as.integer(args[2]) else 5L
suppressPackageStartupMessages({
  library(augmentedGP)
  library(mgcv)
})
out_csv <- Sys.getenv("AUGP_BENCH_CSV", "results_additive.csv")

elapsed <- function(expr) {
  t0 <- proc.time()
  val <- force(expr)
  list(value = val, time = (proc.time() - t0)[["elapsed"]])
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
log_mean_exp <- function(x) max(x) + log(mean(exp(x - max(x))))

epil <- MASS::epil
epil$trt <- factor(epil$trt)
ins <- MASS::Insurance
ins$Group <- as.integer(ins$Group)
ins$Age <- as.integer(ins$Age)
source(file.path("bench", "counts", "count_data.R"))  # ep: epil with lbase, lage
# the patient, for gam's patient random effect (the GP models are not given it)
epil$subject <- factor(epil$subject)
ep$subject <- factor(MASS::epil$subject)

# Additive kernels, as the gam formulas have the terms: a linear term for a factor (its
# dummy columns) and, for each numeric input, either a smooth function (`additive`: SE)
# or a smooth function plus a linear trend (`additive_lin`: linear + SE, the GP analogue
# of a penalised spline s(), whose linear part is not shrunk).
smooth <- function(v) kernel_se(dims = v)
smooth_lin <- function(v) kernel_linear(dims = v) + kernel_se(dims = v)
additive <- function(factors, numeric, s) {
  Reduce(`+`, c(lapply(factors, function(v) kernel_linear(dims = v)), lapply(numeric, s)))
}
sets <- list(
  epil_nb = list(data = epil, y = "y", lik = "nb", split = "nb",
                 augp = y ~ base + age + trt + period,
                 factors = "trt", numeric = c("base", "age", "period"),
                 gam = y ~ s(base) + s(age) + trt + s(period, k = 4),
                 gam_re = y ~ s(base) + s(age) + trt + s(period, k = 4) + s(subject, bs = "re"),
                 augp_re = y ~ base + age + trt + period + subject),
  insurance_nb = list(data = ins, y = "Claims", lik = "nb", split = "nb",
                      augp = Claims ~ District + Group + Age + offset(log(Holders)),
                      factors = "District", numeric = c("Group", "Age"),
                      gam = Claims ~ District + s(Group, k = 4) + s(Age, k = 4) + offset(log(Holders))),
  epil_poisson = list(data = ep, y = "y", lik = "poisson", split = "nb",
                      augp = y ~ trt + lbase + lage + period,
                      factors = "trt", numeric = c("lbase", "lage", "period"),
                      gam = y ~ trt + s(lbase) + s(lage) + period,
                      gam_re = y ~ trt + s(lbase) + s(lage) + period + s(subject, bs = "re"),
                      augp_re = y ~ trt + lbase + lage + period + subject)
)

make_split <- function(d, seed, kind) {
  set.seed(seed)
  if (kind == "poisson") return(sort(sample(nrow(d), round(2 * nrow(d) / 3))))
  fac <- names(d)[vapply(d, is.factor, TRUE)]
  for (k in 1:50) {
    tr <- sort(sample.int(nrow(d), round(0.8 * nrow(d))))
    if (all(vapply(fac, function(v) all(levels(d[[v]]) %in% d[[v]][tr]), TRUE))) return(tr)
  }
  stop("no split keeps every factor level in training")
}

fit_augp <- function(s, train, test, kernel, seed, form = s$augp) {
  lik <- if (s$lik == "nb") negative_binomial() else poisson_logistic()
  f <- elapsed(quiet(augp(form, train, likelihood = lik, kernel = kernel, seed = seed,
                          control = augp_control(threads = threads))))
  ll <- log_lik(f$value, newdata = test, ndraws = 1000, seed = 1)
  list(lpd = mean(apply(ll, 2, log_mean_exp)), time = f$time, elbo = elbo(f$value))
}

fit_gam <- function(s, train, test, form = s$gam) {
  fam <- if (s$lik == "nb") mgcv::nb() else stats::poisson()
  f <- elapsed(quiet(mgcv::gam(form, data = train, family = fam, method = "REML")))
  mu <- stats::predict(f$value, test, type = "response")
  y <- test[[s$y]]
  lpd <- if (s$lik == "nb") {
    stats::dnbinom(y, size = f$value$family$getTheta(TRUE), mu = mu, log = TRUE)
  } else {
    stats::dpois(y, mu, log = TRUE)
  }
  list(lpd = mean(lpd), time = f$time, elbo = NA)
}

rows <- list()
for (nm in names(sets)) {
  s <- sets[[nm]]
  for (sp in seq_len(n_splits)) {
    tr <- make_split(s$data, 1000 + sp, s$split)
    train <- s$data[tr, , drop = FALSE]
    test <- s$data[-tr, , drop = FALSE]
    seed <- if (s$split == "nb") 1 else sp
    res <- list(augp_default = fit_augp(s, train, test, NULL, seed),
                augp_additive = fit_augp(s, train, test, additive(s$factors, s$numeric, smooth), seed),
                augp_additive_lin = fit_augp(s, train, test,
                                             additive(s$factors, s$numeric, smooth_lin), seed),
                gam = fit_gam(s, train, test))
    if (!is.null(s$gam_re)) {
      # the patient as a random effect: a linear kernel on its dummy columns (a random
      # intercept per patient, its variance learned) added to the additive kernel
      res$augp_additive_lin_re <- fit_augp(s, train, test,
                                           additive(s$factors, s$numeric, smooth_lin) +
                                             kernel_linear(dims = "subject"), seed, s$augp_re)
      res$gam_re <- fit_gam(s, train, test, s$gam_re)
    }
    for (m in names(res)) {
      rows[[length(rows) + 1L]] <- data.frame(set = nm, split = sp, method = m, lpd = res[[m]]$lpd,
                                              time = res[[m]]$time, elbo = res[[m]]$elbo)
    }
    cat(sprintf("%-13s split %d: %s\n", nm, sp,
                paste(sprintf("%s %.4f (%.2fs)", names(res), vapply(res, `[[`, 0, "lpd"),
                              vapply(res, `[[`, 0, "time")), collapse = "; ")))
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, file.path("bench", "counts", out_csv), row.names = FALSE)

# summary: mean LPD, mean difference to gam (se over splits), splits at least as good
cat("\nset, method: mean LPD; minus gam (se); splits >= gam; mean time (s)\n")
for (nm in names(sets)) {
  g <- res[res$set == nm & res$method == "gam", ]
  for (m in c("augp_default", "augp_additive", "augp_additive_lin", "gam",
              "augp_additive_lin_re", "gam_re")) {
    a <- res[res$set == nm & res$method == m, ]
    if (!nrow(a)) next
    dd <- a$lpd - g$lpd
    cat(sprintf("%-13s %-20s %.4f; %+.4f (%.4f); %d/%d; %.2f\n", nm, m, mean(a$lpd), mean(dd),
                stats::sd(dd) / sqrt(length(dd)), sum(dd >= 0), length(dd), mean(a$time)))
  }
}
