# Benchmark: GP regression with augmentedGP against kernlab::gausspr and
# DiceKriging::km on public regression data that ship with R packages, the exact
# Gaussian fit at n = 2000 against kernlab's time, and the robust likelihoods
# (student_t(), laplace()) against the Gaussian GP and MASS::rlm on data with gross
# outliers. Everything in one run, so that times are comparable.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/regression/bench_regression.R [threads] [splits] [sections] [sets]
# sections: any of "A", "B", "C" (default "ABC"). Section A's methods: all by default, or
# those named (comma-separated) in the environment variable AUGP_BENCH_METHODS, from
# augp, augp_se, augp_t2, augp_fb, augp_fb_iso, kernlab, km. Writes bench/regression/results_*.csv
# for the sections run; bench/regression/results.md records a run. Run timing benches
# alone on the machine (e.g. under flock); the script prints the load average (uptime)
# at its start and end.
#
# Metrics on held-out data: RMSE, mean log predictive density per test point (LPD,
# nats; higher is better), fit time in seconds (elapsed). Ratios are augp / peer.
# Peers at their defaults: kernlab::gausspr (RBF kernel, width by sigest(), noise
# variance `var` fixed at its default on the scaled response; its predictive sd is
# recomputed from the scaled variance, see kernlab_fit()); DiceKriging::km (Gaussian
# ARD kernel, constant trend, nugget, all by maximum likelihood; predictive sd of a
# new response, nugget included). augp: augp() defaults (SE kernel on standardised
# inputs (Matern 5/2, the default for gaussian_noise(); augp_se: the squared exponential
# kernel, the default before); kernel and noise by the exact log marginal likelihood; with several inputs one
# lengthscale per input (ARD) when its leave-one-out density beats the isotropic
# kernel's, augp_control(ard = "auto")).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
n_splits <- if (length(args) >= 2) as.integer(args[2]) else 5L
sections <- if (length(args) >= 3) toupper(args[3]) else "ABC"
# optional: section A on some sets only (comma-separated names); its csv then gets their names
only_sets <- if (length(args) >= 4) strsplit(args[4], ",", fixed = TRUE)[[1]] else NULL
run_section <- function(x) grepl(x, sections, fixed = TRUE)
load_line <- function() paste(system("uptime", intern = TRUE), collapse = " ")
cat("start:", load_line(), "\n")

# Peers live in a library outside the user's (AUGP_BENCH_LIB, default /tmp/lib-bench).
bench_lib <- Sys.getenv("AUGP_BENCH_LIB", "/tmp/lib-bench")
dir.create(bench_lib, showWarnings = FALSE, recursive = TRUE)
.libPaths(c(bench_lib, .libPaths()))
need <- function(pkg) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    try(utils::install.packages(pkg, lib = bench_lib, quiet = TRUE), silent = TRUE)
  }
  requireNamespace(pkg, quietly = TRUE)
}
stopifnot(need("MASS"), need("kernlab"), need("mlbench"), need("DiceKriging"), need("ggplot2"))
suppressPackageStartupMessages(library(augmentedGP))
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "regression")

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, time = proc.time()[["elapsed"]] - t0)
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# ---- data: x (numeric matrix with column names), y ----
prep <- function(df, yname) {
  df <- df[stats::complete.cases(df), , drop = FALSE]
  x <- as.matrix(df[setdiff(names(df), yname)])
  storage.mode(x) <- "double"
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]
  colnames(x) <- make.names(colnames(x))
  list(x = x, y = as.numeric(df[[yname]]))
}
data("Ozone", package = "mlbench")
oz <- as.data.frame(lapply(Ozone, function(v) as.numeric(as.character(v))))
dia <- ggplot2::diamonds
dia <- data.frame(lprice = log(dia$price), carat = dia$carat, depth = dia$depth, table = dia$table,
                  x = dia$x, y = dia$y, z = dia$z, cut = as.numeric(dia$cut),
                  color = as.numeric(dia$color), clarity = as.numeric(dia$clarity))
sets <- list(
  Boston = c(prep(MASS::Boston, "medv"), n_train = 337),
  mcycle = c(prep(MASS::mcycle, "accel"), n_train = 89),
  airquality = c(prep(datasets::airquality[c("Ozone", "Solar.R", "Wind", "Temp")], "Ozone"),
                 n_train = 74),
  Ozone = c(prep(oz[c("V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13")], "V4"),
            n_train = 135),
  diamonds = c(prep(dia, "lprice"), n_train = 1000, n_test = 2000)
)

