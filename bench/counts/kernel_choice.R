# Choosing the kernel per data set from the training data alone (issue 18): each count set
# and likelihood is fitted by VI (1 thread) with several candidate kernels, and each fit's
# held-out LPD is recorded next to what the training data alone say about it: the PSIS-LOO
# elpd (loo::loo(fit), draws of q(f)) and the final ELBO (elbo(fit)). The peers (mgcv::gam,
# MASS::glm.nb / glm) are fitted in the same run on the same splits.
#
# Usage (from the package root, augmentedGP installed):
#   Rscript bench/counts/kernel_choice.R run <nb|poisson> <set> [splits] [first split]
#     fits one set on splits first, ..., first + splits - 1 (default 5 and 1; seeds
#     1000 + split), writes <OUT_DIR>/kc_<lik>_<set>.csv (OUT_DIR defaults to tempdir())
#   Rscript bench/counts/kernel_choice.R summary <dir with the kc_*.csv> [name]
#     binds them into bench/counts/<name>.csv (default results_kernel_choice), prints the
#     tables and writes them to bench/counts/<name>_summary.csv
#   Rscript bench/counts/kernel_choice.R package <nb|poisson> <set> [splits] [first split]
#     the same splits fitted by the package: its default (augp_control(kernel_search =
#     "auto"), the penalised-ELBO choice) and kernel_search = FALSE, each fit timed;
#     writes <OUT_DIR>/kcp_<lik>_<set>.csv
#   Rscript bench/counts/kernel_choice.R additive <nb|poisson> <set> [splits] [first split]
#     the same splits fitted with the default `se` (a check against the run mode's csv) and
#     the two additive candidates of additive_candidates(), each with kernel_search = FALSE,
#     no loo(); with the number of kernel hyperparameters each fit learned (npar, counted as
#     the package's search counts them) and the peers; writes <OUT_DIR>/kca_<lik>_<set>.csv
#   Rscript bench/counts/kernel_choice.R summary7 <dir with the kca_*.csv>
#     binds them into bench/counts/results_kernel_choice_additive.csv, joins the five
#     candidates of results_kernel_choice.csv / results_kernel_choice_confirm.csv and prints
#     the penalised-ELBO rule over the five and over all seven candidates (tables also in
#     bench/counts/results_kernel_choice_additive_summary.csv)
#   Rscript bench/counts/kernel_choice.R constant <nb|poisson> <set> [splits] [first split]
#     the same splits fitted with the default `se` and `se_const` = kernel_se() +
#     kernel_constant() (a learned level on top of the prior mean), each with
#     kernel_search = FALSE, no loo(), and the peers; writes <OUT_DIR>/kcc_<lik>_<set>.csv
#   Rscript bench/counts/kernel_choice.R summaryc <dir with the kcc_*.csv>
#     binds them into bench/counts/results_kernel_constant.csv and prints se_const - se and
#     both against the best peer per split
#   Rscript bench/counts/kernel_choice.R compare <dir with the kcp_*.csv>
#     the package's per-split LPD and choice against the elbo_pen_1 rule applied to the
#     candidates of results_kernel_choice.csv and results_kernel_choice_confirm.csv;
#     writes bench/counts/results_kernel_search_package.csv
# Splits, seeds and LPDs as the scripts they extend:
# - nb: bench_nb.R (80/20 splits redrawn until every factor level is in training, seeds
#   1000 + split, fit seed 1; LPD from log_lik(fit, newdata = test, ndraws = 1000, seed = 1);
#   gam nb() / glm.nb, plug-in NB density). Sets: bench_nb.R's four plus discoveries and
#   InsectSprays with bench_poisson.R's formulas.
# - poisson: bench_poisson.R / restart_poisson.R (2:1 splits, seeds 1000 + split, fit seed =
#   split, defaults of augp_control(): integrate_hyper is "auto", on for these sizes; LPD
#   from log_lik(ndraws = 2000, seed = 1) as restart_poisson.R; glm / gam poisson, plug-in
#   Poisson density).
# LPD: mean over the test rows of log mean over draws of p(y | f). LOO: elpd_loo / n_train,
# and the number of Pareto k > 0.7. Times in seconds (elapsed), fit and loo() apart.
args <- commandArgs(trailingOnly = TRUE)
mode <- if (length(args)) args[1] else "summary"

