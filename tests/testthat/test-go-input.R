sim <- simulate_go_corpus(go_subset$terms, n_authors = 4, n_documents = 12,
                          sentences_per_document = 4, seed = 21)
defs <- go_subset$terms[1:60, ]
fit_q <- function(...) ga0(..., max_iter = 3, threads = 1, seed = 1)

test_that("sentences without known words, long sentences and ties behave", {
  s <- sim$sentences
  s$text[1] <- ""
  s$text[2] <- "zzzz qqqq"  # only unknown-to-definitions words (they join the vocabulary)
  s$text[3] <- paste(rep(strsplit(go_subset$terms$definition[5], " ")[[1]], 400),
                     collapse = " ")
  fit <- ga0(s, sim$authors, go_subset$terms, max_iter = 10, threads = 1, seed = 1)
  expect_true(all(is.finite(fit$objective)))
  expect_false(anyNA(fit$responsibilities@x))
  expect_equal(unname(Matrix::rowSums(fit$responsibilities)), rep(1, nrow(s)),
               tolerance = 1e-10)
  # an empty sentence gets the document's prior P(G | d)
  d1 <- sim$authors$author[sim$authors$document == s$document[1]]
  prior <- Matrix::colMeans(coef(fit)[d1, , drop = FALSE])
  # (the fit stops after an E-step, so responsibilities match the final theta)
  expect_equal(unname(fit$responsibilities[1, ]), unname(prior), tolerance = 1e-10)
  # the very long sentence is confidently assigned to a term, no underflow
  expect_gt(fit$assignment_prob[3], 0.99)

  # exact ties: with uniform profiles, empty sentences tie across all terms;
  # the winner must not be the first term (no index-0 bias) and must vary
  e <- data.frame(document = rep(c("x", "y"), each = 100), text = "")
  au <- data.frame(document = c("x", "y"), author = c("p", "q"))
  f1 <- ga0(e, au, go_subset$terms, max_iter = 1, threads = 1, seed = 1)
  expect_lt(mean(f1$assignment_index == 1), 0.05)
  expect_gt(length(unique(f1$assignment)), 50)
  f2 <- ga0(e, au, go_subset$terms, max_iter = 1, threads = 1, seed = 2)
  expect_false(identical(f1$assignment, f2$assignment))
  # two terms with identical definitions split the responsibility evenly
  d2 <- go_subset$terms[1:10, ]
  d2$definition[2] <- d2$definition[1]
  words <- paste(go_tokenize(d2$definition[1])[[1]], collapse = " ")
  s2 <- data.frame(document = rep("z", 40), text = words)
  f3 <- ga0(s2, data.frame(document = "z", author = "r"), d2, max_iter = 1,
                     threads = 1, seed = 1)
  r <- as.matrix(f3$responsibilities)
  expect_equal(r[, 1], r[, 2])
  expect_true(all(f3$assignment_index %in% c(1, 2)))
  expect_true(any(f3$assignment_index == 1) || length(unique(f3$assignment)) == 1)
})

