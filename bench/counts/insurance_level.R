# Insurance (MASS::Insurance, negative binomial): where the GP loses against glm.nb. Fits,
# on bench_nb.R's splits (80/20, seeds 1000 + split, every District in training):
#   lin_std   kernel_linear() on the standardised (centred) inputs: the GP's level is then
#             fixed at the prior mean, the pooled log rate log(sum y / sum exposure), since
#             a linear kernel on centred inputs has no constant component;
#   lin_raw   kernel_linear() on the raw inputs (standardise = FALSE): the inputs' means
#             give the kernel a constant component, so the level is learned (shrunk);
#   lin_const lin_raw plus a constant kernel (a linear kernel on an input equal to 1; the
#             one tiny perturbation only keeps the column from being dropped as constant);
#   lin_std_kc  kernel_linear() + kernel_constant() on the standardised inputs;
#   lin_kc_pois the same with r fixed at 1e5;
#   se        the default kernel (kernel_search = FALSE);
#   lin_raw_pois, se_pois  lin_raw and se with r fixed at 1e5 (negative_binomial(r = 1e5):
#             practically Poisson, where glm.nb's theta runs off to);
# and glm.nb with the same main effects. LPD as bench_nb.R: log mean over 1000 draws of
# q(f) of p(y | f) per test row; glm.nb plug-in.
#   Rscript bench/counts/insurance_level.R [splits]     (1 thread)
suppressPackageStartupMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
args <- commandArgs(TRUE)
n_splits <- if (length(args)) as.integer(args[1]) else 5L
source(file.path("bench", "counts", "count_data.R"))  # nb_ins
ins <- nb_ins
ins$one <- 1 + 1e-6 * (seq_len(nrow(ins)) %% 2)
make_split <- function(d, seed) {
  set.seed(seed)
  for (k in 1:50) {
    tr <- sort(sample.int(nrow(d), round(0.8 * nrow(d))))
    if (all(levels(d$District) %in% d$District[tr])) return(tr)
  }
  stop("no split keeps every District in training")
}
lme <- function(x) max(x) + log(mean(exp(x - max(x))))
f_in <- Claims ~ District + Group + Age + one + offset(log(Holders))
vars <- c("District", "Group", "Age")
fits <- list(
  lin_raw_pois = list(k = kernel_linear(dims = vars), std = FALSE, r = 1e5),
  se_pois = list(k = kernel_se(dims = vars), std = TRUE, r = 1e5),
  lin_std = list(k = kernel_linear(dims = vars), std = TRUE),
  lin_std_kc = list(k = kernel_linear(dims = vars) + kernel_constant(), std = TRUE),
  lin_kc_pois = list(k = kernel_linear(dims = vars) + kernel_constant(), std = TRUE, r = 1e5),
  lin_raw = list(k = kernel_linear(dims = vars), std = FALSE),
  lin_const = list(k = kernel_linear(dims = vars) + kernel_linear(dims = "one"), std = FALSE),
  se = list(k = kernel_se(dims = vars), std = TRUE))
res <- NULL
for (sp in seq_len(n_splits)) {
  tr <- make_split(ins, 1000 + sp)
  train <- ins[tr, ]
  test <- ins[-tr, ]
  g <- suppressWarnings(MASS::glm.nb(Claims ~ District + Group + Age + offset(log(Holders)), data = train))
  row <- data.frame(split = sp, glm = mean(stats::dnbinom(test$Claims, size = g$theta,
                                                   mu = stats::predict(g, test, type = "response"), log = TRUE)))
  for (nm in names(fits)) {
    f <- suppressMessages(suppressWarnings(augp(f_in, data = train, kernel = fits[[nm]]$k, seed = 1,
      likelihood = negative_binomial(r = fits[[nm]]$r),
      control = augp_control(kernel_search = FALSE, standardise = fits[[nm]]$std, threads = 1))))
    ll <- log_lik(f, newdata = test, ndraws = 1000, seed = 1)
    row[[nm]] <- mean(apply(ll, 2, lme))
    row[[paste0("r_", nm)]] <- f$likelihood$r
  }
  print(row, digits = 4)
  res <- rbind(res, row)
}
d <- sapply(names(fits), function(nm) res[[nm]] - res$glm)
cat("\nLPD minus glm.nb: mean (se; splits >= 0)\n")
for (nm in names(fits)) cat(sprintf("  %-9s %+.3f (%.3f; %d/%d)\n", nm, mean(d[, nm]),
                                    stats::sd(d[, nm]) / sqrt(nrow(d)), sum(d[, nm] >= 0), nrow(d)))
