# Real-text benchmark of the GO annotator: GO's own curated synonyms of
# Biological Process terms, each annotated with its own term among all BP terms.
#
# Rscript bench/go/bench_real.R [n_synonyms] [em_iterations] [configs] [truncate]
#
# Data: GO.db's GO.sqlite (read_go_sqlite(ontology = "BP") for the terms, the
# table go_synonym joined to go_term for the synonyms). Synonyms that are GO ids
# (like_go_id = 1) or equal their own term's name (ignoring case) are left out;
# `n_synonyms` (default 2000) are sampled with a fixed seed. The held-out
# synonyms are never part of the model's input: the model sees, for every BP
# term, its name and definition only.
#
# Scores: rank of the synonym's own term among all BP terms. top-1/5/10 = share of
# synonyms whose term is ranked within the first 1/5/10, MRR = mean reciprocal
# rank. Exact ties count half (the mean rank over the tied terms). Ranks are
# computed from fitted(fit), whose entries below `truncate` (default 1e-6) are zero: a
# true term below it counts as not found (reciprocal rank 0).
#
# Settings (one row each):
#   defs-only   the first E-step (uniform author profile): the definitions and
#               the sentence alone;
#   EM          `em_iterations` (default 20) of soft EM on the synonyms as one
#               document by one author (the issue's setting);
#   TF-IDF      cosine between the tf-idf vectors of the synonym and of each term's
#               words (same tokens and the same name weighting as the model;
#               idf = log(K / df) over the K terms), written here with Matrix.
# `configs` is a semicolon-separated subset of the configuration names below
# (default: all).
suppressPackageStartupMessages({
  library(augmentedGP)
  library(Matrix)
})
# select_configs()
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1])),
                 "real_common.R"))
args <- commandArgs(trailingOnly = TRUE)
n_syn <- if (length(args) >= 1) as.integer(args[1]) else 2000L
em_iter <- if (length(args) >= 2) as.integer(args[2]) else 20L
which_cfg <- if (length(args) >= 3) strsplit(args[3], ";", fixed = TRUE)[[1]] else NULL
trunc <- if (length(args) >= 4) as.numeric(args[4]) else 1e-6
threads <- 2L
path <- system.file("extdata", "GO.sqlite", package = "GO.db")
if (!nzchar(path)) stop("GO.db is not installed.")

go <- read_go_sqlite(path, ontology = "BP")
terms <- go$terms
con <- DBI::dbConnect(RSQLite::SQLite(), path, flags = RSQLite::SQLITE_RO)
syn <- DBI::dbGetQuery(con, paste(
  "SELECT t.go_id AS go_id, t.term AS name, s.synonym AS synonym FROM go_synonym s",
  "JOIN go_term t ON s._id = t._id WHERE t.ontology = 'BP' AND s.like_go_id = 0"))
DBI::dbDisconnect(con)
syn <- syn[!grepl("^GO:[0-9]+$", syn$synonym) & tolower(syn$synonym) != tolower(syn$name) &
             syn$go_id %in% terms$go_id, ]
syn <- syn[order(syn$go_id, syn$synonym), ]
set.seed(20)
held <- syn[sort(sample.int(nrow(syn), n_syn)), ]
rownames(held) <- NULL
truth <- match(held$go_id, terms$go_id)
# a second, disjoint sample: new sentences for predict() after EM on the first
rest <- setdiff(seq_len(nrow(syn)), match(paste(held$go_id, held$synonym),
                                          paste(syn$go_id, syn$synonym)))
held2 <- syn[sort(rest[sample.int(length(rest), n_syn)]), ]
truth2 <- match(held2$go_id, terms$go_id)
new_sent <- data.frame(document = "new", text = held2$synonym)
cat(sprintf("BP terms: %d; usable synonyms: %d; held out: %d (of %d terms)\n",
            nrow(terms), nrow(syn), n_syn, length(unique(held$go_id))))
sentences <- data.frame(document = "synonyms", text = held$synonym)
authors <- data.frame(document = "synonyms", author = "curator")

