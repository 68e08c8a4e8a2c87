# Benchmark: the ordinal GP (ordinal(), continuation-ratio logit) against MASS::polr
# (proportional odds, logit, linear) and a ranger probability forest on public ordinal
# data sets that ship with installed R packages. Everything in one run, so that times
# and ratios are comparable.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/ordinal/bench_ordinal.R [threads] [repeats]
# (repeats = 0 skips the main comparison, e.g. to run only the optional brms part below)
# Writes bench/ordinal/results.csv (one row per data set x split x method);
# bench/ordinal/results.md records a run.
#
# Data (all outcomes ordered factors):
#   housing  MASS::housing, Sat (Low < Medium < High) ~ Infl + Type + Cont: 72 cells with
#            frequencies Freq (1681 respondents). Splits are of respondents; the training
#            respondents are re-aggregated to cells with frequency weights.
#   wvs      carData::WVS, poverty (3 levels) ~ religion + degree + country + age + gender,
#            5381 respondents: 1000 random training rows per split, the rest held out.
#   wine     ordinal::wine, rating (1..5) ~ temp + contact + judge, 72 tastings: 50
#            training rows per split, 22 held out.
# Metrics on the held-out respondents: log loss (mean -log p(y), nats; lower is better;
# the forest's zero probabilities clipped at 1e-6), error rate of the most probable
# category, mean absolute error of the predicted median category (in categories), fit
# time (elapsed seconds). augp: augp() defaults (isotropic SE kernel on standardised
# dummy-coded inputs, hyperparameters and cut points by the ELBO); Gibbs on wine and
# housing with the default chains (cut points learned by VI, then fixed).
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1) as.integer(args[1]) else 2L
repeats <- if (length(args) >= 2) as.integer(args[2]) else 5L

stopifnot(requireNamespace("MASS", quietly = TRUE), requireNamespace("ordinal", quietly = TRUE),
          requireNamespace("carData", quietly = TRUE), requireNamespace("ranger", quietly = TRUE))
suppressPackageStartupMessages(library(augmentedGP))
options(augmentedGP.threads = threads)
out_dir <- file.path("bench", "ordinal")

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, time = proc.time()[["elapsed"]] - t0)
}
quiet <- function(expr) suppressWarnings(suppressMessages(expr))

# Held-out metrics from an n x K probability matrix P and the observed categories y
# (integer codes), with frequency weights w.
metrics <- function(P, y, w = rep(1, length(y))) {
  P <- pmax(P, 1e-6)
  P <- P / rowSums(P)
  p_obs <- P[cbind(seq_along(y), y)]
  top <- max.col(P, ties.method = "first")
  med <- apply(P, 1, function(p) which(cumsum(p) >= 0.5)[1])
  c(logloss = sum(w * -log(p_obs)) / sum(w), error = sum(w * (top != y)) / sum(w),
    mae = sum(w * abs(med - y)) / sum(w))
}

# ---- data sets: a formula, the data, frequency weights, and how to split ----
data(housing, package = "MASS")
data(WVS, package = "carData")
data(wine, package = "ordinal")
sets <- list(
  housing = list(formula = Sat ~ Infl + Type + Cont, data = housing, w = housing$Freq,
                 n_train = NA, gibbs = TRUE),
  wvs = list(formula = poverty ~ religion + degree + country + age + gender, data = WVS,
             w = rep(1, nrow(WVS)), n_train = 1000L, gibbs = FALSE),
  wine = list(formula = rating ~ temp + contact + judge, data = wine[c("rating", "temp", "contact", "judge")],
              w = rep(1, nrow(wine)), n_train = 50L, gibbs = TRUE)
)

yname <- function(set) all.vars(set$formula)[1]

