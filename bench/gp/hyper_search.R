# Time of the kernel hyperparameter search (engine_hyper_learn for the exact engine,
# sparse_full for the sparse one) of two installed builds of augmentedGP, in the same
# run: every case runs `reps` times per build, alternating builds, each run in a fresh
# R process (the figure is the median). Also checks that both builds end at the same
# kernel and ELBO path.
# Usage: Rscript bench/gp/hyper_search.R BEFORE_LIB AFTER_LIB [reps] [cases]
#   (cases: comma-separated, of spam1000, spam2000, vehicle4, sparse5000; default all)
#   (each LIB an R library holding an installed augmentedGP, e.g. from
#    R CMD INSTALL -l LIB .)
args <- commandArgs(trailingOnly = TRUE)
if (length(args) >= 1 && args[1] == "--case") {
  # Child: one timed search of case args[2] with the library args[3]; prints a line.
  .libPaths(c(args[3], .libPaths()))
  suppressMessages(library(augmentedGP))
  ns <- asNamespace("augmentedGP")
  case <- args[2]
  # The same settings in both builds: the engine's own defaults of the older builds
  # (engine_control), or the one control table of the newer ones with those values.
  old_api <- exists("engine_control", envir = ns, inherits = FALSE)
  ctl <- if (old_api) ns$engine_control(list(threads = 1L)) else
    ns$as_augp_control(list(threads = 1L, tol = 1e-8, jitter = 1e-8, hyper_maxit = 50))
  if (case %in% c("spam1000", "spam2000")) {
    env <- environment()
    data("spam", package = "kernlab", envir = env)
    set.seed(1)
    n <- if (case == "spam1000") 1000 else 2000
    idx <- sample(nrow(env$spam), n)
    # 8 of the most informative inputs, log-transformed and standardised
    cols <- c("charExclamation", "charDollar", "remove", "free", "your", "hp", "capitalAve", "money")
    X <- scale(log1p(as.matrix(env$spam[idx, cols])))
    y <- as.numeric(env$spam$type[idx] == "spam")
    lik <- ns$engine_lik(y, rep(1, n))
    kernel <- kernel_se(lengthscale = rep(1, ncol(X)))
    mean0 <- matrix(0, n, 1)
  } else if (case == "vehicle4") {
    env <- environment()
    data("Vehicle", package = "mlbench", envir = env)
    set.seed(1)
    tr <- sample(nrow(env$Vehicle))[1:600]
    X <- scale(as.matrix(env$Vehicle[tr, 1:18]))
    Y <- unname(stats::model.matrix(~ Class - 1, env$Vehicle[tr, ]))
    attributes(Y) <- list(dim = dim(Y))
    n <- nrow(X)
    lik <- list(type = "logistic_softmax", q = 4L, Y = Y, bijective = FALSE, theta = rep(1, 4))
    kernel <- kernel_se(lengthscale = 4)
    mean0 <- matrix(0, n, 4)
  } else if (case == "sparse5000") {
    set.seed(2)
    n <- 5000
    X <- matrix(stats::rnorm(n * 6), n)
    y <- stats::rbinom(n, 1, stats::plogis(2 * sin(2 * X[, 1]) + X[, 2] - X[, 3]))
    lik <- ns$engine_lik(y, rep(1, n))
    sctl <- if (old_api) ns$sparse_control(list(threads = 1L), n) else
      ns$as_augp_control(list(threads = 1L, tol = 1e-8, hyper_maxit = 50))
    Z <- X[seq(1, n, length.out = 100), ]
    kernel <- kernel_se(lengthscale = rep(1, 6))
    t <- system.time(r <- ns$sparse_full(X, matrix(0, n, 1), lik, kernel, Z, 1e-6, sctl, TRUE, FALSE))
    cat(sprintf("RESULT %s %.3f %d %.10f %s\n", case, t[["elapsed"]], r$hyper_evals,
                r$elbo[length(r$elbo)], paste(format(ns$kernel_get_params(r$kernel), digits = 12), collapse = ",")))
    quit(save = "no")
  }
  t <- system.time(h <- ns$engine_hyper_learn(X, lik, kernel, ctl, mean0, ctl$jitter, polish = 3))
  cat(sprintf("RESULT %s %.3f %d %.10f %s\n", case, t[["elapsed"]], h$evals,
              if (length(h$path)) h$path[length(h$path)] else NA,
              paste(format(ns$engine_get_params(h$kernel), digits = 12), collapse = ",")))
  quit(save = "no")
}

before <- args[1]
after <- args[2]
reps <- if (length(args) >= 3) as.integer(args[3]) else 3L
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
cases <- if (length(args) >= 4) strsplit(args[4], ",")[[1]] else
  c("spam1000", "spam2000", "vehicle4", "sparse5000")
rows <- list()
for (case in cases) {
  for (r in seq_len(reps)) {
    for (build in c("before", "after")) {
      lib <- if (build == "before") before else after
      out <- system2(file.path(R.home("bin"), "Rscript"), c(script, "--case", case, lib), stdout = TRUE)
      line <- strsplit(grep("^RESULT", out, value = TRUE), " ")[[1]]
      rows[[length(rows) + 1]] <- data.frame(case = case, build = build, rep = r,
                                             seconds = as.numeric(line[3]), evals = as.integer(line[4]),
                                             elbo = as.numeric(line[5]), theta = line[6])
      cat(case, build, r, line[3], "s\n")
    }
  }
}
res <- do.call(rbind, rows)
summ <- do.call(rbind, lapply(cases, function(cs) {
  b <- res[res$case == cs & res$build == "before", ]
  a <- res[res$case == cs & res$build == "after", ]
  data.frame(case = cs, before_s = stats::median(b$seconds), after_s = stats::median(a$seconds),
             ratio = stats::median(a$seconds) / stats::median(b$seconds), evals = a$evals[1],
             same_evals = identical(a$evals, b$evals),
             elbo_rel_diff = max(abs(a$elbo - b$elbo) / abs(b$elbo)),
             same_theta = all(a$theta == b$theta))
}))
print(res)
print(summ, digits = 4)