quiet <- function(expr) suppressWarnings(suppressMessages(expr))
log_mean_exp <- function(x) max(x) + log(mean(exp(x - max(x))))
elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  val <- force(expr)
  list(value = val, time = proc.time()[["elapsed"]] - t0)
}

# the candidates; d = number of design columns (ARD: one lengthscale per column)
candidates <- function(d) list(
  se = NULL,  # the default: kernel_se(), isotropic
  se_ard = augmentedGP::kernel_se(lengthscale = rep(1, d)),
  m32 = augmentedGP::kernel_matern(nu = 1.5),
  m52 = augmentedGP::kernel_matern(nu = 2.5),
  m32_ard = augmentedGP::kernel_matern(nu = 1.5, lengthscale = rep(1, d))
)

# Additive candidates built from the formula's variables alone (its term labels, so an
# offset is left out): `add_se`, one SE kernel per variable (a factor: one SE on all its
# dummy columns), and `lin_add_se`, a linear kernel on all inputs plus that sum. A third,
# `add_fac_lin` (a diagnostic, not in the seven-candidate rule): a linear kernel on each
# factor's dummy columns and one SE kernel per numeric variable (bench_additive.R's
# `augp_additive`, built from the variables' classes in `data`).
additive_candidates <- function(formula, data) {
  vars <- attr(stats::terms(formula), "term.labels")
  add <- Reduce(`+`, lapply(vars, function(v) augmentedGP::kernel_se(dims = v)))
  fac <- vapply(vars, function(v) is.factor(data[[v]]) || is.character(data[[v]]), TRUE)
  list(add_se = add, lin_add_se = augmentedGP::kernel_linear() + add,
       add_fac_lin = Reduce(`+`, lapply(vars, function(v) {
         if (fac[[v]]) augmentedGP::kernel_linear(dims = v) else augmentedGP::kernel_se(dims = v)
       })))
}