test_that("bad inputs give clear errors naming the argument", {
  s <- sim$sentences
  a <- sim$authors
  expect_error(fit_q(s, a[a$document != s$document[1], ], defs), "`authors`.*no author")
  s_unknown <- rbind(s, data.frame(document = "nowhere", text = "cell", go_id = NA))
  expect_error(fit_q(s_unknown, a, defs), "`authors`.*nowhere")
  expect_error(fit_q(s, a, defs[0, ]), "`definitions` has no rows")
  expect_error(fit_q(s, a, rbind(defs, defs[1, ])), "`definitions` has duplicated GO ids")
  expect_error(fit_q(s, rbind(a, a[1, ]), defs), "`authors` has duplicated")
  s_na <- s
  s_na$document[2] <- NA
  expect_error(fit_q(s_na, a, defs), "`sentences\\$document` must not contain NA")
  s_na <- s
  s_na$text[2] <- NA
  expect_error(fit_q(s_na, a, defs), "`sentences\\$text` must not contain NA")
  a_na <- a
  a_na$author[1] <- NA
  expect_error(fit_q(s, a_na, defs), "`authors\\$author` must not contain NA")
  d_na <- defs
  d_na$go_id[3] <- NA
  expect_error(fit_q(s, a, d_na), "`definitions\\$go_id` must not contain NA")
  expect_error(fit_q(s$text, a, defs), "`sentences` must be a data frame or a Matrix")
  expect_error(fit_q(s, as.matrix(a), defs), "`authors` must be a data frame")
  expect_error(fit_q(s, a, "GO:1"), "`definitions` must be a data frame or a Matrix")
  expect_error(fit_q(s[, c("document", "go_id")], a, defs), "`sentences` must have column")
  s_num <- s
  s_num$text <- seq_len(nrow(s))
  expect_error(fit_q(s_num, a, defs), "`sentences\\$text` must be character")
  expect_error(fit_q(s, a, defs, pseudocount = 0), "`pseudocount` must be >")
  expect_error(fit_q(s, a, defs, pseudocount = NA), "`pseudocount`")
  expect_error(ga0(s, a, defs, max_iter = 0), "`max_iter`")
  expect_error(fit_q(s, a, defs, truncate = 1), "`truncate`")
  expect_error(fit_q(s, a, defs, em = "medium"), "'arg'")
  expect_error(fit_q(s, a, defs, tokenizer = function(x) x), "`tokenizer` must return")
  expect_error(ga0(s, a, defs, threads = 0), "`threads`")
  X <- Matrix::sparseMatrix(i = 1:3, j = 1:3, x = 1, dims = c(3, 3),
                            dimnames = list(NULL, c("cell", "dna", "repair")))
  expect_error(fit_q(X, a, defs), "`documents` must give")
  expect_error(fit_q(X, a, defs, documents = a$document[1:2]), "`documents` must have one")
  Xneg <- X
  Xneg@x[1] <- -1
  expect_error(fit_q(Xneg, a, defs, documents = a$document[1:3]), "non-negative")
  # empty definitions: kept, documented (learnt from the corpus alone)
  d_empty <- defs
  d_empty$definition[1:5] <- ""
  expect_s3_class(fit_q(s, a, d_empty), "go_annotator")
  expect_error(fit_q(data.frame(document = "d", text = ""), data.frame(document = "d", author = "a"),
                     data.frame(go_id = "GO:1", definition = "")), "no words")
})

test_that("matrix and data frame inputs give the same fit", {
  f1 <- fit_q(sim$sentences, sim$authors, defs)
  tok <- go_tokenize(sim$sentences$text)
  vocab <- sort(unique(c(unlist(tok), unlist(go_tokenize(defs$definition)))))
  mk <- function(tk) {
    j <- match(unlist(tk), vocab)
    Matrix::sparseMatrix(i = rep(seq_along(tk), lengths(tk)), j = j, x = 1,
                         dims = c(length(tk), length(vocab)), dimnames = list(NULL, vocab))
  }
  X <- mk(tok)
  O <- mk(go_tokenize(defs$definition))
  rownames(O) <- defs$go_id
  f2 <- fit_q(X, sim$authors, O, documents = sim$sentences$document)
  expect_equal(f1$objective, f2$objective, tolerance = 1e-12)
  expect_equal(as.matrix(coef(f1)), as.matrix(coef(f2)), tolerance = 1e-12)
})

test_that("text that is not valid UTF-8 is an error naming the argument", {
  s <- sim$sentences
  a <- sim$authors
  bad <- "caf\xe9 de la cellule"
  Encoding(bad) <- "UTF-8"          # latin1 bytes wrongly declared as UTF-8
  s_bad <- s
  s_bad$text[3] <- bad
  expect_error(fit_q(s_bad, a, defs), "`sentences\\$text` is not valid UTF-8.*element 3.*caf<e9>")
  expect_error(fit_q(s_bad, a, defs), "iconv")
  d_bad <- defs
  d_bad$definition[2] <- bad
  expect_error(fit_q(s, a, d_bad), "`definitions\\$definition` is not valid UTF-8.*element 2")
  d_bad <- defs
  d_bad$name[4] <- bad
  expect_error(fit_q(s, a, d_bad), "`definitions\\$name` is not valid UTF-8")
  expect_error(go_tokenize(c("fine", bad)), "`text` is not valid UTF-8.*element 2")
  by <- "caf\xe9"
  Encoding(by) <- "bytes"
  expect_error(go_tokenize(c("a", by, "b")), "`text` is not valid UTF-8")
  fit <- fit_q(s, a, defs)
  expect_error(predict(fit, s_bad, a, threads = 1), "`sentences\\$text` is not valid UTF-8")
  expect_error(simulate_go_corpus(d_bad <- within(defs, definition[1] <- bad), seed = 1),
               "`definitions\\$definition` is not valid UTF-8")
  # the documented conversion gives the intended word
  fixed <- iconv("caf\xe9 de la cellule", from = "latin1", to = "UTF-8")
  expect_identical(go_tokenize(fixed)[[1]], c("café", "de", "la", "cellule"))
})

