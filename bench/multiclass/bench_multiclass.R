# Benchmark: multi-class GP classification with the logistic-softmax likelihood
# (augmentedGP, variational and Gibbs) against kernlab::gausspr (multi-class GP
# classification, RBF kernel) and what users pick instead of a GP: nnet::multinom
# (linear multinomial logit) and a random forest (ranger::ranger, probability forest,
# its default 500 trees), on data sets that ship with R packages. All methods run in
# the same process on the same splits.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/bench_multiclass.R [letter_n] [threads] [only]
# letter_n: training size of the LetterRecognition subset (default 2000; the test
# set has the same size). `only`: optional regular expression selecting data sets.
# Each set is scored on several random splits (seeds 1, 2, ...): iris and fgl 20,
# Vehicle 5, letters 1 (AUGP_BENCH_SPLITS caps the number); Gibbs runs on every split of
# the sets with at most 300 training points.
# Writes bench/multiclass/results[_only].csv (one row per split and method) and prints
# a markdown table of means (standard errors over splits) and median fit times.
# Metrics on held-out data: error rate, mean log loss (probabilities clipped at
# 1e-9), fit time in seconds (elapsed). Ratios are augp / peer, and augp / the best
# peer (kernlab, nnet or ranger) in each column: lowest error, lowest log loss, fastest.
args <- commandArgs(trailingOnly = TRUE)
letter_n <- if (length(args) >= 1) as.integer(args[1]) else 2000L
threads <- if (length(args) >= 2) as.integer(args[2]) else 2L
only <- if (length(args) >= 3) args[3] else ""
gibbs_upto <- 300  # Gibbs only on small training sets
# sparse GP (m = 200 inducing points) above this training size; the environment
# variable AUGP_BENCH_SPARSE_FROM overrides it (results then go to results_<only>_exact...csv)
sparse_from <- as.numeric(Sys.getenv("AUGP_BENCH_SPARSE_FROM", "1000"))