# Rank statistics from a sentence x term score matrix (dense or sparse rows).
rank_stats <- function(R, truth) {
  S <- nrow(R)
  rk <- numeric(S)
  for (s in seq_len(S)) {
    row <- R[s, ]
    p <- row[truth[s]]
    rk[s] <- if (p <= 0) Inf else 1 + sum(row > p) + (sum(row == p) - 1) / 2
  }
  c(top1 = mean(rk <= 1), top5 = mean(rk <= 5), top10 = mean(rk <= 10), mrr = mean(1 / rk))
}
sparse_rank_stats <- function(R, truth) {
  tr <- Matrix::summary(R)
  p <- numeric(nrow(R))
  hit <- tr$j == truth[tr$i]
  p[tr$i[hit]] <- tr$x[hit]
  gt <- tabulate(tr$i[tr$x > p[tr$i]], nbins = nrow(R))
  eq <- tabulate(tr$i[tr$x == p[tr$i]], nbins = nrow(R))
  rk <- ifelse(p > 0, 1 + gt + (eq - 1) / 2, Inf)
  c(top1 = mean(rk <= 1), top5 = mean(rk <= 5), top10 = mean(rk <= 10), mrr = mean(1 / rk))
}

# TF-IDF cosine on the given term x word and sentence x word count matrices.
tfidf_stats <- function(Tm, Q, truth) {
  K <- nrow(Tm)
  df <- diff(Tm@p) # number of terms per word (columns)
  idf <- ifelse(df > 0, log(K / pmax(df, 1)), 0)
  W <- Tm %*% Diagonal(x = idf)
  W <- Diagonal(x = 1 / pmax(sqrt(rowSums(W^2)), 1e-300)) %*% W
  Qw <- Q %*% Diagonal(x = idf)
  Qw <- Diagonal(x = 1 / pmax(sqrt(rowSums(Qw^2)), 1e-300)) %*% Qw
  out <- NULL
  for (b in split(seq_len(nrow(Q)), ceiling(seq_len(nrow(Q)) / 200))) {
    M <- as.matrix(tcrossprod(Qw[b, , drop = FALSE], W))
    out <- rbind(out, vapply(seq_along(b), function(k) {
      row <- M[k, ]
      p <- row[truth[b[k]]]
      1 + sum(row > p) + (sum(row == p) - 1) / 2
    }, numeric(1)))
  }
  rk <- as.vector(out)
  rk[!is.finite(rk)] <- Inf
  c(top1 = mean(rk <= 1), top5 = mean(rk <= 5), top10 = mean(rk <= 10), mrr = mean(1 / rk))
}

# Count matrix of token lists over a vocabulary, with optional row weights per list.
counts <- function(tok, vocab, weight = 1) {
  j <- match(unlist(tok, use.names = FALSE), vocab)
  i <- rep.int(seq_along(tok), lengths(tok))
  x <- rep.int(rep_len(weight, length(tok)), lengths(tok))
  keep <- !is.na(j)
  sparseMatrix(i = i[keep], j = j[keep], x = x[keep], dims = c(length(tok), length(vocab)))
}

vm_hwm <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
}

# Configurations: how the term texts are given to the model, plus model arguments.
# `defs(terms)` returns the definitions data frame; `args` are passed to
# go_annotator(); `tfidf_terms(tokenizer)` gives the term token lists and
# weights used by the TF-IDF baseline (the same words the model sees).
pasted <- function(terms) data.frame(go_id = terms$go_id, name = terms$name,
                                     definition = paste(terms$name, terms$definition))
raw <- function(terms) terms[, c("go_id", "name", "definition")]
# the synonyms a user would have: every usable BP synonym except the two held-out samples
held_keys <- paste(c(held$go_id, held2$go_id), c(held$synonym, held2$synonym))
known_syn <- syn[!paste(syn$go_id, syn$synonym) %in% held_keys, ]
with_synonyms <- function(terms) {
  d <- raw(terms)
  joined <- tapply(known_syn$synonym, known_syn$go_id, paste, collapse = " | ")
  d$synonyms <- unname(as.character(joined[d$go_id]))
  d$synonyms[is.na(d$synonyms)] <- ""
  d
}
# the seed model's settings (before the real-text changes)
seed_model <- list(background = 0, author_pseudocount = 0, definition_weight = 1,
                   name_weight = 0, normalize = FALSE, stem = FALSE, hierarchy_weight = 0)
