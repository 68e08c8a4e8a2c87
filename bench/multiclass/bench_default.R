# Benchmark: augp() at its defaults on a public multi-class set, as a new user would
# fit it, against what users pick instead: a random forest (ranger, 2 threads) and
# multinomial regression (nnet::multinom). All methods run in the same process.
#
# Data: mlbench::Satellite (6 classes, 36 features), the standard split: the first
# 4435 rows train, the remaining 2000 test.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/bench_default.R [threads] [extra]
# extra: optional comma-separated list of further augp settings of `inducing` to run
# in the same process (e.g. "100,300" or "exact"; the exact fit takes about 12
# minutes).
# Writes bench/multiclass/results_default.csv and prints a markdown table: test error,
# mean test log loss (probabilities clipped at 1e-9), fit time (elapsed seconds), CPU
# time (user + system seconds of all threads: less sensitive than the elapsed time to
# other work on a shared machine), the inference augp chose, and the 1-minute load
# average before each fit.
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
extra <- if (length(args) >= 2) strsplit(args[2], ",")[[1]] else character(0)
for (p in c("mlbench", "nnet", "ranger")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("benchmark needs package ", p)
}
library(augmentedGP)
options(augmentedGP.threads = threads)

source(file.path("bench", "multiclass", "common.R"))  # clip(), satellite_split()
sat <- satellite_split()
train <- sat$train
test <- sat$test
y <- test$classes

scores <- function(P) {
  P <- clip(as.matrix(P)[, levels(y), drop = FALSE])
  c(error = mean(levels(y)[max.col(P, ties.method = "first")] != y),
    logloss = -mean(log(P[cbind(seq_along(y), as.integer(y))])))
}
load1 <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])

res <- list()
add <- function(method, st, P, load, choice = "") {
  s <- scores(P)
  time <- st[["elapsed"]]
  cpu <- st[["user.self"]] + st[["sys.self"]]
  res[[length(res) + 1]] <<- data.frame(method = method, error = s[["error"]],
                                        logloss = s[["logloss"]], time = time, cpu = cpu,
                                        load = load, choice = choice)
  cat(sprintf("%-28s error %.4f  log loss %.4f  %7.1f s (CPU %.1f s, load %.2f) %s\n", method,
              s[["error"]], s[["logloss"]], time, cpu, load, choice))
}

# Warm-up: load every namespace (and compile nothing) before any timing.
warm <- train[seq(1, nrow(train), by = 20), ]
invisible(ranger::ranger(classes ~ ., data = warm, num.trees = 5, num.threads = threads))
invisible(nnet::multinom(classes ~ ., data = warm, trace = FALSE))
invisible(suppressWarnings(augp(classes ~ ., data = warm[1:100, ], control = augp_control(hyper_maxit = 2))))

ld <- load1()
t <- system.time(rf <- ranger::ranger(classes ~ ., data = train, probability = TRUE,
                                       num.threads = threads, seed = 1))
add("ranger (500 trees)", t, predict(rf, test, num.threads = threads)$predictions, ld)

ld <- load1()
t <- system.time(mn <- nnet::multinom(classes ~ ., data = train, trace = FALSE, maxit = 500))
add("nnet::multinom", t, predict(mn, test, type = "probs"), ld)

fit_augp <- function(label, ...) {
  ld <- load1()
  t <- system.time(fit <- augp(classes ~ ., data = train, seed = 1, ...))
  inf <- fit$inference
  choice <- if (inf$engine == "sparse") sprintf("sparse, m = %d", as.integer(inf$m)) else "exact"
  add(label, t, predict(fit, test, type = "response"), ld, choice)
  fit
}
fit <- fit_augp("augp default")
print(fit)
for (e in extra) {
  ind <- if (e == "exact") "exact" else as.numeric(e)
  fit_augp(sprintf("augp inducing = %s", e), inducing = ind)
}

tab <- do.call(rbind, res)
utils::write.csv(tab, file.path("bench", "multiclass", "results_default.csv"), row.names = FALSE)
cat("\n| method | inference | test error | test log loss | fit time (s) | CPU (s) | load (1 min) |\n")
cat("|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(tab))) {
  with(tab[i, ], cat(sprintf("| %s | %s | %.4f | %.4f | %.1f | %.1f | %.2f |\n", method, choice,
                             error, logloss, time, cpu, load)))
}