# A split as frequencies per row: training and test counts (respondents) of each row.
make_split <- function(set, seed) {
  set.seed(seed)
  n <- nrow(set$data)
  if (is.na(set$n_train)) {
    # respondents: 70% of each cell's count, drawn without replacement over all respondents
    ids <- rep(seq_len(n), set$w)
    tr <- sample(length(ids), round(0.7 * length(ids)))
    w_tr <- tabulate(ids[tr], n)
    return(list(train = w_tr, test = set$w - w_tr))
  }
  # redraw until every category is in the training rows (an unseen category has no
  # cut point to learn)
  y <- set$data[[yname(set)]]
  repeat {
    tr <- sample(n, set$n_train)
    if (all(table(y[tr]) > 0)) break
  }
  w_tr <- numeric(n)
  w_tr[tr] <- 1
  list(train = w_tr, test = 1 - w_tr)
}

fit_augp <- function(set, dtr, wtr, dte, method) {
  ctl <- augp_control(threads = threads)
  warn <- character(0)
  r <- elapsed(withCallingHandlers(
    suppressMessages(augp(set$formula, dtr, weights = wtr, likelihood = ordinal(), method = method,
                          seed = 1, control = ctl)),
    warning = function(w) {
      warn <<- c(warn, conditionMessage(w))
      invokeRestart("muffleWarning")
    }))
  list(P = predict(r$value, dte, type = "response"), time = r$time, warnings = length(warn),
       rounds = r$value$engine$param_rounds)
}

fit_polr <- function(set, dtr, wtr, dte) {
  r <- elapsed(quiet(MASS::polr(set$formula, data = cbind(dtr, .w = wtr), weights = .w,
                                method = "logistic")))
  list(P = stats::predict(r$value, dte, type = "probs"), time = r$time)
}

fit_ranger <- function(set, dtr, wtr, dte) {
  # the forest takes one row per respondent
  long <- dtr[rep(seq_len(nrow(dtr)), wtr), , drop = FALSE]
  r <- elapsed(quiet(ranger::ranger(set$formula, data = long, probability = TRUE, num.trees = 500,
                                    num.threads = threads, seed = 1)))
  P <- stats::predict(r$value, dte, num.threads = threads)$predictions
  lev <- levels(dtr[[yname(set)]])
  P <- P[, lev, drop = FALSE]
  list(P = P, time = r$time)
}

rows <- list()
for (nm in names(sets)) {
  set <- sets[[nm]]
  for (rep_id in seq_len(repeats)) {
    sp <- make_split(set, 1000 * rep_id + nchar(nm))
    tr <- sp$train > 0
    te <- sp$test > 0
    dtr <- set$data[tr, , drop = FALSE]
    wtr <- sp$train[tr]
    dte <- set$data[te, , drop = FALSE]
    wte <- sp$test[te]
    y <- as.integer(dte[[yname(set)]])
    methods <- c(list(augp_vi = function() fit_augp(set, dtr, wtr, dte, "vi")),
                 if (set$gibbs) list(augp_gibbs = function() fit_augp(set, dtr, wtr, dte, "gibbs")),
                 list(polr = function() fit_polr(set, dtr, wtr, dte),
                      ranger = function() fit_ranger(set, dtr, wtr, dte)))
    for (m in names(methods)) {
      res <- tryCatch(methods[[m]](), error = function(e) {
        message(sprintf("%s / %s / split %d failed: %s", nm, m, rep_id, conditionMessage(e)))
        NULL
      })
      if (is.null(res)) next
      rows[[length(rows) + 1L]] <- data.frame(data = nm, split = rep_id, method = m,
                                              n_train = sum(wtr), n_test = sum(wte),
                                              t(metrics(res$P, y, wte)), time = res$time,
                                              warnings = if (is.null(res$warnings)) NA else res$warnings,
                                              param_rounds = if (is.null(res$rounds)) NA else res$rounds)
    }
    cat(sprintf("%s split %d done\n", nm, rep_id))
  }
}
if (repeats > 0) {
res <- do.call(rbind, rows)
utils::write.csv(res, file.path(out_dir, "results.csv"), row.names = FALSE)

# ---- summary: means (sd) over splits, and per-split ratios to polr ----
agg <- function(x) sprintf("%.3f (%.3f)", mean(x), stats::sd(x))
cat("\nHeld-out metrics, mean (sd) over splits\n")
for (nm in names(sets)) {
  s <- res[res$data == nm, ]
  cat(sprintf("\n%s: n_train = %s, n_test = %s\n", nm, paste(unique(s$n_train), collapse = "/"),
              paste(unique(s$n_test), collapse = "/")))
  tab <- do.call(rbind, lapply(split(s, s$method), function(d) {
    data.frame(method = d$method[1], logloss = agg(d$logloss), error = agg(d$error), mae = agg(d$mae),
               time = agg(d$time), warnings = sum(d$warnings),
               cut_rounds = paste(d$param_rounds, collapse = ","))
  }))
  print(tab, row.names = FALSE)
  base <- s[s$method == "polr", ]
  for (m in setdiff(unique(s$method), "polr")) {
    o <- s[s$method == m, ]
    o <- o[match(base$split, o$split), ]
    cat(sprintf("  %s vs polr: log loss difference %+.4f (sd %.4f, %d/%d splits better), time ratio %.1f\n",
                m, mean(o$logloss - base$logloss), stats::sd(o$logloss - base$logloss),
                sum(o$logloss < base$logloss), nrow(o), mean(o$time) / mean(base$time)))
  }
}
}