split_set <- function(d, seed) {
  set.seed(seed)
  idx <- sample(length(d$y))
  tr <- idx[seq_len(d$n_train)]
  rest <- setdiff(idx, tr)
  te <- rest[seq_len(min(length(rest), if (is.null(d$n_test)) length(rest) else d$n_test))]
  list(xtr = d$x[tr, , drop = FALSE], ytr = d$y[tr], xte = d$x[te, , drop = FALSE], yte = d$y[te])
}

# ---- the methods: each returns list(mean, sd) of the predictive law of a new y ----
gh <- local({
  # Gauss-Hermite nodes/weights for a standard normal (Golub-Welsch)
  k <- 40
  J <- matrix(0, k, k)
  b <- sqrt(seq_len(k - 1) / 2)
  J[cbind(1:(k - 1), 2:k)] <- b
  J[cbind(2:k, 1:(k - 1))] <- b
  e <- eigen(J, symmetric = TRUE)
  list(z = sqrt(2) * e$values, w = e$vectors[1, ]^2)
})

augp_predictive <- function(fit, xte, yte) {
  nd <- as.data.frame(xte)
  lk <- predict(fit, nd, type = "link", se.fit = TRUE)
  m <- lk$fit
  s <- lk$se.fit
  lik <- fit$likelihood
  if (inherits(lik, "augp_student_t") || inherits(lik, "augp_laplace")) {
    dens <- if (inherits(lik, "augp_laplace")) {
      function(y, f) exp(-abs(y - f) / lik$scale) / (2 * lik$scale)
    } else {
      function(y, f) stats::dt((y - f) / lik$sigma, lik$nu) / lik$sigma
    }
    lpd <- vapply(seq_along(yte), function(i) log(sum(gh$w * dens(yte[i], m[i] + s[i] * gh$z))), 0)
    return(list(mean = m, lpd = lpd))
  }
  mx <- fit$engine$mixture
  if (!is.null(mx)) {
    # averaged over the hyperparameters: the exact density of the mixture of the points'
    # Gaussian predictives N(m_j, v_j + sigma_j^2), from the package's internal per-point
    # marginals (log_lik() would give its Monte Carlo estimate)
    ns <- asNamespace("augmentedGP")
    X <- ns$new_design(fit, nd)
    mg <- ns$vi_marginals(fit, X, attr(X, "ok"))
    S2 <- mg$V + matrix(mx$lik_values[, 1]^2, nrow(mg$V), ncol(mg$V), byrow = TRUE)
    D <- stats::dnorm(yte, mg$M, sqrt(S2), log = TRUE)
    top <- apply(D, 1, max)
    return(list(mean = m, lpd = top + log(rowMeans(exp(D - top)))))
  }
  sd <- sqrt(s^2 + sigma(fit)^2)
  list(mean = m, lpd = stats::dnorm(yte, m, sd, log = TRUE))
}

# integrate: augp_control(integrate_hyper); "auto" (the default) averages the predictions
# over the hyperparameters of exact Gaussian fits up to n = 500, FALSE conditions on the
# learned values (type-II maximum likelihood)
fit_augp <- function(s, likelihood = gaussian_noise(), seed = 1, kernel = NULL, integrate = "auto") {
  tr <- data.frame(s$xtr, .y = s$ytr)
  r <- elapsed(quiet(augp(.y ~ ., data = tr, likelihood = likelihood, seed = seed, kernel = kernel,
                          control = augp_control(threads = threads, integrate_hyper = integrate))))
  p <- augp_predictive(r$value, s$xte, s$yte)
  a <- r$value$engine$ard
  c(p, time = r$time, ard = if (is.null(a)) NA else isTRUE(a$chosen))
}

# Full Bayes: Gibbs with the kernel hyperparameters and sigma sampled under their default
# priors (augp_control(sample_hyper = TRUE)); ARD as augp_control(ard) decides. The held-out
# LPD is the log of the mean over the draws of p(y | f_s, sigma_s) at each test point
# (log_lik() on the test rows). Diagnostics: the largest split R-hat and the smallest bulk
# ESS over the sampled hyperparameters (hyper_draws()).
fb_iter <- function(n) if (n > 500) c(chains = 2L, iter = 600L, warmup = 300L) else
  c(chains = 4L, iter = 2000L, warmup = 1000L)
