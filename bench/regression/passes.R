# Held-out LPD of the Gaussian GP with the kernel searched once (default before 2026-11-25)
# or again at the learned noise scale (passes3), and with an ARD kernel start; 5 random
# 2:1 splits. Run: Rscript bench/regression/passes.R <default|passes3|ard|passes3ard> from
# a library with the package (R_LIBS picks the library).
suppressMessages(library(augmentedGP))
lpd <- function(fit, te, yname) {
  p <- predict(fit, te, type = "response", se.fit = TRUE)
  s <- sqrt(p$se.fit^2 + sigma(fit)^2)
  mean(dnorm(te[[yname]], p$fit, s, log = TRUE))
}
sets <- list(Boston = list(d = MASS::Boston, f = medv ~ .),
             Ozone = list(d = { data("Ozone", package = "mlbench", envir = environment()); o <- na.omit(Ozone[, 4:13]); o[] <- lapply(o, as.numeric); o }, f = V4 ~ .),
             mcycle = list(d = MASS::mcycle, f = accel ~ times))
variant <- commandArgs(TRUE)[1]
# the number of kernel searches; the package default is now 3 for the Gaussian family
lik_hyper_passes.augp_gaussian <- function(likelihood) if (grepl("passes3", variant)) 3L else 1L
for (nm in names(sets)) {
  d <- sets[[nm]]$d; res <- NULL
  for (s in 1:5) {
    set.seed(s); i <- sample(nrow(d), round(2 * nrow(d) / 3))
    tr <- d[i, ]; te <- d[-i, ]
    p <- ncol(d) - 1
    ker <- if (grepl("ard", variant)) kernel_se(lengthscale = rep(1, p)) else NULL
    ctl <- augp_control(threads = 1, hyper_maxit = if (grepl("ard", variant)) 100 else 30)
    t <- system.time(fit <- if (is.null(ker)) augp(sets[[nm]]$f, tr, likelihood = gaussian_noise(), control = ctl) else augp(sets[[nm]]$f, tr, likelihood = gaussian_noise(), kernel = ker, control = ctl))[[3]]
    res <- rbind(res, c(lpd = lpd(fit, te, all.vars(sets[[nm]]$f)[1]), elbo = elbo(fit), t = t))
  }
  cat(variant, nm, sprintf("%.3f", colMeans(res)), "\n")
}
