# Real text in a realistic corpus: authors write about a few related GO terms,
# every sentence is one of GO's own curated synonyms of one of their terms.
#
# Rscript bench/go/bench_real_corpus.R [n_authors] [em_iterations] [truncate] [configs]
#
# Data: GO.db's GO.sqlite (BP terms and synonyms as in bench_real.R: GO ids and
# synonyms equal to their own term's name left out). The model sees the names and
# definitions of all 28,140 BP terms, never the synonyms.
# Corpus (fixed seed): every author gets a parent term with at least 5 children
# (is_a or part_of links) that have at least 2 synonyms each, and 5 of those children as
# profile; each author has 3 documents of 6 sentences; a document has a co-author
# with probability 0.3 (another author, listed on the document); every sentence picks
# one of the document's authors, one of that author's 5 terms, and one of the term's
# synonyms. The truth is that term.
# Scores as in bench_real.R (top-1/5/10, MRR of the true term among all BP terms) for
#   defs-only  the first E-step (uniform profiles);
#   EM         soft EM (`em_iterations`, default 20) on the corpus;
#   held-out   every fifth document left out of EM and annotated by predict() with
#              its known authors;
#   TF-IDF     cosine on the same tokens.
suppressPackageStartupMessages({
  library(augmentedGP)
  library(Matrix)
})
# select_configs()
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1])),
                 "real_common.R"))
args <- commandArgs(trailingOnly = TRUE)
n_auth <- if (length(args) >= 1) as.integer(args[1]) else 200L
em_iter <- if (length(args) >= 2) as.integer(args[2]) else 20L
trunc <- if (length(args) >= 3) as.numeric(args[3]) else 1e-4
which_cfg <- if (length(args) >= 4) strsplit(args[4], ";", fixed = TRUE)[[1]] else NULL
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
by_term <- split(syn$synonym, syn$go_id)
ok_terms <- names(by_term)[lengths(by_term) >= 2]
h <- go$hierarchy
h <- h[h$relationship %in% c("isa", "part of") & h$child %in% ok_terms, ]
kids <- lapply(split(h$child, h$parent), unique)
kids <- kids[lengths(kids) >= 5]

set.seed(21)
parents <- names(kids)[sample.int(length(kids), n_auth, replace = TRUE)]
profiles <- lapply(parents, function(p) sample(kids[[p]], 5))
auth_ids <- sprintf("A%04d", seq_len(n_auth))
docs <- list()
authors <- list()
k <- 0
for (a in seq_len(n_auth)) {
  for (j in 1:3) {
    k <- k + 1
    did <- sprintf("D%05d", k)
    co <- if (stats::runif(1) < 0.3) sample(setdiff(seq_len(n_auth), a), 1) else integer()
    who <- c(a, co)
    authors[[k]] <- data.frame(document = did, author = auth_ids[who])
    sa <- who[sample.int(length(who), 6, replace = TRUE)]
    g <- vapply(sa, function(x) sample(profiles[[x]], 1), "")
    txt <- vapply(g, function(t) {
      s <- by_term[[t]]
      s[sample.int(length(s), 1)]
    }, "")
    docs[[k]] <- data.frame(document = did, text = unname(txt), go_id = unname(g))
  }
}
sent <- do.call(rbind, docs)
authors <- do.call(rbind, authors)
truth <- match(sent$go_id, terms$go_id)
cat(sprintf("corpus: %d authors, %d documents, %d sentences, %d distinct terms\n", n_auth,
            length(docs), nrow(sent), length(unique(sent$go_id))))

rank_stats <- function(R, truth) {
  tr <- Matrix::summary(R)
  p <- numeric(nrow(R))
  hit <- tr$j == truth[tr$i]
  p[tr$i[hit]] <- tr$x[hit]
  gt <- tabulate(tr$i[tr$x > p[tr$i]], nbins = nrow(R))
  eq <- tabulate(tr$i[tr$x == p[tr$i]], nbins = nrow(R))
  rk <- ifelse(p > 0, 1 + gt + (eq - 1) / 2, Inf)
  c(top1 = mean(rk <= 1), top5 = mean(rk <= 5), top10 = mean(rk <= 10), mrr = mean(1 / rk))
}
tfidf_stats <- function(Tm, Q, truth) {
  K <- nrow(Tm)
  df <- diff(Tm@p)
  idf <- ifelse(df > 0, log(K / pmax(df, 1)), 0)
  W <- Tm %*% Diagonal(x = idf)
  W <- Diagonal(x = 1 / pmax(sqrt(rowSums(W^2)), 1e-300)) %*% W
  Qw <- Q %*% Diagonal(x = idf)
  Qw <- Diagonal(x = 1 / pmax(sqrt(rowSums(Qw^2)), 1e-300)) %*% Qw
  rk <- numeric(0)
  for (b in split(seq_len(nrow(Q)), ceiling(seq_len(nrow(Q)) / 200))) {
    M <- as.matrix(tcrossprod(Qw[b, , drop = FALSE], W))
    rk <- c(rk, vapply(seq_along(b), function(k) {
      row <- M[k, ]
      p <- row[truth[b[k]]]
      1 + sum(row > p) + (sum(row == p) - 1) / 2
    }, numeric(1)))
  }
  c(top1 = mean(rk <= 1), top5 = mean(rk <= 5), top10 = mean(rk <= 10), mrr = mean(1 / rk))
}
counts <- function(tok, vocab, weight = 1) {
  j <- match(unlist(tok, use.names = FALSE), vocab)
  i <- rep.int(seq_along(tok), lengths(tok))
  x <- rep.int(rep_len(weight, length(tok)), lengths(tok))
  keep <- !is.na(j)
  sparseMatrix(i = i[keep], j = j[keep], x = x[keep], dims = c(length(tok), length(vocab)))
}