log_mean_exp <- function(l) max(l) + log(mean(exp(l - max(l))))
fit_augp_fb <- function(s, ard = "auto", seed = 1) {
  tr <- data.frame(s$xtr, .y = s$ytr)
  it <- fb_iter(length(s$ytr))
  r <- elapsed(quiet(augp(.y ~ ., data = tr, likelihood = gaussian_noise(), method = "gibbs", seed = seed,
                          control = augp_control(threads = threads, sample_hyper = TRUE, ard = ard,
                                                 chains = it[["chains"]], iter = it[["iter"]],
                                                 warmup = it[["warmup"]]))))
  f <- r$value
  te <- data.frame(s$xte, .y = s$yte)
  ll <- log_lik(f, newdata = te, ndraws = min(1000L, it[["chains"]] * (it[["iter"]] - it[["warmup"]])),
                seed = seed)
  mu <- colMeans(posterior_epred(f, newdata = te, ndraws = 200, seed = seed))
  dg <- posterior::summarise_draws(hyper_draws(f, "standardised"), "rhat", "ess_bulk")
  a <- f$engine$ard
  list(mean = mu, lpd = apply(ll, 2, log_mean_exp), time = r$time,
       ard = if (is.null(a)) NA else isTRUE(a$chosen),
       rhat = max(dg$rhat, na.rm = TRUE), ess = min(dg$ess_bulk, na.rm = TRUE),
       accept = mean(f$engine$accept, na.rm = TRUE))
}

# kernlab's default noise variance (on the scaled response), given explicitly so that the
# predictive sd below uses the same value.
kernlab_var <- 1
fit_kernlab <- function(s) {
  r <- elapsed(quiet(kernlab::gausspr(s$xtr, s$ytr, var = kernlab_var, variance.model = TRUE)))
  g <- r$value
  m <- as.numeric(kernlab::predict(g, s$xte))
  # predict(type = "sdeviation") returns sd_scaled * y_scale + y_centre; undo the centre and
  # add the noise variance `var` (scaled units) of the model
  ysc <- kernlab::scaling(g)$y.scale
  sd_f <- (as.numeric(kernlab::predict(g, s$xte, type = "sdeviation")) - ysc$`scaled:center`)
  sd <- sqrt(sd_f^2 + kernlab_var * ysc$`scaled:scale`^2)
  list(mean = m, lpd = stats::dnorm(s$yte, m, sd, log = TRUE), time = r$time)
}

fit_km <- function(s) {
  r <- elapsed(quiet(DiceKriging::km(design = as.data.frame(s$xtr), response = s$ytr,
                                     covtype = "gauss", nugget.estim = TRUE,
                                     control = list(trace = FALSE))))
  p <- DiceKriging::predict(r$value, newdata = as.data.frame(s$xte), type = "UK", checkNames = FALSE)
  list(mean = p$mean, lpd = stats::dnorm(s$yte, p$mean, p$sd, log = TRUE), time = r$time)
}

score <- function(p, yte) c(rmse = sqrt(mean((p$mean - yte)^2)), lpd = mean(p$lpd), time = p$time)

# ---- A: held-out accuracy, Gaussian likelihood vs peers ----
if (run_section("A")) {
cat("== A: held-out RMSE / LPD / time ==\n")
methods_A <- c("augp", "augp_se", "augp_fb", "augp_fb_iso", "kernlab", "km")
if (nzchar(Sys.getenv("AUGP_BENCH_METHODS"))) {
  methods_A <- strsplit(Sys.getenv("AUGP_BENCH_METHODS"), ",", fixed = TRUE)[[1]]
}
rowsA <- list()
for (nm in if (is.null(only_sets)) names(sets) else only_sets) {
  ns <- if (nm == "diamonds") 1L else n_splits
  for (k in seq_len(ns)) {
    s <- split_set(sets[[nm]], 100 + k)
    for (meth in methods_A) {
      p <- tryCatch(switch(meth, augp = fit_augp(s), kernlab = fit_kernlab(s), km = fit_km(s),
                           augp_se = fit_augp(s, kernel = kernel_se()),
                           augp_fb = fit_augp_fb(s), augp_fb_iso = fit_augp_fb(s, ard = FALSE),
                           augp_t2 = fit_augp(s, integrate = FALSE)),
                    error = function(e) {
                      message(nm, " ", meth, ": ", conditionMessage(e))
                      NULL
                    })
      if (is.null(p)) next
      sc <- score(p, s$yte)
      rowsA[[length(rowsA) + 1]] <- data.frame(set = nm, n_train = length(s$ytr), n_test = length(s$yte),
                                               p = ncol(s$xtr), split = k, method = meth, t(sc),
                                               ard = if (is.null(p$ard)) NA else p$ard,
                                               rhat = if (is.null(p$rhat)) NA else p$rhat,
                                               ess = if (is.null(p$ess)) NA else p$ess,
                                               accept = if (is.null(p$accept)) NA else p$accept)
    }
    cat(sprintf("%s split %d done\n", nm, k))
  }
}
A <- do.call(rbind, rowsA)
utils::write.csv(A, file.path(out_dir, if (is.null(only_sets)) "results_heldout.csv" else
  sprintf("results_heldout_%s.csv", paste(only_sets, collapse = "_"))), row.names = FALSE)
}