test_that("declared latin1 text is converted, letters outside ASCII are kept", {
  lat <- "caf\xe9 cellule"
  Encoding(lat) <- "latin1"
  tok <- go_tokenize(lat)[[1]]
  expect_identical(tok, c("café", "cellule"))
  expect_identical(Encoding(tok[1]), "UTF-8")
  # the same word whether given as latin1 or UTF-8
  expect_identical(go_tokenize(enc2utf8(lat)), go_tokenize(lat))
  s <- sim$sentences
  s$text[1] <- lat
  fit <- fit_q(s, sim$authors, defs)
  expect_true("café" %in% fit$vocabulary)
  expect_true(all(is.finite(fit$objective)))
  # Greek letters and digits are word characters; hyphens split
  expect_identical(go_tokenize("TGF-\u03b2\u03b2 and IL-12")[[1]], c("tgf", "\u03b2\u03b2", "il", "12"))
  expect_identical(go_tokenize(character()), list())
  expect_identical(go_tokenize(NA_character_), list(character()))
})

test_that("empty inputs and out-of-range seeds are errors naming the argument", {
  s <- sim$sentences
  a <- sim$authors
  expect_error(fit_q(s[0, ], a, defs), "`sentences` has no rows")
  expect_error(fit_q(s[0, ], a[0, ], defs), "`sentences` has no rows")
  X0 <- Matrix::sparseMatrix(i = integer(), j = integer(), x = double(), dims = c(0, 2),
                             dimnames = list(NULL, c("cell", "dna")))
  expect_error(fit_q(X0, a, defs, documents = character()), "`sentences` has no rows")
  expect_error(fit_q(s, a[0, ], defs), "`authors` lists no author")
  s_empty <- s
  s_empty$text <- ""
  # empty strings are sentences without words: allowed, they get the prior
  expect_s3_class(fit_q(s_empty, a, defs), "go_annotator")
  s_na <- s
  s_na$text[4] <- NA
  expect_error(fit_q(s_na, a, defs), "`sentences\\$text` must not contain NA")
  d_na <- defs
  d_na$definition[5] <- NA
  expect_error(fit_q(s, a, d_na), "`definitions\\$definition` must not contain NA")
  for (seed in list(1e10, -3e9, NA_real_, Inf, c(1, 2), "1")) {
    expect_error(ga0(s, a, defs, max_iter = 1, threads = 1, seed = seed),
                 "`seed` must be NULL or a single number between")
  }
  expect_error(simulate_go_corpus(defs, seed = 2^31), "`seed` must be NULL or a single number")
  expect_s3_class(ga0(s, a, defs, max_iter = 1, threads = 1,
                               seed = .Machine$integer.max), "go_annotator")
  expect_error(simulate_go_corpus(defs, n_documents = 0), "`n_documents`")
})

test_that("stemming is an option of the tokenizer and of the fit", {
  skip_if_not_installed("SnowballC")
  tok <- go_tokenize("Astrocytes differentiate; the astrocyte differentiation regulates.",
                     stem = TRUE)[[1]]
  expect_identical(tok, c("astrocyt", "differenti", "astrocyt", "differenti", "regul"))
  expect_identical(go_tokenize("the regulation", stem = FALSE)[[1]], "regulation")
  expect_error(go_tokenize("x", stem = NA), "`stem` must be TRUE or FALSE")
  s <- sim$sentences
  a <- sim$authors
  f0 <- fit_q(s, a, defs)
  f1 <- fit_q(s, a, defs, stem = TRUE)
  expect_true(f1$stem)
  expect_false(f0$stem)
  # the package default stems text, and quietly leaves count matrices as they are
  expect_true(go_annotator(s, a, defs, max_iter = 1, threads = 1, seed = 1)$stem)
  Xs <- Matrix::sparseMatrix(i = 1, j = 1, x = 1, dims = c(1, 1), dimnames = list(NULL, "cell"))
  Os <- Matrix::sparseMatrix(i = 1, j = 1, x = 1, dims = c(1, 1),
                             dimnames = list("GO:0000001", "cell"))
  fm <- go_annotator(Xs, data.frame(document = "d", author = "x"), Os, documents = "d",
                     max_iter = 1, threads = 1, seed = 1)
  expect_false(fm$stem)
  expect_error(go_annotator(Xs, data.frame(document = "d", author = "x"), Os, documents = "d",
                            stem = TRUE), "`stem = TRUE` applies to text")
  expect_lt(length(f1$vocabulary), length(f0$vocabulary))
  expect_true("regul" %in% f1$vocabulary || "process" %in% f1$vocabulary)
  expect_false(any(c("regulation", "processes") %in% f1$vocabulary))
  expect_output(print(f1), "Snowball stems")
  # predict() stems new text like the training text: inflected forms of a word
  # get the same predictions with stemming, not without
  new <- data.frame(document = c("n1", "n2"), text = c("phosphorylated", "phosphorylation"))
  p1 <- predict(f1, new, top = 3, threads = 1)
  expect_equal(p1$go_id[p1$sentence == 1], p1$go_id[p1$sentence == 2])
  expect_equal(p1$probability[p1$sentence == 1], p1$probability[p1$sentence == 2])
  p0 <- predict(f0, new, top = 3, threads = 1)
  expect_false(isTRUE(all.equal(p0$probability[p0$sentence == 1],
                                p0$probability[p0$sentence == 2])))
  # a custom tokenizer is stemmed too
  f2 <- fit_q(s, a, defs, stem = TRUE, tokenizer = function(x) go_tokenize(x, min_length = 3))
  expect_true(all(f2$vocabulary %in% f1$vocabulary))
  X <- Matrix::sparseMatrix(i = 1:3, j = 1:3, x = 1, dims = c(3, 3),
                            dimnames = list(NULL, c("cell", "dna", "repair")))
  expect_error(fit_q(X, a, defs, documents = a$document[1:3], stem = TRUE),
               "`stem = TRUE` applies to text")
})