for (p in c("MASS", "kernlab", "mlbench", "nnet", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("benchmark needs package ", p)
}
library(augmentedGP)

source(file.path("bench", "multiclass", "common.R"))
# Elapsed seconds of a fit: the median of `reps` runs (fits under a second are
# timed 5 times, so that timer resolution and noise do not decide the ratio).
timed <- function(expr, reps = 1L) {
  ex <- substitute(expr)
  env <- parent.frame()
  times <- numeric(0)
  repeat {
    t0 <- proc.time()[["elapsed"]]
    val <- eval(ex, env)
    times <- c(times, proc.time()[["elapsed"]] - t0)
    if (length(times) >= reps || (length(times) == 1L && times[1] > 1)) break
  }
  list(val = val, time = stats::median(times))
}

max_splits <- as.integer(Sys.getenv("AUGP_BENCH_SPLITS", "1000"))
sets <- multiclass_sets(letter_n)
if (nzchar(only)) sets <- sets[grepl(only, names(sets))]

# Warm-up: one small fit of every method before any timing, so that no method's
# first call in the process (loading namespaces, byte-compiling) is timed.
invisible(augp(Species ~ ., data = iris[c(1:10, 51:60, 101:110), ], method = "vi",
               control = augp_control(threads = threads)))
invisible(suppressMessages(kernlab::gausspr(as.matrix(iris[c(1:10, 51:60, 101:110), 1:4]),
                                            iris$Species[c(1:10, 51:60, 101:110)],
                                            type = "classification", kernel = "rbfdot")))
invisible(nnet::multinom(Species ~ ., data = iris, trace = FALSE))
invisible(ranger::ranger(Species ~ ., data = iris, probability = TRUE, num.trees = 5,
                         num.threads = threads))

rows <- list()
add <- function(set, s, method, sc, time, note = "") {
  rows[[length(rows) + 1]] <<- data.frame(set = set, split = split, n_train = nrow(s$xtr),
                                          n_test = nrow(s$xte), K = nlevels(s$ytr),
                                          method = method, error = sc[["error"]],
                                          logloss = sc[["logloss"]], time = time, note = note)
}
for (nm in names(sets)) for (split in seq_len(min(sets[[nm]]$splits, max_splits))) {
  s <- with(sets[[nm]], split_sets(d, n_train, n_test, split))
  cat(sprintf("== %s, split %d: n_train = %d, n_test = %d, K = %d\n", nm, split, nrow(s$xtr),
              nrow(s$xte), nlevels(s$ytr)))
  dtr <- data.frame(s$xtr, y = s$ytr)
  # augmentedGP, variational (default control, hyperparameters learned)
  # (an exact GP above sparse_from training points is replaced by a sparse one with
  # m = 200 k-means inducing points: K exact n x n factorisations per sweep are too slow)
  sparse <- nrow(s$xtr) > sparse_from
  r <- timed(augp(y ~ ., data = dtr, method = "vi", inducing = if (sparse) 200 else NULL,
                  control = augp_control(threads = threads)), reps = 5L)
  P <- predict(r$val, newdata = s$xte, type = "response")
  add(nm, s, "augp-vi", scores(P, s$yte), r$time,
      paste(if (sparse) "sparse, m = 200" else "",
            if (isTRUE(r$val$engine$converged)) "" else "ELBO not converged at maxit"))
  print(utils::tail(rows, 1)[[1]])
  if (nrow(s$xtr) <= gibbs_upto) {
    # one thread: the per-iteration parallel Gaussian steps cost more than they save here
    r <- timed(augp(y ~ ., data = dtr, method = "gibbs", seed = 1,
                    control = augp_control(threads = 1, iter = 1000, warmup = 500, chains = 2)))
    P <- predict(r$val, newdata = s$xte, type = "response")
    add(nm, s, "augp-gibbs", scores(P, s$yte), r$time)
    print(utils::tail(rows, 1)[[1]])
  }
  # kernlab: Laplace-approximation GP classifier, RBF kernel with automatic sigma
  # (sigest's sigma uses random rows: the seed makes every repetition the same fit)
  r <- timed({
    set.seed(1)
    suppressMessages(kernlab::gausspr(as.matrix(s$xtr), s$ytr, type = "classification",
                                      kernel = "rbfdot"))
  }, reps = 5L)
  P <- kernlab::predict(r$val, as.matrix(s$xte), type = "probabilities")
  add(nm, s, "kernlab-gausspr", scores(P, s$yte), r$time)
  print(utils::tail(rows, 1)[[1]])
  # nnet: linear multinomial logit on standardised inputs
  ctr <- colMeans(s$xtr); scl <- apply(s$xtr, 2, stats::sd)
  ztr <- data.frame(scale(s$xtr, ctr, scl), y = s$ytr)
  zte <- data.frame(scale(s$xte, ctr, scl))
  r <- timed(nnet::multinom(y ~ ., data = ztr, trace = FALSE, maxit = 1000, MaxNWts = 1e5),
             reps = 5L)
  P <- stats::predict(r$val, newdata = zte, type = "probs")
  if (!is.matrix(P)) P <- cbind(1 - P, P)
  colnames(P) <- levels(s$ytr)
  add(nm, s, "nnet-multinom", scores(P, s$yte), r$time)
  print(utils::tail(rows, 1)[[1]])
  # ranger: probability forest at its defaults (500 trees, mtry = floor(sqrt(p))),
  # seeded so that every repetition is the same forest
  r <- timed(ranger::ranger(y ~ ., data = dtr, probability = TRUE, num.threads = threads, seed = 1),
             reps = 5L)
  P <- stats::predict(r$val, data = s$xte, num.threads = threads)$predictions
  add(nm, s, "ranger", scores(P, s$yte), r$time)
  print(utils::tail(rows, 1)[[1]])
}
res <- do.call(rbind, rows)
out <- file.path("bench", "multiclass",
                 sprintf("results%s%s.csv",
                         if (nzchar(only)) paste0("_", gsub("[^A-Za-z0-9-]", "", only)) else "",
                         if (nzchar(Sys.getenv("AUGP_BENCH_SPARSE_FROM"))) "_exact" else ""))
utils::write.csv(res, out, row.names = FALSE)

se <- function(v) if (length(v) > 1) stats::sd(v) / sqrt(length(v)) else NA_real_
cat("\n| set | n train/test | K | splits | method | error | log loss | median fit time (s) |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (nm in unique(res$set)) for (me in unique(res$method[res$set == nm])) {
  r <- res[res$set == nm & res$method == me, ]
  cat(sprintf("| %s | %d/%d | %d | %d | %s | %.3f (%s) | %.3f (%s) | %.3f |\n", nm, r$n_train[1],
              r$n_test[1], r$K[1], nrow(r), me, mean(r$error), format(se(r$error), digits = 2),
              mean(r$logloss), format(se(r$logloss), digits = 2), stats::median(r$time)))
}
peers <- c("kernlab-gausspr", "nnet-multinom", "ranger")
cat("\nRatios augp-vi / peer over the same splits (mean error, mean log loss, median time;",
    "splits where augp's log loss is lower):\n")
cat("\n| set | peer | error | log loss | time | augp's log loss lower |\n|---|---|---|---|---|---|\n")
for (nm in unique(res$set)) {
  a <- res[res$set == nm & res$method == "augp-vi", ]
  for (peer in peers) {
    b <- res[res$set == nm & res$method == peer, ]
    b <- b[match(a$split, b$split), ]
    cat(sprintf("| %s | vs %s | %.2f | %.2f | %.2f | %d of %d |\n", nm, peer,
                mean(a$error) / max(mean(b$error), 1e-9), mean(a$logloss) / mean(b$logloss),
                stats::median(a$time) / stats::median(b$time), sum(a$logloss < b$logloss),
                nrow(a)))
  }
  # the best peer in each column (lowest mean error, lowest mean log loss, fastest median)
  pm <- sapply(peers, function(pe) {
    b <- res[res$set == nm & res$method == pe, ]
    c(error = mean(b$error), logloss = mean(b$logloss), time = stats::median(b$time))
  })
  best <- apply(pm, 1, which.min)
  cat(sprintf("| %s | vs best peer (%s / %s / %s) | %.2f | %.2f | %.2f | |\n", nm,
              peers[best[["error"]]], peers[best[["logloss"]]], peers[best[["time"]]],
              mean(a$error) / max(pm["error", best[["error"]]], 1e-9),
              mean(a$logloss) / pm["logloss", best[["logloss"]]],
              stats::median(a$time) / pm["time", best[["time"]]]))
}
cat(sprintf("\nR %s, %s, threads = %d, date %s\n", getRversion(), R.version$platform, threads,
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")))
