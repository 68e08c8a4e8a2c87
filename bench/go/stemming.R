# Does Snowball stemming (go_annotator(stem = TRUE)) improve GO annotation?
#
# Rscript bench/go/stemming.R [n_seeds] [path/to/GO.sqlite]
#
# Measures the share of sentences whose true GO term is ranked first (top-1) or
# among the first ten (top-10), with and without stemming, on
#   A. corpora simulated from the model over the shipped GO subset
#      (simulate_go_corpus(): sentence words are definition tokens): the
#      training sentences after soft EM, the definitions-only first E-step, and
#      held-out documents (20%) by known authors;
#   B. the same corpora with inflected word forms: every sentence word is, with
#      probability 0.5, replaced by another form of the same word (same Snowball
#      stem, e.g. "regulates" for "regulation") drawn from the words of the GO
#      names and definitions, as authors paraphrase definitions;
#   C. real text: every GO term's name (e.g. "astrocyte differentiation") as a
#      sentence, ranked against all definitions by the definitions-only E-step
#      (no author information); on the shipped subset and, when a GO.sqlite
#      file is given or GO.db is installed, on all biological-process terms.
# Results are written to stdout (markdown tables); see results_stemming.md.
suppressPackageStartupMessages(library(augmentedGP))
stopifnot(requireNamespace("SnowballC", quietly = TRUE))
args <- commandArgs(trailingOnly = TRUE)
n_seeds <- if (length(args) >= 1) as.integer(args[1]) else 5L
go_path <- if (length(args) >= 2) args[2] else system.file("extdata", "GO.sqlite", package = "GO.db")
threads <- 2L
terms <- go_subset$terms

# Share of sentences whose truth is within the first k ranks of a predict() table.
topk <- function(pr, truth, k) {
  hit <- pr$rank <= k & pr$go_id == truth[pr$sentence]
  mean(seq_along(truth) %in% pr$sentence[hit])
}

# Replaces each word, with probability p, by another word with the same stem.
inflect <- function(text, pool, p, seed) {
  set.seed(seed)
  st <- SnowballC::wordStem(pool, language = "english")
  forms <- split(pool, st)
  forms <- forms[lengths(forms) > 1]
  words <- strsplit(text, " ", fixed = TRUE)
  vapply(words, function(w) {
    s <- SnowballC::wordStem(w, language = "english")
    for (i in seq_along(w)) {
      f <- forms[[s[i]]]
      if (!is.null(f) && stats::runif(1) < p) {
        alt <- setdiff(f, w[i])
        w[i] <- alt[sample.int(length(alt), 1)]
      }
    }
    paste(w, collapse = " ")
  }, character(1))
}

# Scores of one corpus with and without stemming.
score_corpus <- function(sim, stem) {
  s <- sim$sentences
  truth <- s$go_id
  fit <- go_annotator(s, sim$authors, terms, stem = stem, threads = threads, seed = 1)
  pr <- predict(fit, top = 10, propagate = FALSE)
  # definitions only: the first E-step (uniform author profiles)
  f1 <- go_annotator(s, sim$authors, terms, stem = stem, max_iter = 1, threads = threads,
                     seed = 1)
  pb <- predict(f1, top = 10, propagate = FALSE)
  # held-out documents by known authors
  docs <- unique(s$document)
  test_docs <- docs[seq(5, length(docs), by = 5)]
  tr <- !s$document %in% test_docs
  ft <- go_annotator(s[tr, ], sim$authors[sim$authors$document %in% s$document[tr], ], terms,
                     stem = stem, threads = threads, seed = 1)
  ph <- predict(ft, s[!tr, ], sim$authors[sim$authors$document %in% test_docs, ], top = 10,
                propagate = FALSE, threads = threads)
  c(train_top1 = topk(pr, truth, 1), train_top10 = topk(pr, truth, 10),
    defs_top1 = topk(pb, truth, 1), defs_top10 = topk(pb, truth, 10),
    heldout_top1 = topk(ph, truth[!tr], 1), heldout_top10 = topk(ph, truth[!tr], 10),
    words = length(fit$vocabulary))
}