# ---- B: the exact Gaussian fit at n = 2000 vs kernlab ----
if (run_section("B")) {
cat("== B: n = 2000 timing ==\n")
dB <- sets$diamonds
dB$n_train <- 2000
dB$n_test <- 2000
s <- split_set(dB, 7)
B <- list()
for (rep in 1:3) {
  a <- fit_augp(s)
  kl <- fit_kernlab(s)
  # augp with the kernel and noise fixed at the learned values: the exact posterior only
  f0 <- quiet(augp(.y ~ ., data = data.frame(s$xtr, .y = s$ytr), control = augp_control(threads = threads)))
  tr <- data.frame(s$xtr, .y = s$ytr)
  fx <- elapsed(quiet(augp(.y ~ ., data = tr, kernel = f0$kernel,
                           likelihood = gaussian_noise(sigma = sigma(f0)),
                           control = augp_control(threads = threads, learn_hyper = FALSE))))
  pfx <- augp_predictive(fx$value, s$xte, s$yte)
  B[[rep]] <- rbind(
    data.frame(rep = rep, method = "augp (hyperparameters and sigma learned)", t(score(a, s$yte))),
    data.frame(rep = rep, method = "augp (fixed hyperparameters: exact posterior only)",
               t(score(c(pfx, time = fx$time), s$yte))),
    data.frame(rep = rep, method = "kernlab gausspr (fixed hyperparameters)", t(score(kl, s$yte))))
}
B <- do.call(rbind, B)
utils::write.csv(B, file.path(out_dir, "results_n2000.csv"), row.names = FALSE)
}

# ---- C: gross outliers in the training responses, clean test data ----
if (run_section("C")) {
cat("== C: outliers ==\n")
contaminate <- function(s, frac, seed) {
  set.seed(seed)
  n <- length(s$ytr)
  k <- round(frac * n)
  bad <- sample(n, k)
  s$ytr[bad] <- s$ytr[bad] + sample(c(-1, 1), k, replace = TRUE) * stats::runif(k, 5, 10) * stats::sd(s$ytr)
  s
}
fit_rlm <- function(s, spline_df = NULL) {
  tr <- data.frame(s$xtr, .y = s$ytr)
  te <- data.frame(s$xte)
  f <- if (!is.null(spline_df)) {
    v <- colnames(s$xtr)[1]
    stats::as.formula(sprintf(".y ~ splines::ns(%s, df = %d)", v, spline_df))
  } else {
    .y ~ .
  }
  r <- elapsed(quiet(MASS::rlm(f, data = tr, maxit = 100)))
  m <- as.numeric(stats::predict(r$value, te))
  list(mean = m, lpd = stats::dnorm(s$yte, m, r$value$s, log = TRUE), time = r$time)
}
rowsC <- list()
for (nm in c("Boston", "mcycle", "diamonds")) {
  for (frac in c(0.05, 0.10)) {
    for (k in seq_len(if (nm == "diamonds") 1L else 3L)) {
      s <- contaminate(split_set(sets[[nm]], 200 + k), frac, 300 + k)
      res <- list(
        `augp gaussian` = fit_augp(s),
        `augp student_t` = fit_augp(s, student_t()),
        `augp laplace` = fit_augp(s, laplace()),
        rlm = fit_rlm(s, if (nm == "mcycle") 10L else NULL))
      for (meth in names(res)) {
        rowsC[[length(rowsC) + 1]] <- data.frame(set = nm, frac = frac, split = k, method = meth,
                                                 t(score(res[[meth]], s$yte)))
      }
    }
    cat(sprintf("%s %.2f done\n", nm, frac))
  }
}
C <- do.call(rbind, rowsC)
utils::write.csv(C, file.path(out_dir, "results_outliers.csv"), row.names = FALSE)
}

