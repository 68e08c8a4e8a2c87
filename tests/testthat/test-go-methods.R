sim <- simulate_go_corpus(go_subset$terms, n_authors = 5, n_documents = 30, seed = 31)
fit <- ga0(sim$sentences, sim$authors, go_subset$terms,
                    hierarchy = go_subset$hierarchy, max_iter = 15, threads = 1, seed = 1)

test_that("print, summary, top_terms and plots work on a fit", {
  expect_output(print(fit), "go_annotator")
  sm <- summary(fit)
  expect_s3_class(sm, "summary.go_annotator")
  expect_output(print(sm), "Most frequent terms")
  expect_equal(sum(fit$pi), 1, tolerance = 1e-10)
  tt <- top_terms(fit, "A0001", n = 4)
  expect_equal(nrow(tt), 4)
  expect_true(all(diff(tt$probability) <= 0))
  expect_equal(tt$probability[1], max(coef(fit)["A0001", ]))
  expect_error(top_terms(fit, "nobody"), "`author`")
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  expect_equal(nrow(p$data), fit$iterations)
  p2 <- ggplot2::autoplot(fit, type = "author", author = "A0002", n = 3)
  expect_equal(nrow(p2$data), 3)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  expect_invisible(plot(fit, type = "author"))
})

test_that("predict propagates probabilities to ancestors (true-path rule)", {
  new <- sim$sentences[1:5, ]
  K <- length(fit$go_id)
  flat <- predict(fit, new, sim$authors, top = K, propagate = FALSE, threads = 1)
  prop <- predict(fit, new, sim$authors, top = K, propagate = TRUE, threads = 1)
  # root of the biological-process ontology collects all the mass
  root <- prop[prop$go_id == "GO:0008150", ]
  expect_equal(root$probability, rep(1, 5), tolerance = 1e-6)
  # every parent scores at least as high as each child
  h <- go_subset$hierarchy
  for (s in 1:5) {
    ps <- stats::setNames(prop$probability[prop$sentence == s], prop$go_id[prop$sentence == s])
    pc <- ps[h$child]
    pp <- ps[h$parent]
    ok <- !is.na(pc)
    expect_true(all(!is.na(pp[ok]) & pp[ok] >= pc[ok] - 1e-12))
  }
  # without propagation, probabilities of one sentence sum to one
  expect_equal(sum(flat$probability[flat$sentence == 2]), 1, tolerance = 1e-6)
  expect_error(predict(fit, new, sim$authors, top = 0), "`top`")
})

test_that("read_go_sqlite errors clearly and reads GO.db when installed", {
  expect_error(read_go_sqlite(tempfile()), "`path` must be the path")
  path <- system.file("extdata", "GO.sqlite", package = "GO.db")
  skip_if(!nzchar(path), "GO.db not installed")
  skip_if_not_installed("RSQLite")
  go <- read_go_sqlite(path, ontology = "CC")
  expect_gt(nrow(go$terms), 1000)
  expect_true(all(go$terms$ontology == "CC"))
  expect_true(all(go$hierarchy$child %in% go$terms$go_id))
})

test_that("read_go_sqlite reads terms, links and synonyms from a GO.db-shaped file", {
  skip_if_not_installed("RSQLite")
  skip_if_not_installed("DBI")
  path <- tempfile(fileext = ".sqlite")
  con <- DBI::dbConnect(RSQLite::SQLite(), path)
  DBI::dbWriteTable(con, "go_term", data.frame(
    `_id` = 1:3, go_id = c("GO:0000001", "GO:0000002", "GO:0000003"),
    term = c("cell growth", "growth", "cell division"),
    definition = c("growth of a cell", "increase in size", NA), ontology = "BP",
    check.names = FALSE))
  DBI::dbWriteTable(con, "go_bp_parents", data.frame(
    `_id` = 1L, `_parent_id` = 2L, relationship_type = "is_a", check.names = FALSE))
  DBI::dbWriteTable(con, "go_synonym", data.frame(
    `_id` = c(1L, 1L, 1L, 3L), synonym = c("cellular growth", "GO:0099999", "growth of cell",
                                           "cytokinesis and karyokinesis"),
    like_go_id = c(0L, 1L, 0L, 0L), check.names = FALSE))
  DBI::dbDisconnect(con)
  go <- read_go_sqlite(path, ontology = "BP")
  expect_named(go$terms, c("go_id", "name", "definition", "ontology"))
  expect_identical(go$terms$definition[3], "")
  expect_identical(go$hierarchy$child, "GO:0000001")
  expect_identical(go$hierarchy$parent, "GO:0000002")
  gs <- read_go_sqlite(path, ontology = "BP", synonyms = TRUE)
  # text synonyms joined by " | " (the alternative GO id left out), "" for none
  expect_identical(gs$terms$synonyms, c("cellular growth | growth of cell", "",
                                        "cytokinesis and karyokinesis"))
  expect_error(read_go_sqlite(path, synonyms = NA), "`synonyms` must be TRUE or FALSE")
  # the synonyms are words of their terms in the fit
  fit <- go_annotator(data.frame(document = "d", text = "cytokinesis"),
                      data.frame(document = "d", author = "a"), gs$terms,
                      max_iter = 1, threads = 1, seed = 1)
  expect_identical(fit$assignment, "GO:0000003")
})