settings <- list(
  "3 words/sentence, 30% noise" = list(words_per_sentence = 3, noise = 0.3),
  "8 words/sentence, 20% noise" = list(words_per_sentence = 8, noise = 0.2)
)
pool <- unique(unlist(go_tokenize(c(terms$name, terms$definition))))

fmt_table <- function(res) {
  cols <- c("train_top1", "train_top10", "defs_top1", "defs_top10", "heldout_top1",
            "heldout_top10", "words")
  cat("| corpus | stem | EM top-1 | EM top-10 | definitions-only top-1 | definitions-only top-10 |",
      "held-out top-1 | held-out top-10 | vocabulary |\n")
  cat("|---|---|---|---|---|---|---|---|---|\n")
  for (r in res) {
    v <- r$values[cols]
    cat(sprintf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f |\n", r$corpus,
                r$stem, v[1], v[2], v[3], v[4], v[5], v[6], v[7]))
  }
}

t0 <- proc.time()[["elapsed"]]
res <- list()
for (variant in c("A: definition words", "B: inflected forms")) {
  for (nm in names(settings)) {
    vals <- list(`FALSE` = list(), `TRUE` = list())
    for (seed in seq_len(n_seeds)) {
      sim <- do.call(simulate_go_corpus, c(list(terms, n_authors = 15, n_documents = 150,
                                                sentences_per_document = 10,
                                                terms_per_author = 4, seed = 100 + seed),
                                           settings[[nm]]))
      if (startsWith(variant, "B")) {
        sim$sentences$text <- inflect(sim$sentences$text, pool, 0.5, seed)
      }
      for (stem in c(FALSE, TRUE)) {
        vals[[as.character(stem)]][[seed]] <- score_corpus(sim, stem)
      }
    }
    for (stem in c("FALSE", "TRUE")) {
      res[[length(res) + 1]] <- list(corpus = paste0(variant, ", ", nm),
                                     stem = stem,
                                     values = rowMeans(do.call(cbind, vals[[stem]])))
    }
  }
}
cat(sprintf("## Simulated corpora (mean over %d seeds; 286 GO terms, 1500 sentences)\n\n",
            n_seeds))
fmt_table(res)

# C. GO names as sentences, ranked by the definitions alone.
names_as_queries <- function(tm, stem) {
  s <- data.frame(document = tm$go_id, text = tm$name)
  au <- data.frame(document = tm$go_id, author = "reader")
  f1 <- go_annotator(s, au, tm, stem = stem, max_iter = 1, threads = threads, seed = 1)
  pr <- predict(f1, top = 10, propagate = FALSE)
  c(top1 = topk(pr, tm$go_id, 1), top10 = topk(pr, tm$go_id, 10))
}
cat("\n## GO term names ranked against the definitions (definitions-only E-step)\n\n")
cat("| terms | stem | top-1 | top-10 |\n|---|---|---|---|\n")
sets <- list("shipped subset (286 BP terms)" = terms)
if (nzchar(go_path) && file.exists(go_path) && requireNamespace("RSQLite", quietly = TRUE)) {
  bp <- read_go_sqlite(go_path, ontology = "BP")$terms
  bp <- bp[nzchar(bp$definition), ]
  sets[[sprintf("all BP terms with a definition (%d)", nrow(bp))]] <- bp
} else {
  cat("<!-- GO.sqlite not available: whole-ontology rows not computed -->\n")
}
for (nm in names(sets)) {
  for (stem in c(FALSE, TRUE)) {
    v <- names_as_queries(sets[[nm]], stem)
    cat(sprintf("| %s | %s | %.3f | %.3f |\n", nm, stem, v[["top1"]], v[["top10"]]))
  }
}
cat(sprintf("\nTotal time %.0f s\n", proc.time()[["elapsed"]] - t0))