if (mode %in% c("run", "package", "additive", "constant")) {
  suppressPackageStartupMessages({
    library(augmentedGP)
    library(mgcv)
  })
  options(augmentedGP.threads = 1)
  lik <- args[2]
  set <- args[3]
  n_splits <- if (length(args) >= 4) as.integer(args[4]) else 5L
  first <- if (length(args) >= 5) as.integer(args[5]) else 1L
  source(file.path("bench", "counts", "count_data.R"))  # disc, ep, qu, nb_sets
  insect <- data.frame(y = InsectSprays$count, spray = InsectSprays$spray)
  wb <- data.frame(y = warpbreaks$breaks, wool = warpbreaks$wool, tension = warpbreaks$tension)
  sets <- if (lik == "nb") c(nb_sets, list(
    discoveries = list(data = disc, y = "y", augp = y ~ year, gam = y ~ s(year),
                       glm = y ~ poly(year, 2)),
    InsectSprays = list(data = insect, y = "y", augp = y ~ spray, gam = y ~ spray, glm = y ~ spray)
  )) else list(
    InsectSprays = list(data = insect, y = "y", augp = y ~ spray, glm = y ~ spray, gam = y ~ spray),
    warpbreaks = list(data = wb, y = "y", augp = y ~ wool + tension, glm = y ~ wool * tension,
                      gam = y ~ wool * tension),
    quine = list(data = qu, y = "y", augp = y ~ Eth + Sex + Age + Lrn,
                 glm = y ~ Eth + Sex + Age + Lrn, gam = y ~ Eth + Sex + Age + Lrn),
    epil = list(data = ep, y = "y", augp = y ~ trt + lbase + lage + period,
                glm = y ~ trt + lbase + lage + period, gam = y ~ trt + s(lbase) + s(lage) + period),
    discoveries = list(data = disc, y = "y", augp = y ~ year, glm = y ~ poly(year, 2),
                       gam = y ~ s(year))
  )
  s <- sets[[set]]
  if (is.null(s)) stop("unknown set ", set, " for ", lik)
  d <- s$data
  make_split <- function(seed) {
    set.seed(seed)
    if (lik == "poisson") return(sort(sample(nrow(d), round(2 * nrow(d) / 3))))
    fac <- names(d)[vapply(d, is.factor, TRUE)]
    for (k in 1:50) {
      tr <- sort(sample.int(nrow(d), round(0.8 * nrow(d))))
      if (all(vapply(fac, function(v) all(levels(d[[v]]) %in% d[[v]][tr]), TRUE))) return(tr)
    }
    stop("no split keeps every factor level in training")
  }
  likelihood <- if (lik == "nb") negative_binomial() else poisson_logistic()
  rows <- list()
  add <- function(...) rows[[length(rows) + 1L]] <<- data.frame(lik = lik, set = set, ...)
  for (sp in first - 1L + seq_len(n_splits)) {
    tr <- make_split(1000 + sp)
    train <- d[tr, , drop = FALSE]
    test <- d[-tr, , drop = FALSE]
    if (any(vapply(train, function(v) is.factor(v) && !all(levels(v) %in% v), TRUE))) {
      cat(sprintf("%s %s split %d skipped: a factor level missing in training\n", lik, set, sp))
      next
    }
    seed <- if (lik == "nb") 1 else sp
    nd <- if (lik == "nb") 1000 else 2000
    if (mode == "package") {
      for (ks in list("auto", FALSE)) {
        f <- elapsed(quiet(augp(s$augp, train, likelihood = likelihood, seed = seed,
                                control = augp_control(threads = 1, kernel_search = ks))))
        ll <- log_lik(f$value, newdata = test, ndraws = nd, seed = 1)
        tab <- f$value$kernel_search
        add(split = sp, n_train = nrow(train), d = ncol(model.matrix(f$value)),
            search = as.character(ks), lpd = mean(apply(ll, 2, log_mean_exp)),
            chosen = if (is.null(tab)) "none" else tab$kernel[tab$chosen],
            elbo = elbo(f$value), time = f$time)
      }
      r <- do.call(rbind, rows)
      r <- r[r$split == sp, ]
      cat(sprintf("%s %-12s split %d: %s\n", lik, set, sp,
                  paste(sprintf("%s %.4f (%s, %.3f s)", r$search, r$lpd, r$chosen, r$time),
                        collapse = "; ")))
      next
    }
    # the number of design columns, from the default fit's design
    d_cols <- NULL
    pw <- list()
    if (mode %in% c("additive", "constant")) {
      kk <- if (mode == "additive") c(list(se = NULL), additive_candidates(s$augp, d)) else
        list(se = NULL, se_const = augmentedGP::kernel_se() + augmentedGP::kernel_constant())
      for (cn in names(kk)) {
        f <- elapsed(quiet(augp(s$augp, train, likelihood = likelihood, kernel = kk[[cn]],
                                seed = seed,
                                control = augp_control(threads = 1, kernel_search = FALSE))))
        if (is.null(d_cols)) d_cols <- ncol(model.matrix(f$value))
        ll <- log_lik(f$value, newdata = test, ndraws = nd, seed = 1)
        add(split = sp, n_train = nrow(train), n_test = nrow(test), d = d_cols, method = cn,
            lpd = mean(apply(ll, 2, log_mean_exp)), loo = NA, loo_se_diff = NA, k_bad = NA,
            elbo = elbo(f$value), time = f$time, time_loo = NA,
            npar = augmentedGP:::kernel_n_hyper(f$value$engine$kernel))
      }
    }
    for (cn in if (mode == "run") names(candidates(1)) else character()) {
      k <- if (cn == "se") NULL else candidates(d_cols)[[cn]]
      f <- elapsed(quiet(augp(s$augp, train, likelihood = likelihood, kernel = k, seed = seed,
                              control = augp_control(threads = 1, kernel_search = FALSE))))
      if (is.null(d_cols)) d_cols <- ncol(model.matrix(f$value))
      ll <- log_lik(f$value, newdata = test, ndraws = nd, seed = 1)
      l <- elapsed(quiet(loo::loo(f$value)))
      pw[[cn]] <- l$value$pointwise[, "elpd_loo"]
      add(split = sp, n_train = nrow(train), n_test = nrow(test), d = d_cols, method = cn,
          lpd = mean(apply(ll, 2, log_mean_exp)), loo = sum(pw[[cn]]) / nrow(train),
          loo_se_diff = if (cn == "se") 0 else stats::sd(pw[[cn]] - pw$se) * sqrt(nrow(train)),
          k_bad = sum(l$value$diagnostics$pareto_k > 0.7), elbo = elbo(f$value),
          time = f$time, time_loo = l$time,
          npar = augmentedGP:::kernel_n_hyper(f$value$engine$kernel))
    }
    # peers, as bench_nb.R / bench_poisson.R
    yt <- test[[s$y]]
    if (lik == "nb") {
      g <- elapsed(quiet(mgcv::gam(s$gam, data = train, family = mgcv::nb(), method = "REML")))
      lp <- stats::dnbinom(yt, size = g$value$family$getTheta(TRUE),
                           mu = stats::predict(g$value, test, type = "response"), log = TRUE)
      gl <- elapsed(quiet(MASS::glm.nb(s$glm, data = train)))
      lq <- stats::dnbinom(yt, size = gl$value$theta,
                           mu = stats::predict(gl$value, test, type = "response"), log = TRUE)
    } else {
      g <- elapsed(quiet(mgcv::gam(s$gam, family = stats::poisson(), data = train, method = "REML")))
      lp <- stats::dpois(yt, stats::predict(g$value, test, type = "response"), log = TRUE)
      gl <- elapsed(quiet(stats::glm(s$glm, family = stats::poisson(), data = train)))
      lq <- stats::dpois(yt, stats::predict(gl$value, test, type = "response"), log = TRUE)
    }
    for (m in list(list("gam", lp, g$time), list("glm", lq, gl$time))) {
      add(split = sp, n_train = nrow(train), n_test = nrow(test), d = d_cols, method = m[[1]],
          lpd = mean(m[[2]]), loo = NA, loo_se_diff = NA, k_bad = NA, elbo = NA, time = m[[3]],
          time_loo = NA, npar = NA)
    }
    r <- do.call(rbind, rows)
    r <- r[r$split == sp, ]
    cat(sprintf("%s %-12s split %d (d %d): %s\n", lik, set, sp, d_cols,
                paste(sprintf("%s %.4f", r$method, r$lpd), collapse = "; ")))
  }
  out <- file.path(Sys.getenv("OUT_DIR", tempdir()),
                   sprintf(c(package = "kcp_%s_%s.csv", run = "kc_%s_%s.csv",
                             additive = "kca_%s_%s.csv", constant = "kcc_%s_%s.csv")[[mode]],
                           lik, set))
  utils::write.csv(do.call(rbind, rows), out, row.names = FALSE)
  cat("wrote", out, "\n")
}

