# Prediction cost of fits averaged over their kernel hyperparameters (integrate_hyper) against
# type-II fits, on epil (NB and Poisson-logistic). Usage, from the package root (augmentedGP
# installed): RCPP_PARALLEL_NUM_THREADS=1 Rscript bench/counts/integrate_predict_time.R
suppressPackageStartupMessages(library(augmentedGP))
source(file.path("bench", "counts", "count_data.R"))
epil <- MASS::epil; epil$trt <- factor(epil$trt)
tm <- function(expr, reps = 20) { t0 <- proc.time()[[3]]; for (i in seq_len(reps)) force(eval.parent(substitute(expr))); (proc.time()[[3]] - t0) / reps }
for (L in c("nb", "pois")) {
  d <- if (L == "nb") epil else ep
  fo <- if (L == "nb") y ~ base + age + trt + period else y ~ trt + lbase + lage + period
  lik <- if (L == "nb") negative_binomial() else poisson_logistic()
  set.seed(1001); tr <- sort(sample(nrow(d), round(0.8 * nrow(d)))); dtr <- d[tr, ]; dte <- d[-tr, ]
  f0 <- suppressWarnings(augp(fo, dtr, likelihood = lik, seed = 1, control = augp_control(threads = 1, integrate_hyper = FALSE)))
  f1 <- suppressWarnings(augp(fo, dtr, likelihood = lik, seed = 1, control = augp_control(threads = 1, integrate_hyper = TRUE)))
  a <- c(tm(predict(f0, dte, type = "response", se.fit = TRUE)), tm(predict(f1, dte, type = "response", se.fit = TRUE)))
  b <- c(tm(log_lik(f0, newdata = dte, ndraws = 1000, seed = 1), 5), tm(log_lik(f1, newdata = dte, ndraws = 1000, seed = 1), 5))
  cat(sprintf("%s epil (%d train, %d test): predict(response, se.fit) %.4f s / %.4f s (ratio %.1f); log_lik(1000 draws) %.4f s / %.4f s (ratio %.1f)\n",
              L, nrow(dtr), nrow(dte), a[1], a[2], a[2] / a[1], b[1], b[2], b[2] / b[1]))
}