pasted <- data.frame(go_id = terms$go_id, name = terms$name,
                     definition = paste(terms$name, terms$definition))
raw <- terms[, c("go_id", "name", "definition")]
seed_model <- list(background = 0, author_pseudocount = 0, definition_weight = 1,
                   name_weight = 0, normalize = FALSE, stem = FALSE, hierarchy_weight = 0)
configs <- list(
  "seed model, name pasted" = list(defs = pasted, args = seed_model),
  "defaults" = list(defs = raw, args = list()),
  "defaults, stem = FALSE" = list(defs = raw, args = list(stem = FALSE)),
  "defaults, hierarchy_weight = 0" = list(defs = raw, args = list(hierarchy_weight = 0)),
  "defaults, stem = FALSE, hierarchy_weight = 0" = list(defs = raw, args = list(
    stem = FALSE, hierarchy_weight = 0)),
  "defaults, author_pseudocount 10" = list(defs = raw, args = list(author_pseudocount = 10))
)
# every fit gets the GO graph (the package defaults smooth over it; the seed model's
# settings set hierarchy_weight = 0); predictions are scored with propagate = FALSE
configs <- select_configs(configs, which_cfg, raw)
docs_all <- unique(sent$document)
test_docs <- docs_all[seq(5, length(docs_all), by = 5)]
tr <- !sent$document %in% test_docs
rows <- list()
for (cn in names(configs)) {
  cfg <- configs[[cn]]
  fit_it <- function(s, au, iters) {
    t0 <- proc.time()[["elapsed"]]
    f <- do.call(go_annotator, c(list(s[, c("document", "text")], au, cfg$defs,
                                      max_iter = iters, tol = 0, truncate = trunc,
                                      threads = threads, seed = 1, hierarchy = go$hierarchy),
                                 cfg$args))
    list(fit = f, sec = proc.time()[["elapsed"]] - t0)
  }
  f1 <- fit_it(sent, authors, 1L)
  fE <- fit_it(sent, authors, em_iter)
  fT <- fit_it(sent[tr, ], authors[authors$document %in% sent$document[tr], ], em_iter)
  pr <- predict(fT$fit, sent[!tr, c("document", "text")],
                authors[authors$document %in% test_docs, ], top = 100, propagate = FALSE,
                threads = threads)
  Mh <- sparseMatrix(i = pr$sentence, j = match(pr$go_id, fT$fit$go_id), x = pr$probability,
                     dims = c(sum(!tr), nrow(terms)))
  # held-out sentences, definitions only (uniform profile of a max_iter = 1 fit)
  f1T <- fit_it(sent[tr, ], authors[authors$document %in% sent$document[tr], ], 1L)
  pr1 <- predict(f1T$fit, sent[!tr, c("document", "text")],
                 authors[authors$document %in% test_docs, ], top = 100, propagate = FALSE,
                 threads = threads)
  M1 <- sparseMatrix(i = pr1$sentence, j = match(pr1$go_id, f1T$fit$go_id),
                     x = pr1$probability, dims = c(sum(!tr), nrow(terms)))
  tk <- f1$fit$tokenizer
  nw <- f1$fit$name_weight
  vocab <- f1$fit$vocabulary
  Tm <- counts(tk(cfg$defs$definition), vocab)
  if (!is.null(nw) && nw > 0) Tm <- Tm + nw * counts(tk(cfg$defs$name), vocab)
  Tm <- as(Tm, "CsparseMatrix")
  tf <- tfidf_stats(Tm, counts(tk(sent$text), vocab), truth)
  rows[[cn]] <- rbind(
    data.frame(config = cn, model = "defs-only", t(rank_stats(fitted(f1$fit), truth)),
               seconds = f1$sec),
    data.frame(config = cn, model = sprintf("EM (%d it)", em_iter),
               t(rank_stats(fitted(fE$fit), truth)), seconds = fE$sec),
    data.frame(config = cn, model = "TF-IDF", t(tf), seconds = NA),
    data.frame(config = cn, model = "held-out docs: defs-only", t(rank_stats(M1, truth[!tr])),
               seconds = NA),
    data.frame(config = cn, model = "held-out docs: EM + known authors",
               t(rank_stats(Mh, truth[!tr])), seconds = fT$sec))
  print(rows[[cn]], digits = 3, row.names = FALSE)
  if (!is.null(fE$fit$heldout)) {
    q <- stats::quantile(fE$fit$author_prior_count, c(0, 0.1, 0.25, 0.5, 0.75, 0.9, 1))
    cat("  author prior counts chosen by held-out likelihood (quantiles 0, .1, .25, .5, .75,",
        ".9, 1):", paste(signif(q, 3), collapse = " "), "\n")
  }
}
res <- do.call(rbind, rows)
cat("\n| configuration | model | top-1 | top-5 | top-10 | MRR | seconds |\n|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(res))) {
  cat(sprintf("| %s | %s | %.4f | %.4f | %.4f | %.4f | %s |\n", res$config[i], res$model[i],
              res$top1[i], res$top5[i], res$top10[i], res$mrr[i],
              if (is.na(res$seconds[i])) "" else sprintf("%.1f", res$seconds[i])))
}
st <- readLines("/proc/self/status")
cat(sprintf("\npeak resident memory (VmHWM): %s\n", sub("VmHWM:\\s*", "", st[grepl("^VmHWM", st)])))
