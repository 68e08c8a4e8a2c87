# Why the default multi-class fit trails a random forest in error on mlbench::Satellite
# (issue 19, item 2): the decision rule, the kernel choice (ELBOs, held-out and test
# scores), the number of inducing points, and where the errors are. One thread, fixed
# seeds; every augp fit is the default sparse GP with m = 200 k-means inducing points
# unless a section says otherwise.
#
# Data: mlbench::Satellite, the standard split (first 4435 rows train, last 2000 test).
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/satellite_kernels.R [sections]
# sections: comma-separated subset of
#   decision   the default fit: error of argmax of the predictive class probabilities
#              (what predict() and the benches use) against argmax of the latent means;
#              per-class errors of the default fit and of ranger
#   direct     the augmented and direct ELBO on all 4435 rows at several kernels (each
#              CAVI run from the default fit's q(u), as the direct-ELBO ladder's rungs)
#   grid       fixed kernels (lengthscale x variance, standardised units): test error,
#              log loss and Brier score
#   m400       fixed kernels with m = 400
#   half       fixed kernels fitted on the evenly spaced half of the rows the search's
#              largest subset level uses (and on a random half): held-out and test scores
#   errors     where the errors are at two fixed kernels: test points with two or more
#              class sigmoids above 0.9, and misclassified test points per true class
#   cv         5-fold cross-validation on the training rows at three fixed kernels
# (default: all). Prints one line per fit.
args <- commandArgs(trailingOnly = TRUE)
sections <- if (length(args) >= 1) strsplit(args[1], ",")[[1]] else
  c("decision", "direct", "grid", "m400", "half", "errors", "cv")