# ---- optional: one brms gp() fit with the same likelihood (sratio, logit) ----
# Set AUGP_BENCH_BRMS=1 to run it: wine, split 1, rating ~ gp(temp, contact) with the
# inputs coded 0/1 (brms's gp() takes numeric inputs), 2 chains of 1000 iterations.
# Times the Stan compilation and the sampling separately; augp (VI and Gibbs) on the
# same split and inputs for comparison.
if (identical(Sys.getenv("AUGP_BENCH_BRMS"), "1") && requireNamespace("brms", quietly = TRUE)) {
  set <- sets$wine
  sp <- make_split(set, 1000 * 1 + nchar("wine"))
  num <- data.frame(rating = set$data$rating, temp = as.numeric(set$data$temp == "warm"),
                    contact = as.numeric(set$data$contact == "yes"))
  dtr <- num[sp$train > 0, ]
  dte <- num[sp$test > 0, ]
  y <- as.integer(dte$rating)
  form <- brms::bf(rating ~ gp(temp, contact))
  comp <- elapsed(quiet(brms::brm(form, data = dtr, family = brms::sratio("logit"), chains = 0,
                                  refresh = 0, silent = 2)))
  samp <- elapsed(quiet(stats::update(comp$value, chains = 2, cores = 1, iter = 1000, seed = 1,
                                      refresh = 0, recompile = FALSE, silent = 2)))
  Pb <- apply(brms::posterior_epred(samp$value, newdata = dte), c(2, 3), mean)
  bm <- metrics(Pb, y)
  ctl <- augp_control(threads = threads)
  av <- elapsed(quiet(augp(rating ~ temp + contact, dtr, likelihood = ordinal(), control = ctl)))
  ag <- elapsed(quiet(augp(rating ~ temp + contact, dtr, likelihood = ordinal(), method = "gibbs",
                           seed = 1, control = ctl)))
  cat("\nbrms gp() sratio on wine (split 1, inputs temp and contact):\n")
  tab <- rbind(
    brms = c(bm, compile = comp$time, fit = samp$time),
    augp_vi = c(metrics(predict(av$value, dte, type = "response"), y), compile = 0, fit = av$time),
    augp_gibbs = c(metrics(predict(ag$value, dte, type = "response"), y), compile = 0, fit = ag$time))
  print(round(tab, 3))
  utils::write.csv(data.frame(method = rownames(tab), tab), file.path(out_dir, "results_brms.csv"),
                   row.names = FALSE)
}
