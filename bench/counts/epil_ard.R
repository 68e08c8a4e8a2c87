# Usage (from the package root, augmentedGP installed; after bench_nb.R, whose splits it reuses):
#   Rscript bench/counts/epil_ard.R     (OUT=<csv> writes there instead)
# negative_binomial() on MASS::epil with one lengthscale per input (ARD), variational and
# full Bayes (Gibbs, sample_hyper = TRUE), on the five splits of bench_nb.R; compared with
# the per-split best peer of results_nb.csv. Writes bench/counts/results_epil_ard.csv.
suppressPackageStartupMessages(library(augmentedGP))
lme <- function(l) max(l) + log(mean(exp(l - max(l))))
epil <- MASS::epil; epil$trt <- factor(epil$trt)
make_split <- function(d, seed) { set.seed(seed); fac <- names(d)[vapply(d, is.factor, TRUE)]
  for (k in 1:50) { tr <- sort(sample.int(nrow(d), round(0.8 * nrow(d))))
    if (all(vapply(fac, function(v) all(levels(d[[v]]) %in% d[[v]][tr]), TRUE))) return(tr) } }
res <- NULL
for (sp in 1:5) {
  tr <- make_split(epil, 1000 + sp); train <- epil[tr, ]; test <- epil[-tr, ]
  for (m in c("vi", "fb")) {
    ctl <- if (m == "vi") augp_control(threads = 1) else augp_control(threads = 1, sample_hyper = TRUE, iter = 2000, warmup = 1000, chains = 4)
    t0 <- proc.time()[[3]]; f <- suppressWarnings(augp(y ~ base + age + trt + period, train, likelihood = negative_binomial(),
              kernel = kernel_se(lengthscale = rep(1, 4)), method = if (m == "vi") "vi" else "gibbs", seed = 1, control = ctl))
    ll <- log_lik(f, newdata = test, ndraws = if (m == "vi") 1000 else NULL, seed = 1)
    dg <- if (m == "fb") posterior::summarise_draws(hyper_draws(f), "rhat", "ess_bulk") else NULL
    res <- rbind(res, data.frame(split = sp, method = paste0(m, "_ard"), lpd = mean(apply(ll, 2, lme)),
      rhat = if (is.null(dg)) NA else max(dg$rhat), ess = if (is.null(dg)) NA else min(dg$ess_bulk), time = proc.time()[[3]] - t0))
  }
  print(tail(res, 2))
}
nb <- read.csv("bench/counts/results_nb.csv"); nb <- nb[nb$data == "epil", ]
best <- pmax(nb$lpd[nb$method == "gam_nb"], nb$lpd[nb$method == "glm_nb"])
for (m in c("vi_ard", "fb_ard")) { dl <- res$lpd[res$method == m] - best
  cat(sprintf("%s lpd %.3f d_best %+.3f se %.3f (%d/5) rhat %.3f ess %.0f\n", m, mean(res$lpd[res$method == m]), mean(dl), sd(dl)/sqrt(5), sum(dl >= 0), max(res$rhat[res$method == m]), min(res$ess[res$method == m]))) }
write.csv(res, Sys.getenv("OUT", "bench/counts/results_epil_ard.csv"), row.names = FALSE)
