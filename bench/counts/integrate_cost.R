# Fit time of integrate_hyper = TRUE against FALSE by n (simulated, 2 inputs, default kernel).
# Usage, from the package root (augmentedGP installed): Rscript bench/counts/integrate_cost.R pois|nb|bern
suppressPackageStartupMessages(library(augmentedGP))
lik <- commandArgs(TRUE)[1]
for (n in c(100, 250, 500, 1000)) {
  set.seed(n)
  x1 <- runif(n, -2, 2); x2 <- runif(n, -2, 2)
  f <- sin(1.5 * x1) + 0.5 * x2
  y <- switch(lik, pois = rpois(n, 8 * plogis(1 + f)), nb = rnbinom(n, mu = exp(1.5 + f), size = 3),
              bern = factor(rbinom(n, 1, plogis(2 * f))))
  d <- data.frame(x1, x2, y)
  L <- switch(lik, pois = poisson_logistic(), nb = negative_binomial(), bern = bernoulli_logit())
  tm <- sapply(c(FALSE, TRUE), function(ih) system.time(suppressWarnings(
    augp(y ~ x1 + x2, d, likelihood = L, seed = 1, control = augp_control(threads = 1, integrate_hyper = ih))))[["elapsed"]])
  cat(sprintf("%s n = %d: type-II %.2f s, integrated %.2f s, ratio %.1f\n", lik, n, tm[1], tm[2], tm[2] / tm[1]))
}
