# A 60-row regression with 5 inputs of which 2 matter, full Bayes with ARD (HMC block):
# prints the per-chain posterior medians of the kernel's log parameters and the
# acceptance rates for two seeds (see results.md, section A4, "Known problem").
# Usage: R_LIBS=<lib> Rscript bench/regression/probe_ard_toy.R
suppressPackageStartupMessages(library(augmentedGP))
set.seed(1)
n <- 60
X <- matrix(rnorm(n * 5), n)
d <- data.frame(X)
d$y <- sin(X[, 1]) + 0.5 * X[, 2] + rnorm(n, 0, 0.3)
for (s in 1:2) {
  f <- suppressWarnings(augp(y ~ ., d, method = "gibbs", seed = s,
                             control = augp_control(sample_hyper = TRUE, ard = TRUE, chains = 4,
                                                    iter = 2000, threads = 2)))
  th <- f$engine$theta
  cat("seed", s, "\n")
  print(round(apply(th, c(2, 3), stats::median), 2))
  print(round(f$engine$accept, 2))
}
