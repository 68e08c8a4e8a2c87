# The poisson_logistic() fit from one or two starts of lambda (lik_restarts()): held-out LPD,
# final ELBO and fit time on the count sets of bench_poisson.R (2:1 splits, seeds
# 1000 + split, 5 splits), the default kernel, plus epil with gp() terms.
# Usage (from the package root): R_LIBS=<lib> Rscript bench/counts/restart_poisson.R
# Run once with a build without the second start and once with it; results_additive.md
# records both.
suppressPackageStartupMessages({library(augmentedGP); library(mgcv)})
quiet <- function(expr) suppressWarnings(suppressMessages(expr))
log_mean_exp <- function(x) max(x) + log(mean(exp(x - max(x))))
source("bench/counts/count_data.R")
sets <- list(
  InsectSprays = list(data = data.frame(y = InsectSprays$count, spray = InsectSprays$spray), f = y ~ spray),
  warpbreaks = list(data = data.frame(y = warpbreaks$breaks, wool = warpbreaks$wool, tension = warpbreaks$tension), f = y ~ wool + tension),
  quine = list(data = qu, f = y ~ Eth + Sex + Age + Lrn),
  epil = list(data = ep, f = y ~ trt + lbase + lage + period),
  epil_gp = list(data = ep, f = y ~ trt + gp(lbase) + gp(lage) + gp(period)),
  discoveries = list(data = disc, f = y ~ year))
for (nm in names(sets)) {
  s <- sets[[nm]]; res <- NULL
  for (sp in 1:5) {
    set.seed(1000 + sp); n <- nrow(s$data); tr <- sort(sample(n, round(2 * n / 3)))
    train <- s$data[tr, , drop = FALSE]; test <- s$data[-tr, , drop = FALSE]
    if (any(vapply(train, function(v) is.factor(v) && !all(levels(v) %in% v), TRUE))) next
    t0 <- proc.time()[[3]]
    f <- quiet(augp(s$f, train, likelihood = poisson_logistic(), seed = sp))
    tm <- proc.time()[[3]] - t0
    res <- rbind(res, c(lpd = mean(apply(log_lik(f, newdata = test, ndraws = 2000, seed = 1), 2, log_mean_exp)), elbo = elbo(f), time = tm))
  }
  cat(sprintf("%-12s lpd %.4f elbo %.2f time %.2f | %s\n", nm, mean(res[, 1]), mean(res[, 2]), mean(res[, 3]), paste(sprintf("%.4f", res[, 1]), collapse = " ")))
}