test_that("the shipped GO subset is consistent", {
  expect_named(go_subset, c("terms", "hierarchy"))
  expect_false(anyDuplicated(go_subset$terms$go_id) > 0)
  expect_true(all(c(go_subset$hierarchy$child, go_subset$hierarchy$parent) %in%
                    go_subset$terms$go_id))
  expect_gt(nrow(go_subset$terms), 200)
})

test_that("predict() without sentences gives the training sentences' terms", {
  p0 <- predict(fit, top = 3, propagate = FALSE)
  expect_named(p0, c("sentence", "document", "rank", "go_id", "name", "probability"))
  expect_setequal(unique(p0$sentence), seq_len(nrow(sim$sentences)))
  expect_equal(p0$document, sim$sentences$document[p0$sentence])
  # the best term of each sentence is the fit's assignment, with its probability
  top1 <- p0[p0$rank == 1, ]
  expect_identical(top1$go_id, fit$assignment)
  expect_equal(top1$probability, fit$assignment_prob)
  # the same as running the E-step again on the training data (the fit ends with
  # an E-step, so the final profiles and word distributions reproduce it)
  p1 <- predict(fit, sim$sentences, sim$authors, top = 3, propagate = FALSE, threads = 1)
  expect_equal(p0, p1, tolerance = 1e-8)
  # propagation to ancestors applies as for new sentences
  q0 <- predict(fit, top = 4)
  q1 <- predict(fit, sim$sentences, sim$authors, top = 4, threads = 1)
  expect_equal(q0, q1, tolerance = 1e-8)
  # the root collects all the mass
  expect_equal(q0$probability[q0$rank == 1], rep(1, nrow(sim$sentences)), tolerance = 1e-8)
  expect_error(predict(fit, authors = sim$authors), "`authors` and `documents` are only used")
  # no sentences: no rows, same columns
  e <- predict(fit, sim$sentences[0, ], sim$authors, threads = 1)
  expect_equal(nrow(e), 0)
  expect_named(e, names(p0))
})

test_that("assignments are GO ids, with their positions kept", {
  expect_type(fit$assignment, "character")
  expect_true(all(grepl("^GO:[0-9]{7}$", fit$assignment)))
  expect_identical(fit$assignment, fit$go_id[fit$assignment_index])
  expect_type(fit$assignment_index, "integer")
  expect_type(fit$baseline, "character")
  expect_identical(fit$baseline, fit$go_id[fit$baseline_index])
  # planted terms are recovered on most sentences of this easy corpus
  expect_gt(mean(fit$assignment == sim$sentences$go_id), 0.5)
  expect_equal(summary(fit)$changed_from_baseline, mean(fit$assignment != fit$baseline))
})

test_that("coef() gives the author profiles and the term x word counts", {
  th <- coef(fit)
  expect_s4_class(th, "dgCMatrix")
  expect_equal(dim(th), c(5L, length(fit$go_id)))
  expect_identical(colnames(th), fit$go_id)
  expect_setequal(rownames(th), unique(sim$authors$author))
  expect_equal(unname(Matrix::rowSums(th)), rep(1, 5), tolerance = 1e-10)
  expect_identical(coef(fit, type = "profiles"), th)
  tt <- top_terms(fit, "A0003", n = 1)
  expect_equal(tt$go_id, colnames(th)[which.max(th["A0003", ])])
  C <- coef(fit, type = "words")
  expect_s4_class(C, "dgCMatrix")
  expect_identical(dimnames(C), list(fit$go_id, fit$vocabulary))
  expect_true(all(C@x >= 0))
  # definitions plus expected corpus counts: the total is the number of definition
  # tokens (within the vocabulary) plus the number of corpus tokens
  n_def <- sum(lengths(go_tokenize(go_subset$terms$definition)))
  n_corpus <- sum(lengths(go_tokenize(sim$sentences$text)))
  expect_equal(sum(C), n_def + n_corpus, tolerance = 1e-8)
  # phi from the counts reproduces the E-step: log P(s | G) + log P(G | d) normalised
  pc <- fit$pseudocount
  V <- ncol(C)
  logphi <- log(as.matrix(C) + pc) - log(Matrix::rowSums(C) + V * pc)
  s1 <- go_tokenize(sim$sentences$text[1])[[1]]
  d1 <- sim$authors$author[sim$authors$document == sim$sentences$document[1]]
  prior <- Matrix::colMeans(th[d1, , drop = FALSE])
  lp <- log(prior) + rowSums(logphi[, match(s1, colnames(C)), drop = FALSE])
  r <- exp(lp - max(lp))
  r <- r / sum(r)
  expect_equal(unname(r), unname(as.numeric(fit$responsibilities[1, ])), tolerance = 1e-8)
  expect_error(coef(fit, type = "nothing"), "'arg'")
})

