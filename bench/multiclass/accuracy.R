# Multi-class accuracy of the logistic-softmax defaults on the 11-class vowel data
# (mlbench::Vowel), against a random forest (ranger) and multinomial regression
# (nnet::multinom) in the same run, with diagnostics of the hyperparameter objective.
#
# Data: mlbench::Vowel without V1 (the speaker id), 9 numeric features; a fixed-seed
# random 528 / 462 train / test split (set.seed(1); sample(990, 528)). Not the
# speaker-disjoint standard split (speakers 1-8 train, 9-15 test), on which every
# method's error is 0.4-0.6.
#
# Run: R_LIBS=<lib with augmentedGP> Rscript bench/multiclass/accuracy.R (about 4 minutes;
# ACC_LONG_GIBBS=1 adds three long Gibbs runs, ACC_SATELLITE=1 a Satellite section).
# One thread throughout. Prints one table: method, test error, test log loss,
# time (s), the augmented ELBO (the package's objective) and the "direct" ELBO of the
# same q(f) (see direct_elbo()).
suppressMessages({
  library(augmentedGP)
  library(ranger)
  library(nnet)
})
data(Vowel, package = "mlbench")
V <- Vowel
V$V1 <- NULL
set.seed(1)
tr <- sort(sample(nrow(V), 528))
dtr <- V[tr, ]
dte <- V[-tr, ]
K <- nlevels(V$Class)

logloss <- function(P, y) {
  P <- pmax(P, 1e-12)
  -mean(log(P[cbind(seq_along(y), as.integer(y))]))
}
err_rate <- function(P, y) mean(levels(y)[max.col(P)] != y)

# The direct ELBO of a variational fit's q(f) under the un-augmented likelihood:
#   E_q[log p(y | f)] - sum_k KL(q(f_k) || p(f_k)),
# E_q by Monte Carlo over the factorised Gaussian marginals q(f_ik), the KL in closed
# form with q(f_k) = N(m_k, S_k), S_k = (K^-1 + diag(omega_k))^-1:
#   2 KL = tr(B^-1) + (m - m0)' alpha - n + log|B|,  B = I + W^1/2 K W^1/2,
# using m - m0 = K alpha. It is a lower bound on the same log marginal likelihood as
# the augmented ELBO, for the same q(f); their difference is the part of the augmented
# bound's gap that comes from the augmentation (mean field over f and the
# augmentation variables).
direct_elbo <- function(fit, S = 2000) {
  e <- fit$engine
  X <- e$X
  n <- nrow(X)
  q <- e$q
  Km <- augmentedGP:::engine_K(e$kernel, X, e$jitter)
  Ks <- if (is.list(Km)) Km else rep(list(Km), q)
  m0 <- augmentedGP:::engine_mean0_matrix(e$mean0, n, q)
  yi <- max.col(e$lik$Y)
  th <- e$lik$theta
  kl <- 0
  for (k in seq_len(q)) {
    om <- e$omega[, k]
    B <- diag(n) + sqrt(om) * t(sqrt(om) * Ks[[k]])
    LB <- chol(B)
    d <- e$mean[, k] - m0[, k]
    kl <- kl + 0.5 * (sum(diag(chol2inv(LB))) + sum(d * e$alpha[, k]) - n + 2 * sum(log(diag(LB))))
  }
  Z <- withr::with_seed(2, matrix(stats::rnorm(S * q), S, q))
  ell <- 0
  for (i in seq_len(n)) {
    Fi <- sweep(sweep(Z, 2, sqrt(e$var[i, ]), "*"), 2, e$mean[i, ], "+")
    if (q < length(th)) Fi <- cbind(Fi, 0)  # bijective: the last class's latent is 0
    s <- sweep(stats::plogis(Fi), 2, th, "*")
    ell <- ell + mean(log(s[, yi[i]] / rowSums(s)))
  }
  ell - kl
}

rows <- list()
add <- function(method, P, time, elbo = NA, direct = NA, kernel = "") {
  rows[[length(rows) + 1L]] <<- data.frame(
    method = method, error = round(err_rate(P, dte$Class), 3), logloss = round(logloss(P, dte$Class), 3),
    time = round(time, 1), elbo = round(elbo, 1), direct_elbo = round(direct, 1), kernel = kernel)
  message(paste(unlist(rows[[length(rows)]]), collapse = " | "))
}
kdesc <- function(k) {
  if (inherits(k, "augp_kernels")) {
    ls <- vapply(k, function(z) z$lengthscale, 1)
    return(sprintf("per-class ls %.2g-%.2g", min(ls), max(ls)))
  }
  sprintf("ls %.3g var %.3g", k$lengthscale, k$variance)
}
fit_add <- function(method, kernel = kernel_se(), ctl = list(), likelihood = NULL, gp_method = "vi",
                    direct = TRUE) {
  ctl <- do.call(augp_control, c(list(threads = 1), ctl))
  t <- system.time(f <- suppressMessages(
    augp(Class ~ ., dtr, likelihood = likelihood, kernel = kernel, method = gp_method,
         control = ctl, seed = 1)))[3]
  P <- predict(f, dte)
  vi <- gp_method == "vi"
  is_ls <- inherits(f$likelihood, "augp_logistic_softmax")
  add(method, P, t, if (vi) elbo(f) else NA, if (vi && is_ls && direct) direct_elbo(f) else NA,
      kdesc(f$kernel))
  invisible(f)
}