with_seed <- function(...) utils::modifyList(seed_model, list(...))
configs <- list(
  # seed model, the user pastes the name into the definition (the issue's setting)
  "seed model, name pasted" = list(defs = pasted, args = with_seed()),
  "seed model, name pasted, stem" = list(defs = pasted, args = with_seed(stem = TRUE)),
  # step 2: names as words, normalisation
  "name_weight 1" = list(defs = raw, args = with_seed(name_weight = 1)),
  "name_weight 2" = list(defs = raw, args = with_seed(name_weight = 2)),
  "name_weight 4" = list(defs = raw, args = with_seed(name_weight = 4)),
  "name_weight 8" = list(defs = raw, args = with_seed(name_weight = 8)),
  "name_weight 4, stem" = list(defs = raw, args = with_seed(name_weight = 4, stem = TRUE)),
  "name_weight 4, normalize" = list(defs = raw, args = with_seed(name_weight = 4,
                                                                 normalize = TRUE)),
  "name_weight 4, stem, normalize" = list(defs = raw, args = with_seed(
    name_weight = 4, stem = TRUE, normalize = TRUE)),
  # step 3: background
  "name_weight 4, background 0.5" = list(defs = raw, args = with_seed(
    name_weight = 4, background = 0.5)),
  # step 4: author prior, definition weight (explicit values; the last are the defaults)
  "nw 4, apc 1" = list(defs = raw, args = with_seed(name_weight = 4, author_pseudocount = 1)),
  "nw 4, apc 10" = list(defs = raw, args = with_seed(name_weight = 4, author_pseudocount = 10)),
  "nw 4, bg 0.5, apc 1" = list(defs = raw, args = with_seed(
    name_weight = 4, background = 0.5, author_pseudocount = 1)),
  "nw 4, bg 0.5, dw 10" = list(defs = raw, args = with_seed(
    name_weight = 4, background = 0.5, definition_weight = 10)),
  "nw 4, bg 0.5, apc 1, dw 10" = list(defs = raw, args = with_seed(
    name_weight = 4, background = 0.5, author_pseudocount = 1, definition_weight = 10)),
  "nw 4, bg 0.5, apc 10, dw 10" = list(defs = raw, args = with_seed(
    name_weight = 4, background = 0.5, author_pseudocount = 10, definition_weight = 10)),
  # package defaults (name_weight 4, normalize, background 0.5, author_pseudocount 1,
  # definition_weight 10, corpus_pseudocount 1, stem, hierarchy_weight 0.3)
  "defaults" = list(defs = raw, args = list()),
  "defaults, stem = FALSE" = list(defs = raw, args = list(stem = FALSE)),
  "defaults, hierarchy_weight = 0" = list(defs = raw, args = list(hierarchy_weight = 0)),
  "defaults, stem = FALSE, hierarchy_weight = 0" = list(defs = raw, args = list(
    stem = FALSE, hierarchy_weight = 0)),
  "defaults, author_pseudocount 10" = list(defs = raw, args = list(author_pseudocount = 10)),
  # the other synonyms of the terms (not the held-out ones) as words
  "defaults, synonyms" = list(defs = with_synonyms, args = list()),
  "defaults, synonyms, synonym_weight 0.5" = list(defs = with_synonyms,
                                                  args = list(synonym_weight = 0.5)),
  "defaults, synonyms, synonym_weight 4" = list(defs = with_synonyms,
                                                args = list(synonym_weight = 4))
)
# every fit gets the GO graph (the package defaults smooth over it; the seed model's
# settings set hierarchy_weight = 0); predictions are scored with propagate = FALSE
configs <- select_configs(configs, which_cfg, raw)

term_tokens <- function(fit, d, args) {
  tk <- fit$tokenizer
  tok <- tk(d$definition)
  out <- list(tok = tok, weight = rep(1, length(tok)), row = seq_along(tok))
  extra <- function(out, col, w) {
    if (is.null(w) || w <= 0 || !col %in% names(d)) return(out)
    etok <- tk(d[[col]])
    list(tok = c(out$tok, etok), weight = c(out$weight, rep(w, length(etok))),
         row = c(out$row, seq_along(etok)))
  }
  out <- extra(out, "name", fit$name_weight)
  extra(out, "synonyms", fit$synonym_weight)
}