test_that("stem = TRUE without SnowballC says to install it", {
  # pretend SnowballC is missing (local_mocked_bindings() needs testthat >= 3.1.7)
  if (exists("local_mocked_bindings", asNamespace("testthat"))) {
    get("local_mocked_bindings", asNamespace("testthat"))(go_has_snowball = function() FALSE)
  } else {
    ns <- asNamespace("augmentedGP")
    old <- get("go_has_snowball", ns)
    unlockBinding("go_has_snowball", ns)
    assign("go_has_snowball", function() FALSE, ns)
    withr::defer({
      assign("go_has_snowball", old, ns)
      lockBinding("go_has_snowball", ns)
    })
  }
  expect_error(go_tokenize("cells", stem = TRUE), "needs the package SnowballC.*install.packages")
  expect_error(fit_q(sim$sentences, sim$authors, defs, stem = TRUE), "needs the package SnowballC")
})

test_that("normalisation spells out Greek letters, closes compounds and maps numerals", {
  x <- c("TNF-\u03b1 up-regulation of NF-\u03baB", "type II interferon; IL-1 \u2013 H3-K79",
         NA, "")
  n <- go_normalize_text(x)
  expect_identical(n[1], "TNF-alpha TNFalpha up-regulation upregulation of NF-kappaB NFkappaB")
  expect_identical(n[2], "type 2 interferon; IL-1 IL1 - H3-K79 H3K79")
  expect_true(is.na(n[3]))
  expect_identical(n[4], "")
  expect_identical(go_normalize_text("\u0392-cell"), "beta-cell betacell")
  tok <- go_tokenize("interleukin-1 production, type IV", normalize = TRUE)[[1]]
  expect_identical(tok, c("interleukin", "1", "interleukin1", "production", "type", "4"))
  # without normalisation the one-digit token and the one-letter symbol are dropped
  expect_identical(go_tokenize("interleukin-1 \u03b1")[[1]], "interleukin")
  expect_identical(go_tokenize("interleukin-1 \u03b1", normalize = TRUE)[[1]],
                   c("interleukin", "1", "interleukin1", "alpha"))
  expect_error(go_tokenize("x", normalize = NA), "`normalize` must be TRUE or FALSE")
  expect_error(go_normalize_text(1), "`text` must be a character vector")
  # in the fit, sentences and definitions are normalised the same way
  d <- data.frame(go_id = c("GO:1", "GO:2"), name = c("a", "b"),
                  definition = c("upregulation of TNF-alpha", "type 2 interferon signalling"))
  s <- data.frame(document = "d", text = c("up-regulation of TNF-\u03b1", "type II interferon"))
  au <- data.frame(document = "d", author = "x")
  f <- ga0(s, au, d, normalize = TRUE, max_iter = 1, threads = 1, seed = 1)
  expect_true(f$normalize)
  expect_true(all(c("upregulation", "tnfalpha", "2") %in% f$vocabulary))
  expect_false("\u03b1" %in% f$vocabulary)
  expect_identical(f$assignment, c("GO:1", "GO:2"))
  p <- predict(f, data.frame(document = "n", text = "IFN type II"), top = 1, threads = 1)
  expect_identical(p$go_id, "GO:2")
  X <- Matrix::sparseMatrix(i = 1, j = 1, x = 1, dims = c(1, 1), dimnames = list(NULL, "a"))
  # count matrices are used as given
  fm <- ga0(X, au, d[1, ], documents = "d", normalize = TRUE, max_iter = 1, threads = 1)
  expect_true("a" %in% fm$vocabulary)
})