# Reference methods.
t <- system.time(rf <- ranger(Class ~ ., dtr, probability = TRUE, num.threads = 1, seed = 1))[3]
add("ranger (500 trees)", predict(rf, dte)$predictions, t)
t <- system.time(mn <- multinom(Class ~ ., dtr, trace = FALSE, maxit = 500))[3]
add("multinom", predict(mn, dte, type = "probs"), t)

# The default fit, and the search from other starts (hypothesis a).
fit_add("augp default")
fit_add("augp, start ls 1 var 5", kernel = kernel_se(lengthscale = 1, variance = 5))
fit_add("augp, start ls 0.3 var 1", kernel = kernel_se(lengthscale = 0.3, variance = 1))
fit_add("augp, 5 restarts", ctl = list(restarts = 5))
# Fixed kernels (learn_hyper = FALSE): augmented vs direct ELBO of the same q(f).
for (l in c(0.5, 1, 2, 3)) for (v in c(5, 25, 100)) {
  fit_add(sprintf("augp fixed ls %g var %g", l, v), kernel = kernel_se(lengthscale = l, variance = v),
          ctl = list(learn_hyper = FALSE))
}
# (b) per-class kernels, (c) class weights, bijective link.
fit_add("augp shared_hyper = FALSE", ctl = list(shared_hyper = FALSE))
fit_add("augp learn_theta", likelihood = logistic_softmax(learn_theta = TRUE))
fit_add("augp bijective", likelihood = logistic_softmax(bijective = TRUE))
# (d) Gibbs vs VI predictive at the same fixed kernels.
for (kk in list(c(0.5, 5), c(2, 25))) {
  fit_add(sprintf("augp Gibbs fixed ls %g var %g", kk[1], kk[2]),
          kernel = kernel_se(lengthscale = kk[1], variance = kk[2]),
          ctl = list(learn_hyper = FALSE, iter = 600, warmup = 300, chains = 1), gp_method = "gibbs")
}
# (e) prior mean: the logistic-softmax latent prior mean set to qlogis(1 / K) instead of 0
# (an experiment: the method is overridden in the package namespace for this run).
ns <- asNamespace("augmentedGP")
old_m0 <- get("lik_prior_mean.augp_logistic_softmax", ns)
unlockBinding("lik_prior_mean.augp_logistic_softmax", ns)
assign("lik_prior_mean.augp_logistic_softmax", function(likelihood, resp) stats::qlogis(1 / ncol(resp$Y)),
       envir = ns)
fit_add("augp prior mean qlogis(1/K)")
fit_add("augp prior mean qlogis(1/K), fixed ls 2 var 25", kernel = kernel_se(lengthscale = 2, variance = 25),
        ctl = list(learn_hyper = FALSE))
assign("lik_prior_mean.augp_logistic_softmax", old_m0, envir = ns)
# (f) stick-breaking.
fit_add("augp stick_breaking default", likelihood = stick_breaking())

# Longer Gibbs runs (ACC_LONG_GIBBS=1; about 3 minutes each): 2 chains x 2000 iterations
# at the direct-ELBO-preferred kernels and at the default fit's kernel.
if (nzchar(Sys.getenv("ACC_LONG_GIBBS"))) {
  for (kk in list(c(2, 25), c(3, 25), c(8.88, 34.3))) {
    fit_add(sprintf("augp Gibbs 2 x 2000 fixed ls %g var %g", kk[1], kk[2]),
            kernel = kernel_se(lengthscale = kk[1], variance = kk[2]),
            ctl = list(learn_hyper = FALSE, iter = 2000, warmup = 1000, chains = 2), gp_method = "gibbs")
  }
}
res <- do.call(rbind, rows)
options(width = 200)
print(res, row.names = FALSE)

# mlbench::Satellite (6 classes, 36 features), ACC_SATELLITE=1: 800 random training rows,
# 2000 other rows for testing; the default fit and a grid of fixed kernels with both ELBOs.
if (nzchar(Sys.getenv("ACC_SATELLITE"))) {
  data(Satellite, package = "mlbench")
  names(Satellite)[37] <- "Class"
  Satellite$Class <- droplevels(Satellite$Class)
  set.seed(1)
  i <- sample(nrow(Satellite), 800)
  j <- sample(setdiff(seq_len(nrow(Satellite)), i), 2000)
  dtr <- Satellite[i, ]
  dte <- Satellite[j, ]
  rows <- list()
  t <- system.time(rf <- ranger(Class ~ ., dtr, probability = TRUE, num.threads = 1, seed = 1))[3]
  add("Satellite: ranger (500 trees)", predict(rf, dte)$predictions, t)
  t <- system.time(mn <- multinom(Class ~ ., dtr, trace = FALSE, maxit = 500))[3]
  add("Satellite: multinom", predict(mn, dte, type = "probs"), t)
  fit_add("Satellite: augp default")
  for (l in c(2, 4, 8)) for (v in c(5, 25, 100)) {
    fit_add(sprintf("Satellite: fixed ls %g var %g", l, v), kernel = kernel_se(lengthscale = l, variance = v),
            ctl = list(learn_hyper = FALSE))
  }
  print(do.call(rbind, rows), row.names = FALSE)
}