# ---- summaries ----
agg <- function(d, by) stats::aggregate(d[c("rmse", "lpd", "time")], d[by], mean)
if (run_section("A")) {
cat("\n## A: means over splits\n")
mA <- agg(A, c("set", "method"))
print(mA, digits = 4)
wideA <- do.call(rbind, lapply(split(mA, mA$set), function(d) {
  g <- function(meth, col) d[[col]][d$method == meth]
  data.frame(set = d$set[1],
             rmse_augp = g("augp", "rmse"), rmse_kernlab = g("kernlab", "rmse"), rmse_km = g("km", "rmse"),
             rmse_ratio_kernlab = g("augp", "rmse") / g("kernlab", "rmse"),
             rmse_ratio_km = g("augp", "rmse") / g("km", "rmse"),
             lpd_augp = g("augp", "lpd"), lpd_kernlab = g("kernlab", "lpd"), lpd_km = g("km", "lpd"),
             lpd_diff_best_peer = g("augp", "lpd") - max(g("kernlab", "lpd"), g("km", "lpd")),
             time_ratio_kernlab = g("augp", "time") / g("kernlab", "time"),
             time_ratio_km = g("augp", "time") / g("km", "time"))
}))
print(wideA, digits = 3)
cat("ARD chosen by augp (splits):\n")
print(stats::aggregate(ard ~ set, A[A$method == "augp", ], sum))
cat("\naugp fits: LPD minus the better peer's on each split (mean over splits, se over splits;",
    "splits at least as good), LPD minus km's mean, fit time; full Bayes: largest R-hat and",
    "smallest bulk ESS over the hyperparameters (worst split):\n")
fb <- do.call(rbind, lapply(split(A, A$set), function(d) {
  peer <- pmax(d$lpd[d$method == "kernlab"], d$lpd[d$method == "km"])
  own <- intersect(c("augp", "augp_se", "augp_t2", "augp_fb", "augp_fb_iso"), methods_A)
  do.call(rbind, lapply(own, function(m) {
    dl <- d$lpd[d$method == m] - peer
    fb <- m %in% c("augp_fb", "augp_fb_iso")
    data.frame(set = d$set[1], method = m, lpd = mean(d$lpd[d$method == m]), d_best_peer = mean(dl),
               d_km = mean(d$lpd[d$method == m]) - mean(d$lpd[d$method == "km"]),
               se = stats::sd(dl) / sqrt(length(dl)), better = sum(dl >= 0), splits = length(dl),
               time = mean(d$time[d$method == m]),
               rhat_max = if (!fb) NA else max(d$rhat[d$method == m]),
               ess_min = if (!fb) NA else min(d$ess[d$method == m]),
               accept = if (!fb) NA else mean(d$accept[d$method == m]))
  }))
}))
print(fb, digits = 3, row.names = FALSE)
}
if (run_section("B")) {
cat("\n## B: n = 2000 (means over 3 repeats)\n")
mB <- agg(B, "method")
print(mB, digits = 4)
cat("time ratio augp (learned) / kernlab:",
    format(mB$time[grepl("learned", mB$method)] / mB$time[grepl("kernlab", mB$method)], digits = 3), "\n")
cat("per repeat:", format(B$time[grepl("learned", B$method)] / B$time[grepl("kernlab", B$method)], digits = 3), "\n")
}
if (run_section("C")) {
cat("\n## C: outliers (means over splits)\n")
print(agg(C, c("set", "frac", "method")), digits = 4)
}
cat("end:", load_line(), "\n")
cat(sprintf("\nR %s, augmentedGP %s, kernlab %s, DiceKriging %s, threads %d, %s\n",
            getRversion(), utils::packageVersion("augmentedGP"), utils::packageVersion("kernlab"),
            utils::packageVersion("DiceKriging"), threads, format(Sys.time(), "%Y-%m-%d %H:%M")))