if (mode == "summary") {
  dir <- if (length(args) >= 2) args[2] else tempdir()
  files <- list.files(dir, "^kc_.*\\.csv$", full.names = TRUE)
  name <- if (length(args) >= 3) args[3] else "results_kernel_choice"
  res <- do.call(rbind, lapply(files, utils::read.csv))
  utils::write.csv(res, file.path("bench", "counts", paste0(name, ".csv")), row.names = FALSE)
  cands <- names(candidates(1))
  se_of <- function(x) if (length(x) > 1) stats::sd(x) / sqrt(length(x)) else NA
  fmt <- function(x) sprintf("%+.3f (%.3f; %d/%d)", mean(x), se_of(x), sum(x >= 0), length(x))
  tabs <- list()
  for (lk in unique(res$lik)) for (st in unique(res$set[res$lik == lk])) {
    r <- res[res$lik == lk & res$set == st, ]
    splits <- sort(unique(r$split))
    get <- function(m, col) vapply(splits, function(sp) r[r$split == sp & r$method == m, col], 0)
    best <- pmax(get("gam", "lpd"), get("glm", "lpd"))
    L <- sapply(cands, get, col = "lpd")
    LOO <- sapply(cands, get, col = "loo")
    E <- sapply(cands, get, col = "elbo")
    SE <- sapply(cands, get, col = "loo_se_diff")
    N <- get("se", "n_train")
    L <- matrix(L, length(splits), dimnames = list(NULL, cands))
    LOO <- matrix(LOO, length(splits), dimnames = list(NULL, cands))
    E <- matrix(E, length(splits), dimnames = list(NULL, cands))
    SE <- matrix(SE, length(splits), dimnames = list(NULL, cands))
    pick <- function(score) L[cbind(seq_along(splits), max.col(score, "first"))]
    # LOO with a margin: another kernel only when its elpd_loo beats the default's by more
    # than 2 se of the pointwise difference
    marg <- (LOO - LOO[, "se"]) * N - 2 * SE
    marg[, "se"] <- 0
    # ELBO with a penalty of 1 nat per kernel hyperparameter (an AIC-like count: 2 for the
    # isotropic kernels, d + 1 for ARD), since the ELBO is maximised over them
    npar <- ifelse(grepl("_ard$", cands), r$d[1] + 1, 2)
    Epen <- sweep(E, 2, npar)
    # the same, leaving the default only for a penalised gain of more than 1 nat
    Emarg <- Epen - Epen[, "se"] - 1
    Emarg[, "se"] <- 0
    rules <- list(loo = pick(LOO), elbo = pick(E), loo_2se = pick(marg), elbo_pen = pick(Epen),
                  elbo_pen_1 = pick(Emarg), oracle = apply(L, 1, max))
    chosen <- function(score) paste(cands[max.col(score, "first")], collapse = ",")
    tm <- sapply(cands, get, col = "time")
    tl <- sapply(cands, get, col = "time_loo")
    tm <- matrix(tm, length(splits))
    tl <- matrix(tl, length(splits))
    row <- data.frame(lik = lk, set = st, splits = length(splits), d = r$d[1],
                      best_peer = mean(best))
    for (cn in cands) row[[cn]] <- fmt(L[, cn] - best)
    for (rn in names(rules)) row[[rn]] <- fmt(rules[[rn]] - best)
    row$loo_minus_default <- fmt(rules$loo - L[, "se"])
    row$elbo_minus_default <- fmt(rules$elbo - L[, "se"])
    row$loo2se_minus_default <- fmt(rules$loo_2se - L[, "se"])
    row$elbopen_minus_default <- fmt(rules$elbo_pen - L[, "se"])
    row$elbopen1_minus_default <- fmt(rules$elbo_pen_1 - L[, "se"])
    row$chosen_loo <- chosen(LOO)
    row$chosen_elbo <- chosen(E)
    row$chosen_loo2se <- chosen(marg)
    row$chosen_elbopen <- chosen(Epen)
    row$chosen_elbopen1 <- chosen(Emarg)
    row$k_bad <- paste(sapply(cands, function(cn) sum(get(cn, "k_bad"))), collapse = "/")
    row$time_default <- mean(tm[, 1])
    row$time_ratio <- sum(tm) / sum(tm[, 1])
    row$time_ratio_loo <- (sum(tm) + sum(tl)) / sum(tm[, 1])
    tabs[[length(tabs) + 1L]] <- row
  }
  tab <- do.call(rbind, tabs)
  options(width = 250)
  cat("\nLPD minus the best peer per split: mean (se; splits >= 0 / splits)\n")
  print(tab[, c("lik", "set", "splits", "d", "best_peer", cands)], row.names = FALSE)
  print(tab[, c("lik", "set", "loo", "elbo", "loo_2se", "elbo_pen", "elbo_pen_1",
                "oracle")], row.names = FALSE)
  cat("\nChosen minus the fixed default (se; splits >= 0), choices per split, Pareto k > 0.7 per candidate (sum over splits)\n")
  print(tab[, c("lik", "set", "loo_minus_default", "elbo_minus_default", "loo2se_minus_default",
                "elbopen_minus_default", "elbopen1_minus_default")], row.names = FALSE)
  print(tab[, c("lik", "set", "chosen_loo", "chosen_elbo", "chosen_loo2se", "chosen_elbopen",
                "chosen_elbopen1", "k_bad")], row.names = FALSE)
  cat("\nTime: default fit (s, mean), sum of candidate fits / default, with loo() too\n")
  print(tab[, c("lik", "set", "time_default", "time_ratio", "time_ratio_loo")], row.names = FALSE,
        digits = 3)
  utils::write.csv(tab, file.path("bench", "counts", paste0(name, "_summary.csv")),
                   row.names = FALSE)
}

