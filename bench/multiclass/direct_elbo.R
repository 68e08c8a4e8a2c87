# Kernel selection by the direct ELBO (augp_control(hyper_objective = "direct")) against
# the augmented ELBO's optimum: test error, log loss and time (one thread) on
# mlbench::Vowel (the split of accuracy.R), iris (ten random 100 / 50 splits) and
# MASS::Pima.tr / Pima.te.
# Run: R_LIBS=<lib with augmentedGP> Rscript bench/multiclass/direct_elbo.R
suppressMessages(library(augmentedGP))
logloss <- function(P, y) {
  P <- pmax(P, 1e-12)
  -mean(log(P[cbind(seq_along(y), as.integer(y))]))
}
err_rate <- function(P, y) mean(levels(y)[max.col(P)] != y)
kdesc <- function(k) sprintf("ls %.3g var %.3g", k$lengthscale, k$variance)
rows <- list()
run <- function(data, form, dtr, dte, yte, obj) {
  ctl <- augp_control(threads = 1, hyper_objective = obj)
  t <- system.time(f <- suppressMessages(augp(form, dtr, control = ctl, seed = 1)))[3]
  P <- predict(f, dte)
  if (is.null(dim(P))) P <- cbind(1 - P, P)  # binary: P(second level)
  r <- data.frame(data = data, objective = obj, error = round(err_rate(P, yte), 3),
                  logloss = round(logloss(P, yte), 3), time = round(t, 1),
                  elbo = round(elbo(f), 1), kernel = kdesc(f$kernel))
  message(paste(unlist(r), collapse = " | "))
  rows[[length(rows) + 1L]] <<- r
}
data(Vowel, package = "mlbench")
V <- Vowel
V$V1 <- NULL
set.seed(1)
tr <- sort(sample(nrow(V), 528))
for (obj in c("augmented", "direct")) run("Vowel", Class ~ ., V[tr, ], V[-tr, ], V$Class[-tr], obj)
for (s in 1:10) {
  set.seed(s)
  i <- sample(150, 100)
  for (obj in c("augmented", "direct"))
    run(sprintf("iris split %d", s), Species ~ ., iris[i, ], iris[-i, ], iris$Species[-i], obj)
}
for (obj in c("augmented", "direct"))
  run("Pima", type ~ ., MASS::Pima.tr, MASS::Pima.te, MASS::Pima.te$type, obj)
options(width = 200)
res <- do.call(rbind, rows)
print(res, row.names = FALSE)
ir <- res[startsWith(res$data, "iris"), ]
print(aggregate(cbind(error, logloss, time) ~ objective, ir, mean))