test_that("term names count as words of their terms with weight name_weight", {
  d <- data.frame(go_id = c("GO:1", "GO:2", "GO:3"),
                  name = c("astrocyte differentiation", "glial cell migration", NA),
                  definition = c("the process of becoming an astrocyte",
                                 "the movement of a glial cell", "a cell process"))
  s <- data.frame(document = "d", text = c("astrocyte differentiation", "migration"))
  au <- data.frame(document = "d", author = "x")
  f0 <- ga0(s, au, d, max_iter = 1, threads = 1, seed = 1)
  f3 <- ga0(s, au, d, max_iter = 1, threads = 1, seed = 1, name_weight = 2.5)
  expect_equal(f3$name_weight, 2.5)
  C0 <- coef(f0, type = "words")
  C3 <- coef(f3, type = "words")
  # definition counts (first E-step: no corpus counts yet) plus 2.5 per name token
  O0 <- as.matrix(C0)
  expect_equal(as.matrix(C3)["GO:1", "differentiation"], 2.5)
  expect_equal(as.matrix(C3)["GO:1", "astrocyte"], O0["GO:1", "astrocyte"] + 2.5)
  expect_equal(as.matrix(C3)["GO:2", "glial"], O0["GO:2", "glial"] + 2.5)
  # a missing name adds nothing (no GO id tokens)
  expect_equal(sum(C3["GO:3", ]), sum(C0["GO:3", ]))
  expect_false(any(c("go", "0000003") %in% f3$vocabulary))
  expect_equal(sum(C3), sum(C0) + 2.5 * 5)
  # names decide when the definition does not use the sentence's words
  expect_identical(f3$assignment[2], "GO:2")
  expect_error(ga0(s, au, d, name_weight = -1), "`name_weight` must be >= 0")
  expect_error(ga0(s, au, d, name_weight = "a"), "`name_weight` must be a single")
})

test_that("term synonyms count as words of their terms with weight synonym_weight", {
  d <- data.frame(go_id = c("GO:1", "GO:2"),
                  name = c("astrocyte differentiation", "glial cell migration"),
                  definition = c("the process of becoming an astrocyte",
                                 "the movement of a glial cell"),
                  synonyms = c("astrocyte cell differentiation | astrocytogenesis", NA))
  s <- data.frame(document = "d", text = c("astrocytogenesis", "glial migration"))
  au <- data.frame(document = "d", author = "x")
  f0 <- ga0(s, au, d, max_iter = 1, threads = 1, seed = 1, synonym_weight = 0)
  f2 <- ga0(s, au, d, max_iter = 1, threads = 1, seed = 1, synonym_weight = 2)
  expect_equal(f2$synonym_weight, 2)
  C0 <- as.matrix(coef(f0, type = "words"))
  C2 <- as.matrix(coef(f2, type = "words"))
  # definition counts plus 2 per synonym token; a missing synonym adds nothing
  expect_equal(C2["GO:1", "astrocytogenesis"], 2)
  expect_equal(C2["GO:1", "astrocyte"], C0["GO:1", "astrocyte"] + 2)
  expect_equal(C2["GO:1", "cell"], C0["GO:1", "cell"] + 2)
  expect_equal(sum(C2["GO:2", ]), sum(C0["GO:2", ]))
  expect_equal(sum(C2), sum(C0) + 2 * 4)
  expect_identical(f2$assignment[1], "GO:1")
  # the default weight 1; without a synonyms column the weight changes nothing
  expect_equal(go_annotator(s, au, d, max_iter = 1, threads = 1, seed = 1)$synonym_weight, 1)
  d_plain <- d[, c("go_id", "name", "definition")]
  expect_equal(ga0(s, au, d_plain, max_iter = 1, threads = 1, seed = 1, synonym_weight = 3)$objective,
               ga0(s, au, d_plain, max_iter = 1, threads = 1, seed = 1, synonym_weight = 0)$objective)
  expect_error(ga0(s, au, d, synonym_weight = -1), "`synonym_weight` must be >= 0")
  bad <- d
  bad$synonyms <- c(1, 2)
  expect_error(ga0(s, au, bad), "definitions\\$synonyms")
})
