# Full-Bayes poisson_logistic() fits with and without the rate-preserving move (the
# likelihood's parameter flow, param_flow_move in src/param_sampler.h): the full-Bayes
# column of bench_poisson.R (same data, formulas, 2:1 splits and seeds; 4 chains x 2000
# iterations, 1000 warm-up) run once per setting of the option augmentedGP.flow_moves
# (passes of the move per sweep; 0: off) and augmentedGP.flow_variance (a setting "2l": 2 passes
# moving lambda alone, the kernel variance held), in one process so that times compare.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/counts/bench_poisson_flow.R [threads] [splits] [sets] [flow settings]
#   e.g. Rscript bench/counts/bench_poisson_flow.R 1 3 InsectSprays,quine 0,2
# ([splits]: 3 for splits 1-3, or a range such as 2-3.)
# A setting may end in "+h<k>": the joint gradient move of f and lambda (src/latent_hmc.h)
# with k leapfrog steps per sweep (the option augmentedGP.hmc_steps; e.g. "2l+h8").
# The environment variable FLOW_LIB names a library to load augmentedGP from (another
# build, for a before / after comparison).
# Writes bench/counts/results_poisson_flow.csv (or the file named by the environment variable
# FLOW_CSV; one row per set, split and setting):
# held-out LPD (log of the mean over the 4000 draws of Poisson(y | lambda_s plogis(f_s)),
# nats per point), elapsed and CPU seconds, the largest split R-hat and smallest bulk ESS
# over the sampled parameters (hyper_draws(, "standardised")), and lambda's own, the
# per-chain medians of the standardised kernel variance (vmed, ";"-separated; a chain in
# another mode shows as one far from the others) and the Cholesky factorisations of n x n
# matrices per sweep (mean over chains).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 1L
# splits: a count k (splits 1..k) or a range "a-b"
split_ids <- if (length(args) >= 2 && grepl("-", args[2])) {
  r <- as.integer(strsplit(args[2], "-")[[1]])
  seq(r[1], r[2])
} else seq_len(if (length(args) >= 2) as.integer(args[2]) else 3L)
n_splits <- length(split_ids)
want <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else
  c("InsectSprays", "warpbreaks", "quine", "epil", "discoveries")
flows <- if (length(args) >= 4) strsplit(args[4], ",")[[1]] else c("0", "2")

lib <- Sys.getenv("FLOW_LIB", "")
suppressPackageStartupMessages(if (nzchar(lib)) library(augmentedGP, lib.loc = lib) else
  library(augmentedGP))
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "counts")
out_csv <- Sys.getenv("FLOW_CSV", file.path(out_dir, "results_poisson_flow.csv"))

source(file.path("bench", "counts", "count_data.R"))  # disc, ep, qu
sets <- list(
  InsectSprays = list(data = data.frame(y = InsectSprays$count, spray = InsectSprays$spray),
                      f = y ~ spray),
  warpbreaks = list(data = data.frame(y = warpbreaks$breaks, wool = warpbreaks$wool,
                                      tension = warpbreaks$tension), f = y ~ wool + tension),
  quine = list(data = qu, f = y ~ Eth + Sex + Age + Lrn),
  epil = list(data = ep, f = y ~ trt + lbase + lage + period),
  discoveries = list(data = disc, f = y ~ year))

log_mean_exp_cols <- function(L) apply(L, 2, function(l) { top <- max(l); top + log(mean(exp(l - top))) })

rows <- list()
for (nm in want) {
  d <- sets[[nm]]$data
  n <- nrow(d)
  for (sp in split_ids) {
    set.seed(1000 + sp)
    tr <- sort(sample(n, round(2 * n / 3)))
    te <- setdiff(seq_len(n), tr)
    for (fm in flows) {
      fl <- sub("[+]h.*$", "", fm)
      options(augmentedGP.flow_moves = as.integer(sub("l$", "", fl)),
              augmentedGP.flow_variance = !grepl("l$", fl),
              augmentedGP.hmc_steps = if (grepl("[+]h", fm)) as.integer(sub(".*[+]h", "", fm)) else 0L)
      t0 <- proc.time()
      fit <- suppressWarnings(suppressMessages(
        augp(sets[[nm]]$f, d[tr, , drop = FALSE], likelihood = poisson_logistic(), method = "gibbs",
             seed = sp, control = augp_control(sample_hyper = TRUE, iter = 2000, warmup = 1000,
                                               chains = 4))))
      tt <- proc.time() - t0
      ll <- log_lik(fit, newdata = d[te, , drop = FALSE], seed = sp)
      h <- hyper_draws(fit, "standardised")
      dg <- posterior::summarise_draws(h, "rhat", "ess_bulk")
      lam <- h[, , "lambda"]
      vname <- grep("variance", dimnames(h)[[3]], value = TRUE)[1]
      vmed <- apply(unclass(h[, , vname])[, , 1], 2, stats::median)
      cps <- fit$engine$chol_per_sweep
      rows[[length(rows) + 1L]] <- data.frame(
        set = nm, split = sp, flow_moves = fm, lpd = mean(log_mean_exp_cols(ll)),
        time = tt[["elapsed"]], cpu = tt[["user.self"]] + tt[["sys.self"]],
        rhat = max(as.numeric(dg$rhat), na.rm = TRUE), ess = min(as.numeric(dg$ess_bulk), na.rm = TRUE),
        rhat_lambda = posterior::rhat(lam), ess_lambda = posterior::ess_bulk(lam),
        lambda = mean(lam), vmed = paste(signif(vmed, 3), collapse = ";"),
        vratio = max(vmed) / min(vmed), chol = if (is.null(cps)) NA_real_ else mean(cps))
      print(rows[[length(rows)]], digits = 4, row.names = FALSE)
    }
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out_csv, row.names = FALSE)
agg <- do.call(rbind, lapply(split(res, list(res$set, res$flow_moves), drop = TRUE), function(r)
  data.frame(set = r$set[1], flow_moves = r$flow_moves[1], lpd = mean(r$lpd), time = mean(r$time),
             cpu = mean(r$cpu), rhat_max = max(r$rhat), ess_min = min(r$ess),
             rhat_lambda = max(r$rhat_lambda), ess_lambda = min(r$ess_lambda),
             two_modes = sum(r$vratio > 100), chol = mean(r$chol))))
print(agg[order(match(agg$set, want), match(agg$flow_moves, flows)), ], digits = 4, row.names = FALSE)
cat(sprintf("R %s, augmentedGP %s, threads %d, splits %d\n", getRversion(),
            utils::packageVersion("augmentedGP"), threads, n_splits))