if (mode == "compare") {
  dir <- if (length(args) >= 2) args[2] else tempdir()
  pkg <- do.call(rbind, lapply(list.files(dir, "^kcp_.*\\.csv$", full.names = TRUE),
                               utils::read.csv))
  meas <- rbind(utils::read.csv(file.path("bench", "counts", "results_kernel_choice.csv")),
                utils::read.csv(file.path("bench", "counts", "results_kernel_choice_confirm.csv")))
  cands <- names(candidates(1))
  labels <- c(se = "squared exponential", se_ard = "squared exponential with ARD",
              m32 = "Matern 3/2", m52 = "Matern 5/2", m32_ard = "Matern 3/2 with ARD")
  out <- list()
  for (i in which(pkg$search == "auto")) {
    p <- pkg[i, ]
    m <- meas[meas$lik == p$lik & meas$set == p$set & meas$split == p$split &
                meas$method %in% cands, ]
    m <- m[match(cands, m$method), ]
    # elbo_pen_1 as in the summary: ELBO - (2, or d + 1 with ARD); the default unless
    # beaten by more than 1 nat
    sc <- m$elbo - ifelse(grepl("_ard$", cands), m$d + 1, 2)
    g <- sc - sc[1] - 1
    g[1] <- 0
    pick <- which.max(g)
    off <- pkg[pkg$lik == p$lik & pkg$set == p$set & pkg$split == p$split &
                 pkg$search == "FALSE", ]
    out[[length(out) + 1L]] <- data.frame(
      lik = p$lik, set = p$set, split = p$split, chosen = p$chosen,
      rule_chosen = labels[[cands[pick]]], lpd = p$lpd, lpd_rule = m$lpd[pick],
      lpd_diff = p$lpd - m$lpd[pick], elbo_diff = p$elbo - m$elbo[pick],
      lpd_off = off$lpd, lpd_off_vs_se = off$lpd - m$lpd[1], time = p$time,
      time_off = off$time)
  }
  res <- do.call(rbind, out)
  utils::write.csv(res, file.path("bench", "counts", "results_kernel_search_package.csv"),
                   row.names = FALSE)
  options(width = 200)
  cat("\nPer split: same choice as elbo_pen_1?", sum(res$chosen == res$rule_chosen), "of",
      nrow(res), "\n")
  cat("max |LPD package - LPD elbo_pen_1|:", format(max(abs(res$lpd_diff))),
      "; max |ELBO diff|:", format(max(abs(res$elbo_diff))),
      "; max |LPD kernel_search = FALSE - LPD se|:", format(max(abs(res$lpd_off_vs_se))), "\n")
  print(res[res$chosen != res$rule_chosen | abs(res$lpd_diff) > 1e-6, ], row.names = FALSE)
  agg <- do.call(rbind, lapply(split(res, paste(res$lik, res$set)), function(r) {
    data.frame(lik = r$lik[1], set = r$set[1], splits = nrow(r),
               chosen = paste(names(table(r$chosen)), table(r$chosen), sep = " x", collapse = "; "),
               gain = mean(r$lpd - r$lpd_off), gain_se = stats::sd(r$lpd - r$lpd_off) / sqrt(nrow(r)),
               time_off = mean(r$time_off), time_ratio = sum(r$time) / sum(r$time_off))
  }))
  cat("\nPer set: choices, LPD of the default (auto) minus kernel_search = FALSE (se), fit time\n")
  print(agg, row.names = FALSE, digits = 3)
  cat("\nAll fits: time ratio", format(sum(res$time) / sum(res$time_off), digits = 3), "\n")
}