for (p in c("mlbench", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("benchmark needs package ", p)
}
suppressMessages(library(augmentedGP))
options(augmentedGP.threads = 1)
source(file.path("bench", "multiclass", "common.R"))  # clip(), satellite_split()
sat <- satellite_split()
train <- sat$train
test <- sat$test
y <- test$classes
n <- nrow(train)

scores <- function(P, yy = y) {
  P <- clip(as.matrix(P)[, levels(yy), drop = FALSE])
  Y <- diag(nlevels(yy))[as.integer(yy), ]
  c(error = mean(levels(yy)[max.col(P, ties.method = "first")] != yy),
    logloss = -mean(log(P[cbind(seq_along(yy), as.integer(yy))])),
    brier = mean(rowSums((P - Y)^2)))
}
fixed_fit <- function(ls, va, rows = seq_len(n), m = 200) {
  suppressMessages(augp(classes ~ ., data = train[rows, ], seed = 1, inducing = m,
                        kernel = kernel_se(variance = va, lengthscale = ls),
                        control = augp_control(learn_hyper = FALSE)))
}
line <- function(label, s, time = NA) {
  cat(sprintf("%-34s error %.4f  log loss %.4f  Brier %.4f  %6.1f s\n", label, s[["error"]],
              s[["logloss"]], s[["brier"]], time))
}

default_fit <- NULL
if (any(c("decision", "direct") %in% sections)) {
  t <- system.time(default_fit <- augp(classes ~ ., data = train, seed = 1))
  cat("default fit kernel:", format(default_fit$kernel), "\n")
  line("augp default", scores(predict(default_fit, test)), t[["elapsed"]])
}

if ("decision" %in% sections) {
  cat("\n== decision rule\n")
  L <- predict(default_fit, test, type = "link")
  P <- predict(default_fit, test)
  colnames(L) <- colnames(P)
  cat(sprintf("argmax of mean probabilities: error %.4f; argmax of latent means: error %.4f\n",
              mean(levels(y)[max.col(as.matrix(P)[, levels(y)])] != y),
              mean(levels(y)[max.col(as.matrix(L)[, levels(y)])] != y)))
  rf <- ranger::ranger(classes ~ ., data = train, probability = TRUE, num.threads = 1, seed = 1)
  Prf <- predict(rf, test, num.threads = 1)$predictions
  line("ranger (500 trees)", scores(Prf))
  wrong <- function(P) y[levels(y)[max.col(as.matrix(P)[, levels(y)])] != y]
  tab <- rbind(test = table(y), augp_default = table(wrong(P)), ranger = table(wrong(Prf)))
  cat("misclassified test points per true class:\n")
  print(tab)
}

if ("direct" %in% sections) {
  cat("\n== ELBOs on all rows (m = 200, the default fit's inducing points)\n")
  ns <- asNamespace("augmentedGP")
  e <- default_fit$engine
  ctl <- default_fit$control
  for (k in list(c(7.25, 26), c(3.6, 26), c(3.6, 13), c(3.6, 6.5), c(3, 5), c(2.5, 5))) {
    ker <- ns$kernel_set_params(e$kernel, log(c(k[2], k[1])))
    res <- ns$.sparse_cavi_cpp(e$X, e$mean0, e$lik, as.integer(ctl$block_size),
                               ns$kernel_flatten(ker), e$Z, e$jitter, e$state[c("Lam", "h")],
                               200L, 1e-6, 1L, TRUE)
    pr <- ns$.sparse_predict_cpp(ns$kernel_flatten(ker), e$Z, e$jitter, res$state,
                                 ns$design_matrix(e$X), e$mean0, 1L)
    cat(sprintf("ls %4.2f var %4.1f: augmented ELBO %8.1f  direct ELBO %8.1f\n", k[1], k[2],
                res$elbo[length(res$elbo)],
                ns$engine_direct_elbo(e$lik, pr$mean, pr$var, res$state$kl)))
  }
}

if ("grid" %in% sections) {
  cat("\n== fixed kernels, m = 200\n")
  for (ls in c(2, 3, 4, 5.5, 7.25)) for (va in c(2.5, 5, 10, 26)) {
    t <- system.time(fit <- fixed_fit(ls, va))
    line(sprintf("ls %4.2f var %4.1f", ls, va), scores(predict(fit, test)), t[["elapsed"]])
  }
}

if ("m400" %in% sections) {
  cat("\n== fixed kernels, m = 400\n")
  for (k in list(c(3, 5), c(7.25, 26))) {
    t <- system.time(fit <- fixed_fit(k[1], k[2], m = 400))
    line(sprintf("ls %4.2f var %4.1f m 400", k[1], k[2]), scores(predict(fit, test)), t[["elapsed"]])
  }
}

if ("half" %in% sections) {
  cat("\n== fixed kernels fitted on half the rows: held-out rows | test set\n")
  even <- unique(round(seq(1, n, length.out = 2218)))
  rnd <- withr::with_seed(3, sort(sample(n, 2218)))
  rf <- ranger::ranger(classes ~ ., data = train[even, ], probability = TRUE, num.threads = 1,
                       seed = 1)
  line("ranger, even half: test", scores(predict(rf, test, num.threads = 1)$predictions))
  for (k in list(c(3, 5), c(3.6, 26), c(7.25, 26), c(7.25, 104))) {
    for (half in c("even", "random")) {
      rows <- if (half == "even") even else rnd
      fit <- fixed_fit(k[1], k[2], rows)
      held <- setdiff(seq_len(n), rows)
      line(sprintf("ls %4.2f var %5.1f %s: held-out", k[1], k[2], half),
           scores(predict(fit, train[held, ]), train$classes[held]))
      line(sprintf("ls %4.2f var %5.1f %s: test", k[1], k[2], half), scores(predict(fit, test)))
    }
  }
}

if ("errors" %in% sections) {
  cat("\n== where the errors are (all rows, m = 200)\n")
  for (k in list(c(3, 5), c(7.25, 26))) {
    fit <- fixed_fit(k[1], k[2])
    P <- as.matrix(predict(fit, test))[, levels(y)]
    S <- stats::plogis(predict(fit, test, type = "link"))
    wrong <- levels(y)[max.col(P)] != y
    sat <- rowSums(S > 0.9) >= 2
    cat(sprintf(paste0("ls %4.2f var %4.1f: error %.4f; test points with two or more sigmoids of ",
                       "the latent means above 0.9: %d; mean largest probability %.3f\n"),
                k[1], k[2], mean(wrong), sum(sat), mean(apply(P, 1, max))))
    print(table(y[wrong]))
  }
}

if ("cv" %in% sections) {
  cat("\n== 5-fold cross-validation on the training rows (m = 200)\n")
  folds <- withr::with_seed(5, sample(rep(1:5, length.out = n)))
  for (k in list(c(3, 5), c(7.25, 26), c(4, 10))) {
    s <- rowMeans(sapply(1:5, function(f) {
      fit <- fixed_fit(k[1], k[2], which(folds != f))
      scores(predict(fit, train[folds == f, ]), train$classes[folds == f])
    }))
    line(sprintf("5-fold CV ls %4.2f var %4.1f", k[1], k[2]), s)
  }
}
