# The same negative-binomial GP in augmentedGP and in brms (Stan): yearly coal-mining
# disasters (boot::coal, 1851-1962, 112 years), count ~ GP(year), one run, same session.
# Compares fit time (brms: compilation and sampling separately), PSIS-LOO elpd, the learned
# or sampled dispersion and the fitted mean curve.
# Usage: Rscript bench/counts/bench_brms.R   (writes bench/counts/results_brms.md's figures to stdout)
suppressPackageStartupMessages({
  library(augmentedGP)
  library(brms)
})
options(mc.cores = 2)
years <- 1851:1962
coal <- data.frame(year = years,
                   disasters = as.vector(table(factor(floor(boot::coal$date), levels = years))))
tm <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(val = val, time = proc.time()[["elapsed"]] - t0)
}
vi <- tm(augp(disasters ~ year, coal, seed = 1, control = augp_control(threads = 2)))
gb <- tm(augp(disasters ~ year, coal, method = "gibbs", seed = 1,
              control = augp_control(threads = 2, chains = 4)))
fb <- tm(augp(disasters ~ year, coal, method = "gibbs", seed = 1,
              control = augp_control(threads = 2, chains = 4, sample_hyper = TRUE)))
comp <- tm(brm(disasters ~ gp(year), data = coal, family = negbinomial(), chains = 0,
               refresh = 0, silent = 2, seed = 1))
samp <- tm(update(comp$val, recompile = FALSE, chains = 4, cores = 2, iter = 2000, refresh = 0,
                  silent = 2, seed = 1))
br <- samp$val
lo <- function(f) loo::loo(f)$estimates["elpd_loo", ]
rows <- list(
  c("augp VI", vi$time, lo(vi$val), vi$val$likelihood$r),
  c("augp Gibbs (kernel, r fixed at VI)", gb$time, lo(gb$val), gb$val$likelihood$r),
  c("augp Gibbs full Bayes (kernel and r sampled)", fb$time, lo(fb$val), fb$val$likelihood$r),
  c("brms gp() negbinomial (sampling only)", samp$time, loo::loo(br)$estimates["elpd_loo", ],
    stats::median(as_draws_df(br)$shape)))
tab <- as.data.frame(do.call(rbind, rows), stringsAsFactors = FALSE)
names(tab) <- c("model", "time_s", "elpd_loo", "se", "r")
cat(sprintf("brms compilation: %.1f s\n", comp$time))
print(tab)
ess <- function(x) posterior::ess_bulk(x)
hb <- posterior::summarise_draws(hyper_draws(fb$val), "median", "ess_bulk")
print(hb)
bd <- posterior::summarise_draws(as_draws_df(br)[, c("sdgp_gpyear", "lscale_gpyear", "shape")],
                                 "median", "ess_bulk")
print(bd)
mu_a <- colMeans(posterior_epred(fb$val))
mu_b <- colMeans(posterior_epred(br))
cat(sprintf("fitted mean curves: max |augp full Bayes - brms| = %.3f (range of brms %.2f-%.2f)\n",
            max(abs(mu_a - mu_b)), min(mu_b), max(mu_b)))
cat(sprintf("time ratio brms sampling / augp full Bayes: %.1f; / augp VI: %.1f\n",
            samp$time / fb$time, samp$time / vi$time))
cat(sprintf("ESS/s on r (shape): augp full Bayes %.1f, brms %.1f\n",
            hb$ess_bulk[hb$variable == "r"] / fb$time, bd$ess_bulk[bd$variable == "shape"] / samp$time))
