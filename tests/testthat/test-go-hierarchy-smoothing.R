# Hierarchy smoothing: each term's definition counts gain `hierarchy_weight` times
# the mean of its direct parents' counts before the fit; the EM is unchanged.

go_tiny <- function() {
  ids <- sprintf("GO:%07d", 1:4)
  words <- c("cell", "division", "dna", "repair", "growth", "signal")
  O <- Matrix::sparseMatrix(i = c(1, 1, 2, 2, 3, 3, 4, 4, 4),
                            j = c(1, 5, 1, 2, 3, 4, 2, 4, 6),
                            x = c(2, 1, 1, 3, 2, 2, 1, 1, 2), dims = c(4, 6),
                            dimnames = list(ids, words))
  X <- Matrix::sparseMatrix(i = c(1, 1, 2, 3, 3, 4, 5, 5, 6),
                            j = c(1, 2, 4, 3, 6, 5, 2, 6, 1),
                            x = 1, dims = c(6, 6), dimnames = list(NULL, words))
  # GO:2 and GO:3 are children of GO:1; GO:4 has the two parents GO:2 and GO:3
  h <- data.frame(child = ids[c(2, 3, 4, 4)], parent = ids[c(1, 1, 2, 3)])
  list(ids = ids, O = O, X = X, h = h, docs = c("d1", "d1", "d2", "d2", "d3", "d3"),
       authors = data.frame(document = c("d1", "d2", "d3"), author = c("a", "a", "b")))
}

test_that("hierarchy smoothing equals fitting the smoothed definition counts", {
  g <- go_tiny()
  w <- 0.7
  O <- as.matrix(g$O)
  S <- O
  S[2, ] <- O[2, ] + w * O[1, ]
  S[3, ] <- O[3, ] + w * O[1, ]
  S[4, ] <- O[4, ] + w * (O[2, ] + O[3, ]) / 2
  fit_h <- go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy = g$h,
                        hierarchy_weight = w, max_iter = 6, tol = 0, threads = 1, seed = 1)
  fit_s <- go_annotator(g$X, g$authors, Matrix::Matrix(S, sparse = TRUE),
                        documents = g$docs, max_iter = 6, tol = 0, threads = 1, seed = 1)
  expect_equal(as.matrix(fitted(fit_h)), as.matrix(fitted(fit_s)), tolerance = 1e-12)
  expect_equal(fit_h$objective, fit_s$objective, tolerance = 1e-12)
  expect_identical(fit_h$hierarchy_weight, w)
  expect_output(print(fit_h), "smoothed over the hierarchy \\(hierarchy_weight 0.7\\)")
  # with a hierarchy the default weight is 0.3, without one 0
  fit_d <- go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy = g$h,
                        max_iter = 1, threads = 1, seed = 1)
  expect_identical(fit_d$hierarchy_weight, 0.3)
  expect_identical(go_annotator(g$X, g$authors, g$O, documents = g$docs, max_iter = 1,
                                threads = 1, seed = 1)$hierarchy_weight, 0)
  # the smoothing changes the fit (the test would not pass with the weight ignored)
  fit_0 <- go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy = g$h,
                        max_iter = 6, tol = 0, threads = 1, seed = 1)
  expect_gt(max(abs(as.matrix(fitted(fit_0)) - as.matrix(fitted(fit_h)))), 1e-3)
})

test_that("hierarchy smoothing checks its arguments", {
  g <- go_tiny()
  expect_error(go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy_weight = 1),
               "`hierarchy_weight` > 0 needs a `hierarchy`")
  expect_error(go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy = g$h,
                            hierarchy_weight = -1), "`hierarchy_weight` must be >= 0")
  expect_error(go_annotator(g$X, g$authors, g$O, documents = g$docs, hierarchy = g$h,
                            hierarchy_weight = NA), "`hierarchy_weight` must be a single")
})
