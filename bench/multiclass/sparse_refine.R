# augp_control(refine = TRUE) on the default sparse fit of mlbench::Satellite (standard
# split: first 4435 rows train, 2000 test; m = 200 inducing points by default), against
# the same fit without refinement. One thread; prints test error, mean test log loss
# (probabilities clipped at 1e-9), elapsed time, the direct-ELBO gain and rounds, and
# the 1-minute load average before each fit.
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/sparse_refine.R [refine settings, default: FALSE TRUE]
# e.g. `Rscript bench/multiclass/sparse_refine.R FALSE 40 150`.
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))  # clip(), satellite_split()
sat <- satellite_split()
train <- sat$train
test <- sat$test
y <- test$classes
load1 <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])
settings <- commandArgs(trailingOnly = TRUE)
if (!length(settings)) settings <- c("FALSE", "TRUE")
for (r in settings) {
  r <- if (r %in% c("FALSE", "TRUE")) as.logical(r) else as.integer(r)
  ld <- load1()
  t <- system.time(fit <- augp(classes ~ ., data = train, seed = 1,
                               control = augp_control(refine = r, threads = 1)))
  P <- clip(as.matrix(predict(fit, test, type = "response"))[, levels(y)])
  err <- mean(levels(y)[max.col(P, ties.method = "first")] != y)
  ll <- -mean(log(P[cbind(seq_along(y), as.integer(y))]))
  rf <- fit$engine$refine
  cat(sprintf("refine = %-5s error %.4f  log loss %.4f  %6.1f s  load %.2f  %s  %s\n", r, err, ll,
              t[["elapsed"]], ld, fit$inference$engine,
              if (is.null(rf)) "" else sprintf("rounds %d, direct ELBO %.1f -> %.1f", rf$rounds,
                                               rf$direct[1], rf$direct[length(rf$direct)])))
}
