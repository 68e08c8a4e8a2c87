# Additive GP regression on datasets::airquality (Ozone ~ Solar.R + Wind + Temp, the 111
# complete days): one SE kernel per input (`kernel_se(dims = v)` summed), the formula
# Ozone ~ gp(Solar.R) + gp(Wind) + gp(Temp) (one Matern 5/2 kernel per input, the
# default kernel of gaussian_noise()), the default kernel on all inputs, and
# mgcv::gam(Ozone ~ s(Solar.R) + s(Wind) + s(Temp)), in one run.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/regression/additive_airquality.R [splits]
# Prints the per-split and mean held-out log predictive density (nats per day; 80/20
# splits, seeds 1000 + split) and the full-data PSIS-LOO comparison of the two GP fits;
# bench/regression/results.md (section A9) records a run.
args <- commandArgs(trailingOnly = TRUE)
n_splits <- if (length(args) >= 1) as.integer(args[1]) else 5L
suppressPackageStartupMessages({
  library(augmentedGP)
  library(mgcv)
})
options(augmentedGP.threads = 2)
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
log_mean_exp <- function(x) max(x) + log(mean(exp(x - max(x))))
aq <- na.omit(datasets::airquality[c("Ozone", "Solar.R", "Wind", "Temp")])
k_add <- kernel_se(dims = "Solar.R") + kernel_se(dims = "Wind") + kernel_se(dims = "Temp")
fit <- function(d, kernel, formula = Ozone ~ Solar.R + Wind + Temp) {
  quiet(augp(formula, d, likelihood = gaussian_noise(), kernel = kernel, seed = 1))
}
f_gp <- Ozone ~ gp(Solar.R) + gp(Wind) + gp(Temp)
res <- NULL
for (sp in seq_len(n_splits)) {
  set.seed(1000 + sp)
  tr <- sort(sample(nrow(aq), round(0.8 * nrow(aq))))
  train <- aq[tr, ]
  test <- aq[-tr, ]
  lpd <- function(f) mean(apply(log_lik(f, newdata = test, ndraws = 2000, seed = 1), 2, log_mean_exp))
  g <- gam(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = train, method = "REML")
  pg <- predict(g, test, se.fit = TRUE)
  r <- c(all_inputs = lpd(fit(train, NULL)), additive = lpd(fit(train, k_add)),
         additive_gp = lpd(fit(train, NULL, f_gp)),
         gam = mean(dnorm(test$Ozone, pg$fit, sqrt(pg$se.fit^2 + g$sig2), log = TRUE)))
  cat(sprintf("split %d: %s\n", sp, paste(sprintf("%s %.4f", names(r), r), collapse = "; ")))
  res <- rbind(res, r)
}
d_all <- res[, "additive"] - res[, "all_inputs"]
d_gam <- res[, "additive"] - res[, "gam"]
d_gp <- res[, "additive_gp"] - res[, "gam"]
d_gp_all <- res[, "additive_gp"] - res[, "all_inputs"]
cat(sprintf("mean: %s\n", paste(sprintf("%s %.4f", colnames(res), colMeans(res)), collapse = "; ")))
cat(sprintf("additive - all_inputs %+.4f (se %.4f, %d/%d splits); additive - gam %+.4f (se %.4f, %d/%d)\n",
            mean(d_all), sd(d_all) / sqrt(n_splits), sum(d_all > 0), n_splits,
            mean(d_gam), sd(d_gam) / sqrt(n_splits), sum(d_gam > 0), n_splits))
cat(sprintf("additive_gp - all_inputs %+.4f (se %.4f, %d/%d); additive_gp - gam %+.4f (se %.4f, %d/%d)\n",
            mean(d_gp_all), sd(d_gp_all) / sqrt(n_splits), sum(d_gp_all > 0), n_splits,
            mean(d_gp), sd(d_gp) / sqrt(n_splits), sum(d_gp > 0), n_splits))
if (requireNamespace("loo", quietly = TRUE)) {
  print(loo::loo_compare(list(additive = quiet(loo::loo(fit(aq, k_add))),
                              additive_gp = quiet(loo::loo(fit(aq, NULL, f_gp))),
                              all_inputs = quiet(loo::loo(fit(aq, NULL))))))
}