if (mode == "summary7") {
  dir <- if (length(args) >= 2) args[2] else tempdir()
  add <- do.call(rbind, lapply(list.files(dir, "^kca_.*\\.csv$", full.names = TRUE),
                               utils::read.csv))
  utils::write.csv(add, file.path("bench", "counts", "results_kernel_choice_additive.csv"),
                   row.names = FALSE)
  meas <- rbind(utils::read.csv(file.path("bench", "counts", "results_kernel_choice.csv")),
                utils::read.csv(file.path("bench", "counts", "results_kernel_choice_confirm.csv")))
  key <- function(r) paste(r$lik, r$set, r$split, r$method)
  # the check: this run's default fits and peers are those of the five-candidate run
  a <- add[add$method %in% c("se", "gam", "glm"), ]
  m <- meas[match(key(a), key(meas)), ]
  cat(sprintf("%d default / peer fits matched; max |LPD diff| %g, max |ELBO diff| (se) %g\n",
              sum(!is.na(m$lpd)), max(abs(a$lpd - m$lpd)),
              max(abs(a$elbo - m$elbo), na.rm = TRUE)))
  c5 <- names(candidates(1))
  c7 <- c(c5, "add_se", "lin_add_se")
  c8 <- c(c7, "add_fac_lin")
  se_of <- function(x) if (length(x) > 1) stats::sd(x) / sqrt(length(x)) else NA
  fmt <- function(x) sprintf("%+.3f (%.3f; %d/%d)", mean(x), se_of(x), sum(x >= 0), length(x))
  tabs <- list()
  for (lk in unique(add$lik)) for (st in unique(add$set[add$lik == lk])) {
    r <- rbind(meas[meas$lik == lk & meas$set == st & meas$method %in% c5, ],
               add[add$lik == lk & add$set == st & add$method %in% c(c8[-(1:5)], "gam", "glm"),
                   names(meas)])
    na <- add[add$lik == lk & add$set == st, ]
    splits <- sort(unique(r$split))
    get <- function(mm, col, rr = r) vapply(splits, function(sp) rr[rr$split == sp & rr$method == mm, col], 0)
    best <- pmax(get("gam", "lpd"), get("glm", "lpd"))
    L <- matrix(sapply(c8, get, col = "lpd"), length(splits), dimnames = list(NULL, c8))
    E <- matrix(sapply(c8, get, col = "elbo"), length(splits), dimnames = list(NULL, c8))
    # hyperparameters: 2 isotropic, d + 1 ARD (as the package counts them, kernel_n_hyper();
    # the five-candidate csv predates the npar column), the additive ones from the fit
    d <- r$d[1]
    P <- cbind(matrix(rep(ifelse(grepl("_ard$", c5), d + 1, 2), each = length(splits)),
                      length(splits)),
               get("add_se", "npar", na), get("lin_add_se", "npar", na),
               get("add_fac_lin", "npar", na))
    stopifnot(all(get("se", "npar", na) == 2))
    rule <- function(cs) {
      sc <- E[, cs, drop = FALSE] - P[, match(cs, c8), drop = FALSE]
      g <- sc - sc[, 1] - 1
      g[, 1] <- 0
      k <- max.col(g, "first")
      list(lpd = L[cbind(seq_along(splits), match(cs[k], c8))], pick = cs[k],
           gain = apply(sc - sc[, 1], 1, max))
    }
    r5 <- rule(c5)
    r7 <- rule(c7)
    r8 <- rule(c8)
    orc7 <- apply(L[, c7], 1, max)
    row <- data.frame(lik = lk, set = st, splits = length(splits), d = d,
                      npar_add = paste(unique(P[, 6]), collapse = "/"),
                      npar_lin_add = paste(unique(P[, 7]), collapse = "/"), best_peer = mean(best))
    row$npar_fac_lin <- paste(unique(P[, 8]), collapse = "/")
    for (nm in c("se", "add_se", "lin_add_se", "add_fac_lin")) row[[nm]] <- fmt(L[, nm] - best)
    row$rule5 <- fmt(r5$lpd - best)
    row$rule7 <- fmt(r7$lpd - best)
    row$oracle5 <- fmt(apply(L[, c5], 1, max) - best)
    row$oracle7 <- fmt(orc7 - best)
    row$rule8 <- fmt(r8$lpd - best)
    row$oracle8 <- fmt(apply(L, 1, max) - best)
    tb8 <- table(factor(r8$pick, levels = c8))
    row$chosen8 <- paste(names(tb8)[tb8 > 0], tb8[tb8 > 0], sep = " x", collapse = "; ")
    row$rule7_minus_rule5 <- fmt(r7$lpd - r5$lpd)
    row$rule7_minus_rule5_1_5 <- fmt((r7$lpd - r5$lpd)[splits <= 5])
    row$rule7_minus_rule5_6_15 <- fmt((r7$lpd - r5$lpd)[splits > 5])
    row$differ <- sum(r7$pick != r5$pick)
    tb <- table(factor(r7$pick, levels = c7))
    row$chosen7 <- paste(names(tb)[tb > 0], tb[tb > 0], sep = " x", collapse = "; ")
    row$picks7 <- paste(r7$pick, collapse = ",")
    # how close the choices are: splits whose best penalised gain over the default is
    # within 1 nat of the margin (0 to 2 nats), over the seven candidates
    row$close7 <- sum(r7$gain > 0 & r7$gain <= 2)
    gadd <- pmax(E[, "add_se"] - P[, 6], E[, "lin_add_se"] - P[, 7]) - (E[, "se"] - 2)
    row$add_gain <- sprintf("%.1f [%.1f, %.1f]", stats::median(gadd), min(gadd), max(gadd))
    row$time_se <- mean(get("se", "time", na))
    row$time_add <- sum(get("add_se", "time", na) + get("lin_add_se", "time", na)) /
      sum(get("se", "time", na))
    tabs[[length(tabs) + 1L]] <- row
  }
  tab <- do.call(rbind, tabs)
  options(width = 250)
  cat("\nLPD minus the best peer, 15 splits: mean (se; splits >= 0 / splits)\n")
  print(tab[, c("lik", "set", "d", "npar_add", "npar_lin_add", "se", "rule5", "rule7", "add_se",
                "lin_add_se", "oracle5", "oracle7")], row.names = FALSE)
  cat("\nDiagnostic: add_fac_lin fixed, the rule over all eight, its choices\n")
  print(tab[, c("lik", "set", "npar_fac_lin", "add_fac_lin", "rule8", "oracle8", "chosen8")],
        row.names = FALSE)
  cat("\nRule over 7 minus rule over 5 (all 15; splits 1-5; 6-15), splits where they differ\n")
  print(tab[, c("lik", "set", "rule7_minus_rule5", "rule7_minus_rule5_1_5",
                "rule7_minus_rule5_6_15", "differ")], row.names = FALSE)
  cat("\nRule over 7: choices; splits with the best penalised gain in (0, 2] nats; penalised",
      "gain of the better additive candidate over the default, median [min, max]\n")
  print(tab[, c("lik", "set", "chosen7", "close7", "add_gain")], row.names = FALSE)
  print(tab[, c("lik", "set", "picks7")], row.names = FALSE)
  cat("\nTime: default fit (s, mean); (add_se + lin_add_se fit time) / default\n")
  print(tab[, c("lik", "set", "time_se", "time_add")], row.names = FALSE, digits = 3)
  utils::write.csv(tab, file.path("bench", "counts", "results_kernel_choice_additive_summary.csv"),
                   row.names = FALSE)
}

if (mode == "summaryc") {
  dir <- if (length(args) >= 2) args[2] else tempdir()
  files <- list.files(dir, "^kcc_.*\\.csv$", full.names = TRUE)
  res <- do.call(rbind, lapply(files, utils::read.csv))
  utils::write.csv(res, file.path("bench", "counts", "results_kernel_constant.csv"), row.names = FALSE)
  fmt <- function(x) sprintf("%+.3f (%.3f; %d/%d)", mean(x), stats::sd(x) / sqrt(length(x)),
                             sum(x >= 0), length(x))
  cat("| lik | set | se - best peer | se_const - best peer | se_const - se |\n|---|---|---|---|---|\n")
  for (lk in unique(res$lik)) for (st in unique(res$set[res$lik == lk])) {
    r <- res[res$lik == lk & res$set == st, ]
    splits <- sort(unique(r$split))
    get <- function(m) vapply(splits, function(sp) r$lpd[r$split == sp & r$method == m], 0)
    best <- pmax(get("gam"), get("glm"))
    cat(sprintf("| %s | %s | %s | %s | %s |\n", lk, st, fmt(get("se") - best),
                fmt(get("se_const") - best), fmt(get("se_const") - get("se"))))
  }
}
