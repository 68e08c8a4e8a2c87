# Where the Letter-2000 default fit (bench_multiclass.R's split 1, sparse m = 200, 26
# classes) spends its time: every call of the C++ entry points of the sparse fit, timed
# (elapsed and CPU) and with its CAVI sweeps (recorded ELBOs), grouped by stage: the
# starting-kernel choice, the profiled-ELBO search's evaluations, the direct-ELBO
# ladder's rungs and the final CAVI run.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/multiclass/letter_profile.R [threads]
# Prints one line per call, the sums per stage, the fit's time, test error and log loss.
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
library(augmentedGP)
source(file.path("bench", "multiclass", "common.R"))
s <- with(multiclass_sets(2000)[["Letter-2000"]], split_sets(d, n_train, n_test, 1))
dtr <- data.frame(s$xtr, y = s$ytr)
ns <- asNamespace("augmentedGP")
calls <- new.env()
calls$rows <- list()
# Replace the namespace's binding `name` (if it has one) by a timed wrapper; info(args,
# result) gives the call's sweeps.
wrap <- function(name, info = function(a, r) NA_integer_) {
  if (!exists(name, envir = ns, inherits = FALSE)) return(invisible())
  f <- get(name, ns)
  g <- function(...) {
    t0 <- proc.time()
    res <- f(...)
    dt <- proc.time() - t0
    calls$rows[[length(calls$rows) + 1]] <- data.frame(
      fn = name, elapsed = dt[["elapsed"]], cpu = dt[["user.self"]] + dt[["sys.self"]],
      sweeps = info(list(...), res))
    res
  }
  unlockBinding(name, ns)
  assign(name, g, ns)
  lockBinding(name, ns)
}
# (.model_sparse_eval reports its sweeps since 2026-11-26; NA before)
wrap(".model_sparse_eval", function(a, r) if (is.null(r$sweeps)) NA_integer_ else as.integer(r$sweeps))
wrap(".model_sparse_cavi", function(a, r) length(r$elbo))
wrap(".sparse_cavi_cpp", function(a, r) length(r$elbo))
wrap(".sparse_predict_cpp")
wrap(".sparse_marginals_cpp")
wrap(".sparse_rewhiten_cpp")
wrap(".lik_expected_loglik_cpp")
invisible(augp(Species ~ ., data = iris[c(1:10, 51:60, 101:110), ], method = "vi",
               control = augp_control(threads = threads)))
calls$rows <- list()
t0 <- proc.time()
fit <- augp(y ~ ., data = dtr, method = "vi", inducing = 200, control = augp_control(threads = threads))
tt <- proc.time() - t0
sc <- scores(predict(fit, newdata = s$xte, type = "response"), s$yte)
L <- do.call(rbind, calls$rows)
# stages: the two 5-sweep runs of sparse_pick_start(), the model's first sweep, the
# search's evaluations, then the ladder (every call up to the last CAVI run) and the
# final CAVI run
cav <- which(L$fn == ".sparse_cavi_cpp")
L$stage <- "ladder"
L$stage[cav[1:2]] <- "starting kernel"
L$stage[L$fn == ".model_sparse_cavi"] <- "first sweep"
L$stage[L$fn == ".model_sparse_eval"] <- "search"
L$stage[max(cav)] <- "final CAVI"
L$stage[seq_len(nrow(L)) > max(cav)] <- "marginals"
options(width = 120)
print(L)
agg <- aggregate(cbind(calls = 1, sweeps = ifelse(is.na(L$sweeps), 0, L$sweeps), elapsed = L$elapsed,
                       cpu = L$cpu) ~ stage, data = L, FUN = sum)
print(agg[order(-agg$cpu), ], row.names = FALSE)
cat(sprintf("fit: elapsed %.2f s, CPU %.2f s, threads %d; test error %.4f, log loss %.6f; kernel %s\n",
            tt[["elapsed"]], tt[["user.self"]] + tt[["sys.self"]], threads, sc[["error"]], sc[["logloss"]],
            paste(format(ns$kernel_get_params(fit$engine$kernel), digits = 6), collapse = " ")))
