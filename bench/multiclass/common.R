# Shared by bench_multiclass.R and vs_ranger.R (sourced from the package root): scoring of
# class-probability matrices and the random train/test splits of the multi-class sets.

# Probabilities clipped at 1e-9 and renormalised (so that a log loss stays finite).
clip <- function(P) { P <- pmin(pmax(P, 1e-9), 1); P / rowSums(P) }
# Test error (ties to the first class) and mean log loss of the n x K probabilities P
# (columns named by the classes) for the factor y.
scores <- function(P, y) {
  P <- clip(as.matrix(P)[, levels(y), drop = FALSE])
  c(error = mean(levels(y)[max.col(P, ties.method = "first")] != y),
    logloss = -mean(log(P[cbind(seq_along(y), as.integer(y))])))
}
# Numeric inputs without constant columns, and the response as a factor.
prep <- function(x, y) {
  x <- as.data.frame(lapply(as.data.frame(x), as.double))
  keep <- vapply(x, stats::sd, 0) > 0
  list(x = x[, keep, drop = FALSE], y = droplevels(factor(y)))
}
# A random split of n_train training and up to n_test test rows (seeded); test rows of a
# class unseen in training are dropped (they cannot be scored).
split_sets <- function(d, n_train, n_test, seed) {
  set.seed(seed)
  idx <- sample(nrow(d$x))
  tr <- idx[seq_len(n_train)]
  te <- setdiff(idx, tr)[seq_len(min(n_test, nrow(d$x) - n_train))]
  ytr <- droplevels(d$y[tr])
  te <- te[d$y[te] %in% levels(ytr)]
  list(xtr = d$x[tr, , drop = FALSE], ytr = ytr, xte = d$x[te, , drop = FALSE],
       yte = factor(as.character(d$y[te]), levels = levels(ytr)))
}
# The multi-class sets with their split sizes and number of random splits; letters with
# letter_n training (and test) rows.
multiclass_sets <- function(letter_n = 2000) {
  sets <- list()
  sets[["iris"]] <- list(d = prep(iris[1:4], iris$Species), n_train = 100, n_test = 50, splits = 20)
  fgl <- MASS::fgl
  sets[["fgl"]] <- list(d = prep(fgl[1:9], fgl$type), n_train = 150, n_test = 64, splits = 20)
  data("Vehicle", package = "mlbench", envir = environment())
  sets[["Vehicle"]] <- list(d = prep(Vehicle[1:18], Vehicle$Class), n_train = 600, n_test = 246,
                            splits = 5)
  data("LetterRecognition", package = "mlbench", envir = environment())
  sets[[sprintf("Letter-%d", letter_n)]] <- list(
    d = prep(LetterRecognition[-1], LetterRecognition$lettr), n_train = letter_n,
    n_test = letter_n, splits = 1)
  sets
}

# mlbench's Vowel (11 classes, 9 inputs; the speaker column dropped) split as in accuracy.R:
# 528 training rows drawn with seed 1, the other 462 for testing. A list of one split.
vowel_split <- function() {
  e <- new.env()
  utils::data("Vowel", package = "mlbench", envir = e)
  V <- e$Vowel
  V$V1 <- NULL
  set.seed(1)
  tr <- sort(sample(nrow(V), 528))
  x <- as.data.frame(lapply(V[-ncol(V)], as.double))
  list(list(xtr = x[tr, ], ytr = V$Class[tr], xte = x[-tr, ], yte = V$Class[-tr]))
}
# The splits of a named set as the accuracy scripts use them: the one Vowel split, or the
# first min(splits of the set, max_splits) random splits of a set of multiclass_sets().
set_splits <- function(set_name, max_splits) {
  if (set_name == "Vowel") return(vowel_split())
  st <- multiclass_sets(2000)[[set_name]]
  lapply(seq_len(min(st$splits, max_splits)), function(s) split_sets(st$d, st$n_train, st$n_test, s))
}
# mlbench::Satellite's standard split: the first 4435 rows train, the last 2000 test.
satellite_split <- function() {
  e <- new.env()
  utils::data("Satellite", package = "mlbench", envir = e)
  list(train = e$Satellite[1:4435, ], test = e$Satellite[-(1:4435), ])
}