test_that("fitted() gives the sentence x term probabilities or the best terms", {
  R <- fitted(fit)
  expect_s4_class(R, "dgCMatrix")
  expect_equal(dim(R), c(nrow(sim$sentences), length(fit$go_id)))
  expect_identical(colnames(R), fit$go_id)
  expect_equal(unname(Matrix::rowSums(R)), rep(1, nrow(R)), tolerance = 1e-10)
  expect_identical(fitted(fit, type = "term"), fit$assignment)
  best <- fit$go_id[apply(as.matrix(R), 1, which.max)]
  expect_identical(best, fit$assignment)
})

test_that("the corpus-wide prior for unknown authors is smoothed by corpus_pseudocount", {
  d <- data.frame(go_id = c("GO:0008150", "GO:1", "GO:2"),
                  name = c("biological_process", "kinase signalling", "phosphatase activity"),
                  definition = c("any process of a cell", "a process of kinase signals",
                                 "a process removing phosphate"))
  s <- data.frame(document = rep(c("d1", "d2"), each = 25), text = "process cell")
  au <- data.frame(document = c("d1", "d2"), author = c("a", "b"))
  f0 <- ga0(s, au, d, corpus_pseudocount = 0, max_iter = 5, threads = 1, seed = 1)
  f1 <- ga0(s, au, d, max_iter = 5, threads = 1, seed = 1)
  expect_equal(f1$corpus_pseudocount, 1)
  S <- nrow(s)
  share <- Matrix::colMeans(fitted(f1))
  expect_equal(unname(f1$share), unname(share), tolerance = 1e-12)
  expect_equal(unname(f1$pi), unname((S * share + 1) / (S + 3)), tolerance = 1e-12)
  expect_equal(sum(f1$pi), 1, tolerance = 1e-12)
  expect_equal(unname(f0$pi), unname(share), tolerance = 1e-12)
  expect_gt(f0$share[["GO:0008150"]], 0.99)
  # a new sentence about kinases by an unknown author: the root wins by its prior
  # alone without smoothing, the kinase term with it
  new <- data.frame(document = "n", text = "kinase")
  expect_identical(predict(f0, new, top = 1, propagate = FALSE, threads = 1)$go_id,
                   "GO:0008150")
  expect_identical(predict(f1, new, top = 1, propagate = FALSE, threads = 1)$go_id, "GO:1")
  expect_error(ga0(s, au, d, corpus_pseudocount = -1),
               "`corpus_pseudocount` must be >= 0")
  expect_identical(summary(f1)$top$go_id[1], "GO:0008150")
})

test_that("definition_weight scales the definition counts in the prior", {
  sim <- simulate_go_corpus(go_subset$terms, n_authors = 3, n_documents = 10, seed = 4)
  f1 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 1,
                     name_weight = 0, threads = 1, seed = 1)
  f5 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 1,
                     name_weight = 0, definition_weight = 5, threads = 1, seed = 1)
  expect_equal(coef(f5, type = "words"), 5 * coef(f1, type = "words"), tolerance = 1e-12)
  # without a background, weight 5 is pseudocount / 5 for the definitions-only model
  f2 <- ga0(sim$sentences, sim$authors, go_subset$terms, max_iter = 1,
                     name_weight = 0, pseudocount = 0.002, threads = 1, seed = 1)
  expect_equal(fitted(f5), fitted(f2), tolerance = 1e-10)
  expect_error(ga0(sim$sentences, sim$authors, go_subset$terms,
                            definition_weight = 0), "`definition_weight` must be > 0")
})
