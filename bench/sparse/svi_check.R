# SVI vs full batch check (twonorm or ringnorm, m = 100, 2 threads, 20000 held out).
# Rscript bench/sparse/svi_check.R n lr epochs [data]   (epochs 0: full batch; package root,
# augmentedGP installed in the first library path)
source(file.path("bench", "sparse", "helpers.R"))
options(width = 250); suppressPackageStartupMessages(library(augmentedGP)); ns <- asNamespace("augmentedGP")
n <- as.numeric(commandArgs(TRUE)[1]); lr <- as.numeric(commandArgs(TRUE)[2]); ep <- as.numeric(commandArgs(TRUE)[3])
data <- if (length(commandArgs(TRUE)) >= 4) commandArgs(TRUE)[4] else "twonorm"
tr <- simulate(data, n, seed = 100 + n %% 997); te <- simulate(data, 20000, seed = 7)
t0 <- proc.time()[["elapsed"]]
fit <- ns$augp_sparse_engine(tr$X, tr$y, rep(1, n), kernel_se(), inducing = 100, control = list(threads = 2, svi_epochs = max(ep, 1), batch_size = if (ep > 0) 1000 else NULL, full_batch_max = 1e6, final_elbo = FALSE, lr = lr), seed = 1)
el <- proc.time()[["elapsed"]] - t0
pr <- ns$augp_engine_predict.augp_sparse_engine(fit, te$X)
print(c(n = n, warm = isTRUE(fit$sparse$warm_started), lr = lr, ep = ep, time = el, metrics(prob_of(pr$mean, pr$var), te$y), var = fit$kernel$variance, ls = fit$kernel$lengthscale))
if (!is.null(fit$sparse$kernel_start)) print(fit$sparse$kernel_start)