rows <- list()
for (cn in names(configs)) {
  cfg <- configs[[cn]]
  d <- cfg$defs(terms)
  call_fit <- function(iters) {
    t0 <- proc.time()[["elapsed"]]
    fit <- do.call(go_annotator, c(list(sentences, authors, d, max_iter = iters, tol = 0,
                                        truncate = trunc, threads = threads, seed = 1,
                                        hierarchy = go$hierarchy),
                                   cfg$args))
    list(fit = fit, sec = proc.time()[["elapsed"]] - t0)
  }
  f1 <- call_fit(1L)
  fE <- if (em_iter > 0) call_fit(em_iter) else NULL
  tt <- term_tokens(f1$fit, d, cfg$args)
  vocab <- f1$fit$vocabulary
  Tm <- counts(tt$tok, vocab, tt$weight)
  if (length(tt$row) > nrow(d)) {
    Tm <- sparseMatrix(i = tt$row[Matrix::summary(Tm)$i], j = Matrix::summary(Tm)$j,
                       x = Matrix::summary(Tm)$x, dims = c(nrow(d), length(vocab)))
  }
  Q <- counts(f1$fit$tokenizer(held$synonym), vocab)
  t0 <- proc.time()[["elapsed"]]
  tf <- tfidf_stats(as(Tm, "CsparseMatrix"), Q, truth)
  tf_sec <- proc.time()[["elapsed"]] - t0
  s1 <- sparse_rank_stats(fitted(f1$fit), truth)
  # predict() on the second sample: defs-only (the uniform profile of f1) and
  # after EM on the first sample with an unknown author (the corpus-wide prior pi)
  pred_stats <- function(fit, au) {
    t0 <- proc.time()[["elapsed"]]
    pr <- predict(fit, new_sent, authors = au, top = 100, propagate = FALSE, threads = threads)
    M <- sparseMatrix(i = pr$sentence, j = match(pr$go_id, fit$go_id), x = pr$probability,
                      dims = c(nrow(new_sent), length(fit$go_id)))
    c(sparse_rank_stats(M, truth2), seconds = proc.time()[["elapsed"]] - t0)
  }
  p1 <- pred_stats(f1$fit, data.frame(document = "new", author = "curator"))
  pE <- if (!is.null(fE)) pred_stats(fE$fit, NULL)
  rows[[cn]] <- rbind(
    data.frame(config = cn, model = "defs-only", t(s1), seconds = f1$sec),
    data.frame(config = cn, model = "new: defs-only", t(p1)),
    if (!is.null(pE)) data.frame(config = cn, model = "new: after EM, unknown author", t(pE)),
    if (!is.null(fE)) {
      data.frame(config = cn, model = sprintf("EM (%d it)", em_iter),
                 t(sparse_rank_stats(fitted(fE$fit), truth)), seconds = fE$sec)
    },
    data.frame(config = cn, model = "TF-IDF", t(tf), seconds = tf_sec))
  print(rows[[cn]], digits = 3, row.names = FALSE)
  cat(sprintf("  vocabulary %d words\n", length(vocab)))
  if (!is.null(fE)) {
    cat(sprintf("  EM objective first/last %.6g / %.6g; background weight %.3f\n",
                fE$fit$objective[1], utils::tail(fE$fit$objective, 1),
                if (is.null(fE$fit$background_weight)) 0 else fE$fit$background_weight))
    if (!is.null(fE$fit$heldout)) {
      cat(sprintf("  author prior count chosen by held-out likelihood: %s\n",
                  paste(signif(fE$fit$author_prior_count, 4), collapse = ", ")))
    }
  }
}
res <- do.call(rbind, rows)
cat("\n| configuration | model | top-1 | top-5 | top-10 | MRR | seconds |\n|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(res))) {
  cat(sprintf("| %s | %s | %.4f | %.4f | %.4f | %.4f | %.1f |\n", res$config[i], res$model[i],
              res$top1[i], res$top5[i], res$top10[i], res$mrr[i], res$seconds[i]))
}
cat(sprintf("\npeak resident memory (VmHWM): %.0f MB\n", vm_hwm()))
